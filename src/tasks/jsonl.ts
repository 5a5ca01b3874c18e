/**
 * Task sets on disk and in memory: JSONL files (one `{"id","family","prompt","answer"}`
 * per line, so datasets can be inspected, diffed and mixed with outside data), seeded
 * generation of a set, and train/test splits that never share a prompt.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Task } from '../core/types.js';
import { Rng } from '../util/rng.js';
import { show } from './common.js';
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

/** Tasks as JSONL text, one object per line with id, family, prompt and (when present) answer. */
export function tasksJsonl(tasks: readonly Task[]): string {
  const lines = tasks.map((t, i) => {
    if (typeof t.prompt !== 'string') throw new Error(`writeTasksJsonl: task ${i} ('${t.id}') has no string prompt`);
    if (t.answer !== undefined && typeof t.answer !== 'string')
      throw new Error(`writeTasksJsonl: task ${i} ('${t.id}') has a non-string answer`);
    const record: Record<string, string> = { id: t.id, family: t.family, prompt: t.prompt };
    if (t.answer !== undefined) record.answer = t.answer;
    return JSON.stringify(record);
  });
  return lines.map((l) => `${l}\n`).join('');
}

/** A check of one task beyond its fields (it fits the model, say): what is wrong, or undefined. */
export type TaskCheck = (task: Task) => string | undefined;

/**
 * Reads a JSONL task file, whole. Each non-blank line needs a string `prompt`; `answer`
 * (string) is optional, for unlabeled data. `id` (string) defaults to `${family}-${lineNumber}`.
 * A line's own `family`, if any, must equal `family`, since that names the verifier; `check`
 * may refuse a task for other reasons. Any bad line throws `path:line: what is wrong`
 * (1-based line numbers).
 */
export function readTasksJsonl(path: string, family: string, check?: TaskCheck): Task[] {
  const tasks: Task[] = [];
  const seen = new Map<string, number>();
  readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .forEach((line, i) => {
      const n = i + 1;
      const fail = (what: string): never => {
        throw new Error(`${path}:${n}: ${what}`);
      };
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (e) {
        fail(`bad JSON: ${(e as Error).message}`);
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        fail(`expected a JSON object, got ${show(value)}`);
      const rec = value as Record<string, unknown>;
      if (!('prompt' in rec)) fail('missing prompt');
      if (typeof rec.prompt !== 'string') fail(`prompt must be a string, got ${show(rec.prompt)}`);
      if (rec.answer !== undefined && typeof rec.answer !== 'string')
        fail(`answer must be a string, got ${show(rec.answer)}`);
      if (rec.id !== undefined && typeof rec.id !== 'string') fail(`id must be a string, got ${show(rec.id)}`);
      if (rec.family !== undefined && rec.family !== family)
        fail(`family ${show(rec.family)} does not match the expected '${family}'`);
      const id = (rec.id as string | undefined) ?? `${family}-${n}`;
      // Ids key rewards and logs within a run, so a repeat would silently merge two tasks.
      if (seen.has(id)) fail(`duplicate id '${id}' (first on line ${seen.get(id)})`);
      seen.set(id, n);
      const task: Task = { id, family, prompt: rec.prompt as string };
      if (rec.answer !== undefined) task.answer = rec.answer as string;
      const wrong = check?.(task);
      if (wrong !== undefined) fail(wrong);
      tasks.push(task);
    });
  return tasks;
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
