import { catchError, EMPTY, from, map, mergeMap, throwError, type Observable } from 'rxjs';
import type { Episode, Task } from '../types.js';
import type { Arena, ArenaContext } from '../arena.js';
import { toEpisode } from './to-episode.js';

/**
 * Plays `groupSize` episodes of `arena` on every task, all in flight at once so that the
 * batching servers see every request together. Emits each episode when it ends (not in
 * task order); episode ids are `${task.id}#${g}`, the group is the task id and `member` is g.
 *
 * `ctx` is every episode's context, or each one's by its place k among the n played (an
 * episode whose roles are bound apart: a learner against a snapshot from a pool).
 *
 * An episode whose stream errors is dropped when `dropped(error, task)` says so (an endpoint
 * that went down: the caller counts it) and otherwise fails the whole batch (a bug).
 *
 * @example
 * playGroups(new SolveArena(), tasks, 8, agents).pipe(toArray()).subscribe(console.log);
 */
export function playGroups(
  arena: Arena,
  tasks: readonly Task[],
  groupSize: number,
  ctx: ArenaContext | ((k: number, n: number) => ArenaContext),
  dropped: (error: unknown, task: Task) => boolean = () => false,
): Observable<Episode> {
  return playMembers(
    arena,
    tasks.flatMap((task) => Array.from({ length: groupSize }, (_, g) => ({ task, g }))),
    ctx,
    dropped,
  );
}

/** Plays the given members of groups (member g of the group of `task`): a share of an iteration's groups (a rollout job). */
export function playMembers(
  arena: Arena,
  jobs: ReadonlyArray<{ task: Task; g: number }>,
  ctx: ArenaContext | ((k: number, n: number) => ArenaContext),
  dropped: (error: unknown, task: Task) => boolean = () => false,
): Observable<Episode> {
  // contexts are made in job order, before any episode starts
  const contexts = jobs.map((_, k) => (typeof ctx === 'function' ? ctx(k, jobs.length) : ctx));
  return from(jobs.map((job, k) => ({ ...job, k }))).pipe(
    mergeMap(({ task, g, k }) =>
      arena.play(task, contexts[k]).pipe(
        toEpisode(`${task.id}#${g}`, task.id, task),
        map((e) => ({ ...e, member: g })),
        catchError((error: unknown) => (dropped(error, task) ? EMPTY : throwError(() => error))),
      ),
    ),
  );
}
