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
export { playGroups } from './operators/play-groups.js';
export { toEpisode } from './operators/to-episode.js';

export { ProposeSolveArena, proposedTask } from './propose-solve.js';
export { GameArena, moveCode, type GameObservation } from './game.js';
export { JudgeArena } from './judge.js';
export { AdversarialCriticArena } from './critic.js';
export { PeerArena } from './peer.js';
export { MemoryDialogueArena } from './memory-dialogue.js';

/** Arena kinds by the name configs use; each factory checks its own options, and the family's own list of arenas (a dialogue is for the memory arena alone) is checked for all. */
export const ARENA_KINDS: Record<string, ArenaFactory> = {
  solve: (options) => (arenaOptions('solve', options, {}, {}), new SolveArena()),
  'propose-solve': (options, family) => new ProposeSolveArena(options, family),
  game: (options) => new GameArena(options),
  judge: (options, family) => new JudgeArena(options, family),
  'adversarial-critic': (options, family) => new AdversarialCriticArena(options, family),
  peer: (options, family) => new PeerArena(options, family),
  'memory-dialogue': (options, family) => new MemoryDialogueArena(options, family),
};
for (const [kind, make] of Object.entries(ARENA_KINDS)) {
  ARENA_KINDS[kind] = (options, family) => {
    if (family.arenas && !family.arenas.includes(kind)) throw new Error(`arena '${kind}' does not serve task family '${family.name}': its tasks are for ${family.arenas.join(', ')}`);
    return make(options, family);
  };
}
