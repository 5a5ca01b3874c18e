import type { ExperimentConfig } from '../config/schema.js';
import type { Task } from '../core/types.js';
import { disjointSplit, generateTasks, readTasksJsonl } from '../tasks/jsonl.js';
import type { TaskFamily } from '../tasks/types.js';

/**
 * The train and eval task sets of a config. Two generated sets come from one disjoint split
 * (no eval prompt appears in train); a file is read as is. Label-free runs may point both
 * at the same unlabeled file (TTRL's test-time setting).
 */
export function loadTaskSets(c: ExperimentConfig, family: TaskFamily<unknown>): { train: Task[]; evalSet: Task[] } {
  const { train, eval: ev, difficulty } = c.tasks;
  if (train.source === 'generate' && ev.source === 'generate') {
    const split = disjointSplit(family, difficulty, train.count!, ev.count!, c.seed);
    return { train: split.train, evalSet: split.test };
  }
  const load = (s: typeof train, salt: number) => (s.source === 'file' ? readTasksJsonl(s.path!, family.name) : generateTasks(family, difficulty, s.count!, c.seed + salt));
  return { train: load(train, 0), evalSet: load(ev, 1) };
}
