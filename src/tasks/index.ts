/**
 * The task-family registry: config files name a family ('arithmetic', 'strings') and this
 * maps the name to its generator and verifier.
 */
import { arithmetic } from './arithmetic.js';
import { dialogue } from './dialogue.js';
import { strings } from './strings.js';
import type { TaskFamily } from './types.js';

export type { ParsedAnswer, TaskFamily } from './types.js';
export { arithmetic, evaluateArithmetic, parseIntegerAnswer, type ArithmeticDifficulty } from './arithmetic.js';
export { strings, parseStringAnswer, type StringOp, type StringsDifficulty } from './strings.js';
export { disjointSplit, generateTasks, readTasksJsonl, writeTasksJsonl, type TaskSplit } from './jsonl.js';

/**
 * Every built-in task family, by name. `any` because each family has its own difficulty
 * type; callers reach it through `validate`, which takes unknown.
 */
export const TASK_FAMILIES: Record<string, TaskFamily<any>> = { arithmetic, strings, dialogue };

/** The family called `name`; throws listing the known names otherwise. */
export function taskFamily(name: string): TaskFamily<any> {
  // Object.hasOwn so that names like 'constructor' or 'toString' are unknown, not prototype members.
  if (!Object.hasOwn(TASK_FAMILIES, name)) {
    throw new Error(`unknown task family '${name}'; known: ${Object.keys(TASK_FAMILIES).join(', ')}`);
  }
  return TASK_FAMILIES[name];
}
