import { AdversarialCriticArena } from './critic/index.js';
import { GameArena } from './game.js';
import { PeerArena } from './peer.js';
import { JudgeArena } from './judge/index.js';
import { MemoryDialogueArena } from './memory-dialogue.js';
import { z } from 'zod';
import { ProposeSolveArena } from './propose-solve.js';
import { SolveArena } from '../src/core/solve.js';
import { kindOf } from '../src/config/kind.js';
import { CriticArenaOptionsSchema } from './critic/index.js';
import { GameArenaOptionsSchema } from './game.js';
import { JudgeArenaOptionsSchema } from './judge/index.js';
import { MemoryDialogueOptionsSchema } from './memory-dialogue.js';
import { PeerArenaOptionsSchema } from './peer.js';
import { ProposeSolveOptionsSchema } from './propose-solve.js';
import { parseOptions } from '../src/config/issues.js';
import type { TaskFamily } from '../src/tasks/types.js';
import type { Arena, ArenaFactory, ArenaKind } from '../src/core/arena.js';

const kind = kindOf<ArenaFactory>();

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

/** Builds the built-in arena `name` from raw options, parsed as `arena.options` (what the resolver does, for code and tests). */
export function makeArena(name: string, options: unknown, family: TaskFamily<unknown>): Arena {
  if (!Object.hasOwn(ARENA_KINDS, name))
    throw new Error(`unknown arena '${name}'; known: ${Object.keys(ARENA_KINDS).sort().join(', ')}`);
  const k = ARENA_KINDS[name];
  return k.make(parseOptions(k.options, options, 'arena.options'), family);
}

/** Arena kinds by the name configs use, each with its options' schema (the resolver parses `arena.options` with it, and checks the family's own list of arenas for every kind, plugins' included). */
export const ARENA_KINDS: Record<string, ArenaKind> = {
  solve: kind(z.strictObject({}), () => new SolveArena()),
  'propose-solve': kind(ProposeSolveOptionsSchema, (options, family) => new ProposeSolveArena(options, family)),
  game: kind(GameArenaOptionsSchema, (options) => new GameArena(options)),
  judge: kind(JudgeArenaOptionsSchema, (options, family) => new JudgeArena(options, family)),
  'adversarial-critic': kind(
    CriticArenaOptionsSchema,
    (options, family) => new AdversarialCriticArena(options, family),
  ),
  peer: kind(PeerArenaOptionsSchema, (options, family) => new PeerArena(options, family)),
  'memory-dialogue': kind(MemoryDialogueOptionsSchema, (options, family) => new MemoryDialogueArena(options, family)),
};
