import type { Episode, Task, Turn } from './types.js';

/**
 * The id of a turn's comparison group: the turns its advantage is computed against and a
 * group judge (a majority vote, a group-normalised score) pools. Same role always; the scope
 * the arena named decides how far the group reaches.
 */
export function comparisonGroup(episode: Episode, turn: Turn): string {
  const scope = turn.compare ?? 'group';
  const where =
    scope === 'episode'
      ? `ep:${episode.id}`
      : scope === 'batch'
        ? 'batch'
        : scope === 'group'
          ? `g:${episode.group}`
          : scope.startsWith('batch:')
            ? scope
            : `ep:${episode.id}:${scope.slice('episode:'.length)}`;
  return `${where}/${turn.role}`;
}

/** The task a turn acted on: its own (a proposed task) or the episode's. */
export function taskOf(episode: Episode, turn: Turn): Task {
  return turn.task ?? episode.task;
}
