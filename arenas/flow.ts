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
 * A flow of four modules over one shared memory (AgentFlow): each turn the planner, shown
 * the memory (the query, then every step done), names one addition `a+b`; the executor (a
 * tool: exact integer addition of the numbers named, refusing numbers longer than the
 * query's sum can be) writes `a+b=s` to the memory; the verifier (a rule) ends the flow once
 * the memory holds as many steps as the query has additions, else the planner goes on, up to
 * `maxTurns`. Then the generator (a rule) answers with the last step's result. Only the
 * planner is a model; the other three are deterministic, so they never train.
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
    const memory = [task.prompt.slice(0, -1)];
    const widest = widestOf(operands);
    const turns: Turn[] = [];
    const results: number[] = [];
    while (turns.length < this.options.maxTurns && results.length < operands.length - 1) {
      const turn = await ctx.act('planner', { task, memory: [...memory] }, { compare: 'group' });
      turn.broadcast = true;
      turns.push(turn);
      const step = execute(turn, widest);
      if ('error' in step) turn.action = invalid(step.error);
      else {
        results.push(step.sum);
        memory.push(step.line);
      }
    }
    const answer = results.length ? String(results[results.length - 1]) : '';
    const right = answer !== '' && this.family.verify(task, answer) ? 1 : 0;
    if (this.options.credit === 'final') turns.slice(0, -1).forEach((t) => (t.outcome = null));
    turns.forEach(emit);
    emit({ end: true, outcome: { planner: right }, info: { memory, answer, steps: results.length } });
  }

  /** The longest memory the planner is shown: the query and one step fewer than it needs, of the widest numbers (a sum one digit wider). */
  observations(task: Task): Array<{ role: string; observation: { task: Task; memory: string[] } }> {
    const operands = querySum(task);
    const n = '9'.repeat(widestOf(operands));
    const steps = Array.from(
      { length: Math.min(operands.length - 2, this.options.maxTurns - 1) },
      () => `${n}+${n}=1${n}`,
    );
    return [{ role: 'planner', observation: { task, memory: [task.prompt.slice(0, -1), ...steps] } }];
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

/** The most digits a number of a step may have: those of the query's sum with every digit of its numbers a 9. */
const widestOf = (operands: readonly number[]) =>
  String(operands.reduce((s, x) => s + 10 ** String(x).length - 1, 0)).length;

/** The executor: the planner's `a+b` added exactly (read, never evaluated), or why it cannot run. */
function execute(turn: Turn, widest: number): { sum: number; line: string } | { error: string } {
  if (!turn.action.valid || turn.action.value === null) return { error: turn.action.error ?? 'no step' };
  const [a, b] = turn.action.value.split('+');
  if (a.length > widest || b.length > widest)
    return { error: `executor: numbers of at most ${widest} digits, got ${turn.action.value}` };
  const sum = Number(a) + Number(b);
  return { sum, line: `${Number(a)}+${Number(b)}=${sum}` };
}

/**
 * `flow/accuracy` (right answers), `flow/valid_rate` (planner turns the executor ran),
 * `flow/turns` (planner turns per episode), `flow/first_step` (episodes whose first step adds
 * two of the query's numbers) and `flow/second_step` (of those with a second step, the share
 * that adds the first step's result to a query number the first did not use).
 */
export function flowMetrics(episodes: readonly Episode[]): Record<string, number> {
  const flows = episodes.filter((e) => e.turns.some((t) => t.role === 'planner'));
  if (!flows.length) return {};
  const planner = flows.flatMap((e) => e.turns.filter((t) => t.role === 'planner'));
  const first: number[] = [];
  const second: number[] = [];
  for (const e of flows) {
    const steps = ((e.info?.memory as string[] | undefined) ?? []).slice(1);
    const left = steps.length ? remove(sumOperands(e.task.prompt)!, stepOperands(steps[0])) : null;
    first.push(left ? 1 : 0);
    if (!left || steps.length < 2) continue;
    const rest = remove(stepOperands(steps[1]), [Number(steps[0].split('=')[1])]);
    second.push(rest && rest.length === 1 && left.includes(rest[0]) ? 1 : 0);
  }
  return {
    'flow/accuracy': mean(flows.map((e) => e.outcome?.planner ?? 0)),
    'flow/valid_rate': mean(planner.map((t) => (t.action.valid ? 1 : 0))),
    'flow/turns': planner.length / flows.length,
    'flow/first_step': mean(first),
    ...(second.length ? { 'flow/second_step': mean(second) } : {}),
  };
}

const stepOperands = (line: string) => line.split('=')[0].split('+').map(Number);
/** `xs` with each of `drop` taken out once; null when one is missing. */
function remove(xs: readonly number[], drop: readonly number[]): number[] | null {
  const left = [...xs];
  for (const d of drop) {
    const i = left.indexOf(d);
    if (i < 0) return null;
    left.splice(i, 1);
  }
  return left;
}
const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
