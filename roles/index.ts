import { AnswerRole, MemoryManagerRole } from './memory.js';
import { CriticRole, JudgeRole, ProposerRole, SneakyRole } from './others.js';
import { PlayerRole } from './player.js';
import { SolverRole } from '../src/core/solver.js';
import type { AnswerParser, Role } from '../src/core/role.js';

export * from '../src/core/role.js';
export { SolverRole } from '../src/core/solver.js';
export { PlayerRole } from './player.js';
export { CriticRole, JudgeRole, ProposerRole, SneakyRole } from './others.js';
export { AnswerRole, MemoryManagerRole, memoryOp } from './memory.js';

/** Role kinds by the name configs use; each factory gets the task family's answer parser. */
export const ROLE_KINDS: Record<string, (parseAnswer: AnswerParser) => Role> = {
  solver: (parseAnswer) => new SolverRole(parseAnswer),
  proposer: () => new ProposerRole(),
  critic: () => new CriticRole(),
  sneaky: (parseAnswer) => new SneakyRole(parseAnswer),
  judge: () => new JudgeRole(),
  memory: () => new MemoryManagerRole(),
  answer: () => new AnswerRole(),
  player: () => new PlayerRole(),
};
