import type { Observable } from 'rxjs';
import { z } from 'zod';
import { fromRun } from '../src/core/operators/from-run.js';
import { invalid } from '../src/core/role.js';
import type { TaskFamily } from '../src/core/task-family.js';
import type { Episode, Task, Turn } from '../src/core/types.js';
import { sumOperands } from '../src/tasks/scratchpad.js';
import type { Arena, ArenaContext, EpisodeEnd } from '../src/core/arena.js';
import { arenaOptions, positiveInt } from './options.js';

export const FlowOptionsSchema = z.strictObject({
  maxTurns: positiveInt().default(3), // planner turns at most; the verifier ends the flow sooner once the steps suffice
  credit: z.enum(['all', 'final']).default('all'), // who is paid the outcome: every planner turn (Flow-GRPO's broadcast), or the final one alone (the ablation)
});
export type FlowOptions = z.output<typeof FlowOptionsSchema>;

/**
 * A flow of four modules over one shared memory (AgentFlow): the memory is a numbered list of
 * entries, first the query's numbers (`0:12|1:34|2:56`). Each turn the planner, shown the
 * memory, picks the tool's arguments by reference: two entry indices, `0+2`; the executor (a
 * tool: exact integer addition of the two entries named, refusing an index the memory does not
 * hold) appends a new entry recording the call and its result, `3:0+2=68`; the verifier (a
 * rule) ends the flow once the memory holds as many steps as the query has additions, else the
 * planner goes on, up to `maxTurns`. Then the generator (a rule) answers with the last entry's
 * number. Only the planner is a model; the other three are deterministic, so they never train.
 * The planner never copies a number: a step is right when it names two different entries that
 * no step has used yet, so a random planner's flow is right often enough for GRPO's groups to
 * differ (a sum of three: 2/3 for the first step times 1/8 for the second).
 *
 * The outcome, whether the answer is right, is the whole trajectory's: every planner turn is
 * paid it (`credit: all`, each turn marked `broadcast`, so its group advantage counts the
 * trajectory once: Flow-GRPO's `A_i = (R(τ_i) − mean_k R(τ_k)) / std_k R(τ_k)` over the
 * groupSize trajectories of one query, each turn a single-turn update), or only the final
 * planner turn is (`credit: final`: the others' outcome is null, so the `outcome` judge
 * abstains on them). Comparison group: the planner turns of the G episodes on one query.
 */
export class FlowArena implements Arena {
  readonly kind = 'flow';
  readonly roles = { planner: 'planner' };
  readonly progress = ['flow/accuracy'];
  readonly options: FlowOptions;

  constructor(
    options: unknown,
    private readonly family: TaskFamily<unknown>,
  ) {
    this.options = arenaOptions(FlowOptionsSchema, options);
    if (family.name !== 'arithmetic')
      throw new Error(`arena 'flow' does not serve task family '${family.name}': it needs sums (family 'arithmetic')`);
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    const operands = querySum(task);
    const memory = operands.map(String);
    const turns: Turn[] = [];
    while (turns.length < this.options.maxTurns && memory.length < 2 * operands.length - 1) {
      const turn = await ctx.act('planner', { task, memory: [...memory] }, { compare: 'group' });
      turn.broadcast = true;
      turns.push(turn);
      const step = execute(turn, memory);
      if ('error' in step) turn.action = invalid(step.error);
      else memory.push(step.entry);
    }
    const steps = memory.length - operands.length;
    const answer = steps ? String(entryValue(memory[memory.length - 1])) : '';
    const right = answer !== '' && this.family.verify(task, answer) ? 1 : 0;
    if (this.options.credit === 'final') turns.slice(0, -1).forEach((t) => (t.outcome = null));
    turns.forEach(emit);
    emit({ end: true, outcome: { planner: right }, info: { memory, answer, steps } });
  }

  /** The longest memory the planner is shown: the query's numbers and one step fewer than it needs, of the widest numbers (a sum one digit wider). */
  observations(task: Task): Array<{ role: string; observation: { task: Task; memory: string[] } }> {
    const operands = querySum(task);
    const n = String(operands.reduce((s, x) => s + 10 ** String(x).length - 1, 0));
    const steps = Array.from(
      { length: Math.min(operands.length - 2, this.options.maxTurns - 1) },
      (_, i) => `${operands.length - 2 + i}+${operands.length - 1 + i}=${n}`,
    );
    return [{ role: 'planner', observation: { task, memory: [...operands.map(String), ...steps] } }];
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    return flowMetrics(episodes);
  }
}

/** The query's operands; a task that is not a sum is an error naming it. */
function querySum(task: Task): number[] {
  const operands = sumOperands(task.prompt);
  if (!operands || operands.length < 2)
    throw new Error(
      `arena 'flow': task ${task.id} is not a sum of two or more numbers: ${JSON.stringify(task.prompt)}`,
    );
  return operands;
}

/** An entry's number: the query's number, or the result of the step it records (`0+2=68`). */
export const entryValue = (entry: string) => Number(entry.split('=').at(-1));

/** The entries a step entry used (`0+2=68`: 0 and 2); none for a query number. */
export const entryArgs = (entry: string) => (entry.includes('=') ? entry.split('=')[0].split('+').map(Number) : []);

/** The executor: the two entries the planner's `i+j` names, added exactly (read, never evaluated), as the new entry; or why it cannot run. */
function execute(turn: Turn, memory: readonly string[]): { entry: string } | { error: string } {
  if (!turn.action.valid || turn.action.value === null) return { error: turn.action.error ?? 'no step' };
  const [i, j] = turn.action.value.split('+').map(Number);
  if (i >= memory.length || j >= memory.length)
    return { error: `executor: the memory holds entries 0 to ${memory.length - 1}, got ${turn.action.value}` };
  return { entry: `${i}+${j}=${entryValue(memory[i]) + entryValue(memory[j])}` };
}

/**
 * Whether each step of a memory is right: two different entries that no earlier step used
 * (so the flow adds each of the query's numbers once). The query's `n` numbers come first.
 */
export function rightSteps(memory: readonly string[], n: number): boolean[] {
  const used = new Set<number>();
  return memory.slice(n).map((entry) => {
    const [i, j] = entryArgs(entry);
    const ok = i !== j && !used.has(i) && !used.has(j);
    used.add(i).add(j);
    return ok;
  });
}

/**
 * `flow/accuracy` (right answers), `flow/valid_rate` (planner turns the executor ran),
 * `flow/turns` (planner turns per episode), `flow/first_step` (episodes whose first step adds
 * two different entries) and `flow/second_step` (of those with a right first step and a second,
 * the share whose second is right too: two entries not used yet).
 */
export function flowMetrics(episodes: readonly Episode[]): Record<string, number> {
  const flows = episodes.filter((e) => e.turns.some((t) => t.role === 'planner'));
  if (!flows.length) return {};
  const planner = flows.flatMap((e) => e.turns.filter((t) => t.role === 'planner'));
  const first: number[] = [];
  const second: number[] = [];
  for (const e of flows) {
    const memory = (e.info?.memory as string[] | undefined) ?? [];
    const right = rightSteps(memory, sumOperands(e.task.prompt)!.length);
    first.push(right[0] ? 1 : 0);
    if (right[0] && right.length > 1) second.push(right[1] ? 1 : 0);
  }
  return {
    'flow/accuracy': mean(flows.map((e) => e.outcome?.planner ?? 0)),
    'flow/valid_rate': mean(planner.map((t) => (t.action.valid ? 1 : 0))),
    'flow/turns': planner.length / flows.length,
    'flow/first_step': mean(first),
    ...(second.length ? { 'flow/second_step': mean(second) } : {}),
  };
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
