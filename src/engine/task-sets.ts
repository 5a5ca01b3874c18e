import type { ExperimentConfig } from '../config/schema.js';
import type { Task } from '../core/types.js';
import { disjointSplit, generateTasks } from '../tasks/jsonl.js';
import { readTaskFile, type TaskCheck } from '../tasks/dataset.js';
import type { TaskFamily } from '../core/task-family.js';

/** Checks per set: a file's bad task is reported with its file and line. */
export interface TaskSetChecks {
  train?: TaskCheck;
  eval?: TaskCheck;
}

/**
 * The train and eval task sets of a config, each read and checked whole. Two generated sets
 * come from one disjoint split (no eval prompt appears in train); a file (JSONL or Parquet,
 * through its field map) is read as is.
 * Label-free runs may point both at the same unlabeled file (TTRL's test-time setting).
 */
export async function loadTaskSets(
  c: ExperimentConfig,
  family: TaskFamily<unknown>,
  checks: TaskSetChecks = {},
): Promise<{ train: Task[]; evalSet: Task[] }> {
  const { train, eval: ev, difficulty } = c.tasks;
  const generated = (field: string, tasks: Task[], check?: TaskCheck) => {
    for (const t of tasks) {
      const wrong = check?.(t);
      if (wrong !== undefined)
        throw new Error(`tasks.${field}: generated task ${t.id} (${JSON.stringify(t.prompt)}): ${wrong}`);
    }
    return tasks;
  };
  if (train.source === 'none') {
    // a role writes the training tasks (self-play); the eval set is read as usual
    return { train: [], evalSet: ev ? await load('eval', ev, 1) : [] };
  }
  if (ev?.source === 'none')
    throw new Error("tasks.eval.source: 'none' is for training tasks a role writes; leave tasks.eval out instead");
  if (train.source === 'generate' && ev?.source === 'generate') {
    const split = disjointSplit(family, difficulty, train.count!, ev.count!, c.seed);
    return {
      train: generated('train', split.train, checks.train),
      evalSet: generated('eval', split.test, checks.eval),
    };
  }
  async function load(field: 'train' | 'eval', s: typeof train, salt: number): Promise<Task[]> {
    const check = checks[field];
    if (s.source === 'generate')
      return generated(field, generateTasks(family, difficulty, s.count!, c.seed + salt), check);
    const tasks = await readTaskFile(s.path!, family.name, { fields: s.fields, check });
    if (tasks.length === 0) throw new Error(`tasks.${field}.path: ${s.path} holds no tasks`);
    return tasks;
  }
  const evalSet = ev ? await load('eval', ev, 1) : [];
  const all = await load('train', train, 0);
  // Scoring the very set it trains on is TTRL's test-time setting, chosen by naming one file
  // twice; otherwise no eval prompt may leak into training.
  if (train.source === 'file' && ev?.source === 'file' && train.path === ev.path) return { train: all, evalSet };
  const held = new Set(evalSet.map((t) => t.prompt));
  const kept = all.filter((t) => !held.has(t.prompt));
  if (kept.length === 0) throw new Error('tasks.train: every training task is also in tasks.eval');
  return { train: kept, evalSet };
}
