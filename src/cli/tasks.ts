import { generateTasks, writeTasksJsonl } from '../tasks/jsonl.js';
import { taskFamily } from '../tasks/index.js';

export interface TasksOptions { family: string; difficulty: string; count: number; seed: number; out: string }

/** `coevolve tasks`: writes a seeded JSONL task set, e.g. the unlabeled set of a TTRL run. */
export function tasksCommand(o: TasksOptions): { out: string; count: number } {
  let difficulty: unknown;
  try {
    difficulty = JSON.parse(o.difficulty);
  } catch {
    throw new Error(`tasks: --difficulty must be JSON, e.g. '{"digits":2}', got ${o.difficulty}`);
  }
  const tasks = generateTasks(taskFamily(o.family), difficulty as Record<string, unknown>, o.count, o.seed);
  writeTasksJsonl(o.out, tasks);
  return { out: o.out, count: tasks.length };
}
