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
  const evalSet = load(ev, 1);
  const all = load(train, 0);
  // Scoring the very set it trains on is TTRL's test-time setting, chosen by naming one file
  // twice; otherwise no eval prompt may leak into training.
  if (train.source === 'file' && ev.source === 'file' && train.path === ev.path) return { train: all, evalSet };
  const held = new Set(evalSet.map((t) => t.prompt));
  const kept = all.filter((t) => !held.has(t.prompt));
  if (kept.length === 0) throw new Error('tasks.train: every training task is also in tasks.eval');
  return { train: kept, evalSet };
}
