import { map, toArray, type OperatorFunction } from 'rxjs';
import type { Episode, Task, Turn } from '../../src/core/types.js';

/**
 * Collects an episode's turns, in the order they were emitted, into one Episode record,
 * numbering them.
 *
 * @example
 * of(turnA, turnB).pipe(toEpisode('ep-1', 'task-7', task)).subscribe((e) => e.turns.length === 2);
 */
export function toEpisode(id: string, group: string, task: Task): OperatorFunction<Turn, Episode> {
  return (turns) =>
    turns.pipe(
      toArray(),
      map((list) => ({ id, group, task, turns: list.map((t, index) => ({ ...t, index })) })),
    );
}
