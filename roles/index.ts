/** The built-in roles (their kinds are listed in src/registry.ts). */
export * from '../src/core/role.js';
export { SolverRole } from '../src/core/solver.js';
export { PlayerRole } from './player.js';
export { CriticRole, JudgeRole, ProposerRole, SneakyRole } from './others.js';
export { AnswerRole, MemoryManagerRole, memoryOp } from './memory.js';
export { ObserverRole } from './observer.js';
