/** The built-in arenas (their kinds are listed in src/registry.ts). */
export * from '../src/core/arena.js';
export { Agents, type AgentBinding } from '../src/core/agents.js';
export { playGroups, playMembers } from '../src/core/operators/play-groups.js';
export { toEpisode } from '../src/core/operators/to-episode.js';

export { ProposeSolveArena, proposedTask } from './propose-solve.js';
export { GameArena, moveCode, type GameObservation } from './game.js';
export { JudgeArena } from './judge/index.js';
export { AdversarialCriticArena } from './critic/index.js';
export { PeerArena } from './peer.js';
export { MemoryDialogueArena } from './memory-dialogue.js';
export { FlowArena } from './flow.js';
export { ObserverArena } from './observer/index.js';
export { FiveRolesArena } from './five-roles/index.js';
