import { defer, from, merge, mergeMap, of, type Observable } from 'rxjs';
import type { Episode, Task, Turn } from '../src/core/types.js';
import type { TaskFamily } from '../src/core/task-family.js';
import { invalid } from '../src/core/role.js';
import { bigramEntropy } from '../src/util/bigram.js';
import { topCellShare } from '../src/util/cells.js';
import { z } from 'zod';
import { arenaOptions, positiveInt } from './options.js';
import type { Arena, ArenaContext } from '../src/core/arena.js';

export const ProposeSolveOptionsSchema = z.strictObject({
  attempts: positiveInt().default(8), // solver attempts at each proposed task (its comparison group)
  limits: z.record(z.string(), z.unknown()).default({}), // bounds a proposal must stay within, as a difficulty of the family (e.g. digits, operands), checked by the family
});
export type ProposeSolveOptions = z.output<typeof ProposeSolveOptionsSchema>;

/**
 * Self-play in one episode: the proposer writes a task in the family's grammar; the
 * environment checks it (it parses, stays within `limits`, is not a recent task) and
 * computes its answer with the family's own evaluator, never by evaluating model text;
 * then the solver attempts it `attempts` times. An invalid proposal ends the episode with
 * the proposer's turn marked invalid (its error says why), so a judge gives it its penalty.
 * A seed task that already has a prompt (a replayed task) is solved directly.
 *
 * Comparison groups: the proposals of the G episodes on one seed; the attempts at one task.
 */
export class ProposeSolveArena implements Arena {
  readonly kind = 'propose-solve';
  readonly roles = { proposer: 'proposer', solver: 'solver' };
  readonly seedsTasks = true; // the proposer writes on the seeds
  readonly progress = ['proposals/digits'];
  readonly options: ProposeSolveOptions;
  private readonly limits: unknown;

  constructor(
    options: unknown,
    private readonly family: TaskFamily<unknown>,
  ) {
    this.options = arenaOptions(ProposeSolveOptionsSchema, options);
    if (!family.parseProposal || !family.measure)
      throw new Error(
        `arena 'propose-solve': task family '${family.name}' cannot read proposals (no parseProposal/measure)`,
      );
    this.limits = family.validate(this.options.limits, 'arena.options.limits');
  }

  play(seed: Task, ctx: ArenaContext): Observable<Turn> {
    if (seed.prompt !== '') return this.solve(seed, ctx);
    return defer(() => ctx.act('proposer', { task: seed })).pipe(
      mergeMap((turn) => {
        const checked = this.check(turn, ctx);
        if ('error' in checked) return of({ ...turn, action: invalid(checked.error) });
        return merge(of(turn), this.solve({ ...checked.task, id: `${seed.id}/task` }, ctx));
      }),
    );
  }

  /** The proposal as a task of the family, or why it is not one. */
  private check(turn: Turn, ctx: ArenaContext): { task: Task } | { error: string } {
    if (!turn.action.valid || turn.action.value === null) return { error: turn.action.error ?? 'no proposal' };
    const parsed = this.family.parseProposal!(turn.action.value, this.limits);
    if ('error' in parsed) return parsed;
    if (ctx.isRecent?.(parsed.task.prompt)) return { error: `duplicate of a recent task: ${parsed.task.prompt}` };
    return parsed;
  }

  private solve(task: Task, ctx: ArenaContext): Observable<Turn> {
    const attempts = Array.from({ length: this.options.attempts }, () => task);
    return from(attempts).pipe(mergeMap((t) => ctx.act('solver', { task: t }, { compare: 'episode', task: t })));
  }

  /** What the proposer did this iteration: validity, difficulty, diversity, the solver's success on it. */
  metrics(episodes: readonly Episode[]): Record<string, number> {
    return proposalMetrics(episodes, this.family);
  }
}

/** The proposed task of an episode (the one its solver turns attempted), if the proposal was valid. */
export function proposedTask(e: Episode): Task | undefined {
  return e.turns.find((t) => t.role === 'solver' && t.task)?.task;
}

function proposalMetrics(episodes: readonly Episode[], family: TaskFamily<unknown>): Record<string, number> {
  const proposals = episodes.filter((e) => e.turns.some((t) => t.role === 'proposer'));
  if (proposals.length === 0) return {};
  const tasks = proposals.map(proposedTask).filter((t): t is Task => t !== undefined);
  const m: Record<string, number> = { 'proposals/valid_rate': tasks.length / proposals.length };
  if (tasks.length === 0) return m;
  const measures = tasks.map((t) => family.measure!(t));
  for (const key of Object.keys(measures[0])) m[`proposals/${key}`] = mean(measures.map((x) => x[key]));
  const prompts = tasks.map((t) => t.prompt);
  m['proposals/distinct'] = new Set(prompts).size / prompts.length;
  m['proposals/cells'] = new Set(measures.map((x) => JSON.stringify(x))).size;
  m['proposals/top_cell_share'] = topCellShare(measures);
  m['proposals/bigram_entropy'] = bigramEntropy(prompts);
  const success = proposals.flatMap((e) => {
    const task = proposedTask(e);
    const solver = e.turns.filter((t) => t.role === 'solver');
    return task && solver.length
      ? [mean(solver.map((t) => (family.verify(task, t.text) && t.action.valid ? 1 : 0)))]
      : [];
  });
  m['proposals/solver_success'] = mean(success);
  m['proposals/learnable'] = mean(success.map((p) => (p > 0 && p < 1 ? 1 : 0)));
  return m;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export { bigramEntropy } from '../src/util/bigram.js';
