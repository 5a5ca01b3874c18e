import type { Observable } from 'rxjs';
import { fromRun } from '../src/core/operators/from-run.js';
import type { Episode, Task, Turn } from '../src/core/types.js';
import type { TaskFamily } from '../src/core/task-family.js';
import { peerDiagnostics } from '../judges/peer.js';
import { z } from 'zod';
import { arenaOptions, positiveInt } from './options.js';
import type { Arena, ArenaContext } from '../src/core/arena.js';

export const PeerArenaOptionsSchema = z.strictObject({
  // how many agents; agent i answers as role `peer<i>` and judges as `peer<i>-judge` (bind both to its model)
  peers: z.number().int().min(2, 'from 2 to 8 (each answer needs another agent to judge it)').max(8).default(3),
  answers: positiveInt().default(2), // answers per agent and task (an agent's answers compare within the episode)
});
export type PeerArenaOptions = z.output<typeof PeerArenaOptionsSchema>;

/**
 * Peer judgement (Co-RL, CoMAS): several agents, usually on separate models, answer the
 * task; each valid answer is judged pointwise ('y' or 'n', the judge role's format) once by
 * every other agent, never by its author; the `peer` judge pays each answer the share of
 * 'y' it got. No label reaches a reward: the verifier's truth is filed on each verdict's task
 * (its answer: 'y' or 'n') only for metrics, or for a `verdict` judge a config may add.
 * Collapse diagnostics (RLER's warning) are the metrics: `peer/accuracy` (the verifier's
 * view of the answers), `peer/reward_truth_corr` (does peer reward follow correctness?),
 * `peer/agreement` (verdict pairs on one answer that agree), `peer/judge_accuracy`,
 * `peer/yes_rate`, and each agent's own `peer/<i>/accuracy`.
 */
export class PeerArena implements Arena {
  readonly kind = 'peer';
  readonly roles: Record<string, string>;
  readonly options: PeerArenaOptions;

  constructor(
    options: unknown,
    private readonly family: TaskFamily<unknown>,
  ) {
    this.options = arenaOptions(PeerArenaOptionsSchema, options);
    this.roles = {};
    for (let i = 0; i < this.options.peers; i++)
      Object.assign(this.roles, { [`peer${i}`]: 'solver', [`peer${i}-judge`]: 'judge' });
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (t: Turn) => void): Promise<void> {
    const { peers, answers } = this.options;
    const asked = Array.from({ length: peers }, (_, i) =>
      Array.from({ length: answers }, (_, k) => ({ author: i, id: `${task.id}/peer${i}/${k}` })),
    );
    const written = await Promise.all(
      asked.flat().map(async (a) => ({
        ...a,
        turn: await ctx.act(`peer${a.author}`, { task }, { compare: 'episode', task: { ...task, id: a.id } }),
      })),
    );
    written.forEach((a) => emit(a.turn));
    const verdicts = written
      .filter((a) => a.turn.action.valid)
      .flatMap((a) => {
        const truth = this.family.verify(task, a.turn.text) ? 'y' : 'n';
        const judged: Task = { id: a.id, family: task.family, prompt: task.prompt, answer: truth };
        return Array.from({ length: peers }, (_, j) => j)
          .filter((j) => j !== a.author)
          .map((j) => ctx.act(`peer${j}-judge`, { task, answers: [a.turn.text] }, { compare: 'batch', task: judged }));
      });
    (await Promise.all(verdicts)).forEach(emit);
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    const answering = new Set(Array.from({ length: this.options.peers }, (_, i) => `peer${i}`));
    const truth = (t: Turn, e: Episode) => this.family.verify(e.task, t.text);
    const m = Object.fromEntries(
      Object.entries(peerDiagnostics(episodes, answering, truth)).map(([k, v]) => [`peer/${k}`, v]),
    );
    for (const id of answering) {
      const own = episodes.flatMap((e) =>
        e.turns.filter((t) => t.role === id).map((t): number => (t.action.valid && truth(t, e) ? 1 : 0)),
      );
      if (own.length) m[`peer/${id.slice(4)}/accuracy`] = own.reduce((a, b) => a + b, 0) / own.length;
    }
    return m;
  }
}
