import { map, toArray, type OperatorFunction } from 'rxjs';
import type { Episode, Task, Turn } from '../types.js';
import type { EpisodeEnd } from '../arena.js';

/**
 * Collects an episode's turns, in the order they were emitted, into one Episode record,
 * numbering them; an arena's EpisodeEnd gives the record its outcome and info.
 *
 * @example
 * of(turnA, turnB).pipe(toEpisode('ep-1', 'task-7', task)).subscribe((e) => e.turns.length === 2);
 */
export function toEpisode(id: string, group: string, task: Task): OperatorFunction<Turn | EpisodeEnd, Episode> {
  return (items) =>
    items.pipe(
      toArray(),
      map((list) => {
        const turns = list.filter((x): x is Turn => !('end' in x)).map((t, index) => ({ ...t, index }));
        const end = list.find((x): x is EpisodeEnd => 'end' in x);
        const episode: Episode = { id, group, task, turns };
        if (end?.outcome) episode.outcome = end.outcome;
        if (end?.info) episode.info = end.info;
        return episode;
      }),
    );
}
