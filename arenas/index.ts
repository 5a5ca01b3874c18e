import { SolveArena } from './solve.js';
import type { Arena } from './types.js';

export * from './types.js';
export { Agents, type AgentBinding } from './agents.js';
export { playGroups } from './operators/play-groups.js';
export { toEpisode } from './operators/to-episode.js';

/** Arena kinds by the name configs use. */
export const ARENA_KINDS: Record<string, () => Arena> = {
  solve: () => new SolveArena(),
};
