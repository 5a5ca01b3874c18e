/** The built-in task families and their helpers (the families by name are listed in src/registry.ts). */

export type { ParsedAnswer, TaskFamily } from '../core/task-family.js';
export { arithmetic, evaluateArithmetic, parseIntegerAnswer, type ArithmeticDifficulty } from './arithmetic.js';
export { strings, parseStringAnswer, type StringOp, type StringsDifficulty } from './strings.js';
export { disjointSplit, generateTasks, readTasksJsonl, writeTasksJsonl, type TaskSplit } from './jsonl.js';
