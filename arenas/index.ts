import { AdversarialCriticArena } from './critic.js';
import { GameArena } from './game.js';
import { PeerArena } from './peer.js';
import { JudgeArena } from './judge.js';
import { MemoryDialogueArena } from './memory-dialogue.js';
import { arenaOptions } from './options.js';
import { ProposeSolveArena } from './propose-solve.js';
import { SolveArena } from './solve.js';
import type { ArenaFactory } from './types.js';

export * from './types.js';
export { Agents, type AgentBinding } from './agents.js';
export { playGroups, playMembers } from './operators/play-groups.js';
export { toEpisode } from './operators/to-episode.js';

export { ProposeSolveArena, proposedTask } from './propose-solve.js';
export { GameArena, moveCode, type GameObservation } from './game.js';
export { JudgeArena } from './judge.js';
export { AdversarialCriticArena } from './critic.js';
export { PeerArena } from './peer.js';
export { MemoryDialogueArena } from './memory-dialogue.js';

/** Arena kinds by the name configs use; each factory checks its own options (the resolver checks the family's own list of arenas for every kind, plugins' included). */
export const ARENA_KINDS: Record<string, ArenaFactory> = {
  solve: (options) => (arenaOptions('solve', options, {}, {}), new SolveArena()),
  'propose-solve': (options, family) => new ProposeSolveArena(options, family),
  game: (options) => new GameArena(options),
  judge: (options, family) => new JudgeArena(options, family),
  'adversarial-critic': (options, family) => new AdversarialCriticArena(options, family),
  peer: (options, family) => new PeerArena(options, family),
  'memory-dialogue': (options, family) => new MemoryDialogueArena(options, family),
};
