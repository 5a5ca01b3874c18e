/**
 * `coevolve reward FILE --family NAME`: scores a JSONL of `{completion, answer}` rows (plus a
 * `prompt` and any fields the family reads, as a task file's) with the family's verifier,
 * one JSON line per row, so a verifier can be checked on a researcher's own data before a
 * run. Every row is checked before any is scored.
 */
import type { TaskFamily } from '../core/task-family.js';
import type { Task } from '../core/types.js';
import { show } from '../tasks/common.js';
import { jsonlRows } from '../tasks/rows.js';

/** One scored row: its 1-based line, the reward (1 right, 0 not), and the answer the family read (null when none). */
export interface RowReward {
  line: number;
  reward: number;
  answer: string | null;
}

/** The rows of `path` as tasks and completions; a bad row throws `path:line: field 'x': ...`. */
export function rewardRows(path: string, family: string): { task: Task; completion: string; line: number }[] {
  return jsonlRows(path).map(({ where, n, value }) => {
    const rec = value as Record<string, unknown>;
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec))
      throw new Error(`${where}: expected an object, got ${show(value)}`);
    const { completion, answer, prompt = '', ...fields } = rec;
    if (typeof completion !== 'string')
      throw new Error(`${where}: field 'completion': must be a string, got ${show(completion)}`);
    if (typeof answer !== 'string' && !(typeof answer === 'number' && Number.isFinite(answer)))
      throw new Error(`${where}: field 'answer': must be a string or a number, got ${show(answer)}`);
    if (typeof prompt !== 'string') throw new Error(`${where}: field 'prompt': must be a string, got ${show(prompt)}`);
    const task: Task = { id: `row-${n}`, family, prompt, answer: String(answer) };
    if (Object.keys(fields).length > 0) task.fields = fields;
    return { task, completion, line: n };
  });
}

/** Scores every row of `path` with `family`'s verifier. */
export function rewardCommand(path: string, family: TaskFamily<unknown>): RowReward[] {
  return rewardRows(path, family.name).map(({ task, completion, line }) => {
    const parsed = family.parseAnswer(completion.trim());
    let right: boolean;
    try {
      right = family.verify(task, completion);
    } catch (e) {
      throw new Error(`${path}:${line}: ${(e as Error).message}`);
    }
    return { line, reward: right ? 1 : 0, answer: parsed.valid ? parsed.value : null };
  });
}
