/**
 * Task sets on disk and in memory: JSONL files (one `{"id","family","prompt","answer"}`
 * per line, so datasets can be inspected, diffed and mixed with outside data), seeded
 * generation of a set, and train/test splits that never share a prompt.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Task } from '../core/types.js';
import { Rng } from '../util/rng.js';
import { show } from './common.js';
import { rowsToTasks, type TaskCheck } from './dataset.js';
import { jsonlRows } from './rows.js';
import type { TaskFamily } from '../core/task-family.js';

/**
 * Writes tasks as JSONL (see {@link tasksJsonl}); creates the parent directory. An existing
 * file is refused unless `overwrite`.
 */
export function writeTasksJsonl(path: string, tasks: readonly Task[], o: { overwrite?: boolean } = {}): void {
  const text = tasksJsonl(tasks);
  if (!o.overwrite && existsSync(path))
    throw new Error(`${path} exists; refusing to overwrite it (choose another path, or overwrite)`);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** Tasks as JSONL text, one object per line with id, family, prompt and (when present) answer, system and the task's fields. */
export function tasksJsonl(tasks: readonly Task[]): string {
  const lines = tasks.map((t, i) => {
    if (typeof t.prompt !== 'string') throw new Error(`writeTasksJsonl: task ${i} ('${t.id}') has no string prompt`);
    if (t.answer !== undefined && typeof t.answer !== 'string')
      throw new Error(`writeTasksJsonl: task ${i} ('${t.id}') has a non-string answer`);
    const record: Record<string, unknown> = { id: t.id, family: t.family, prompt: t.prompt };
    if (t.answer !== undefined) record.answer = t.answer;
    if (t.system !== undefined)
      record.prompt = [
        { role: 'system', content: t.system },
        { role: 'user', content: t.prompt },
      ];
    for (const [k, v] of Object.entries(t.fields ?? {})) {
      if (Object.hasOwn(record, k))
        throw new Error(`writeTasksJsonl: task ${i} ('${t.id}') has a field '${k}', a name the file uses`);
      record[k] = v;
    }
    return JSON.stringify(record);
  });
  return lines.map((l) => `${l}\n`).join('');
}

export type { TaskCheck } from './dataset.js';

/**
 * Reads the project's own JSONL task file, whole: each row a `prompt` (a string or chat
 * messages), an optional `answer` (unlabeled data has none), `id` (default
 * `${family}-${n}`) and any other fields kept as `task.fields`; the rules and errors of
 * {@link rowsToTasks} (`path:line: field 'x': what is wrong`, 1-based lines). Other files and
 * column names: readTaskFile (src/tasks/dataset.ts).
 */
export function readTasksJsonl(path: string, family: string, check?: TaskCheck): Task[] {
  return rowsToTasks(jsonlRows(path), family, { check });
}

function count(what: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer, got ${show(n)}`);
}

/**
 * `n` tasks from `family` at difficulty `d` (validated; missing fields take the defaults),
 * drawn from one Rng seeded with `seed`; ids `${family.name}-${i}`. Prompts may repeat.
 */
export function generateTasks<D>(family: TaskFamily<D>, d: Partial<D>, n: number, seed: number): Task[] {
  count('generateTasks: n', n);
  const diff = family.validate(d);
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => family.generate(rng, diff, i));
}

/** Result of {@link disjointSplit}. */
export interface TaskSplit {
  train: Task[];
  test: Task[];
}

/**
 * A train set and a held-out test set with no test prompt anywhere in train. Train is the
 * same draw as `generateTasks(family, d, nTrain, seed)`; test continues the same Rng and
 * skips prompts already in train (test prompts may repeat among themselves). Ids are
 * `${name}-train-${i}` and `${name}-test-${i}` so the two sets can share a run. Throws when
 * the difficulty has too few distinct prompts to find `nTest` unseen ones.
 */
export function disjointSplit<D>(
  family: TaskFamily<D>,
  d: Partial<D>,
  nTrain: number,
  nTest: number,
  seed: number,
): TaskSplit {
  count('disjointSplit: nTrain', nTrain);
  count('disjointSplit: nTest', nTest);
  const diff = family.validate(d);
  const rng = new Rng(seed);
  const train = Array.from({ length: nTrain }, (_, i) => ({
    ...family.generate(rng, diff, i),
    id: `${family.name}-train-${i}`,
  }));
  const seen = new Set(train.map((t) => t.prompt));
  const test: Task[] = [];
  // Rejection sampling keeps the test distribution the family's own, minus the train
  // prompts; the budget turns an exhausted prompt space into an error instead of a hang.
  const budget = 1000 + 100 * nTest;
  for (let draws = 0; test.length < nTest; draws++) {
    if (draws >= budget) {
      throw new Error(
        `disjointSplit: found only ${test.length} of ${nTest} test prompts outside train after ${budget} draws; ` +
          `${family.name} at ${show(diff, 200)} has too few distinct prompts for ${nTrain} train tasks`,
      );
    }
    const task = family.generate(rng, diff, test.length);
    if (!seen.has(task.prompt)) test.push({ ...task, id: `${family.name}-test-${test.length}` });
  }
  return { train, test };
}
