/**
 * Tasks from the data files researchers have (JSONL or Parquet, the files Hugging Face
 * datasets ship), with their own column names: a field map says which column is the prompt,
 * which the answer (and what marks the answer inside it, GSM8K's `####`), the id and the
 * system message. A prompt is a string or a list of chat messages (TRL's conversational
 * format: an optional system message, then one user message). The row's other columns are
 * kept as `task.fields` for verifiers and reward functions. Every row is checked before any
 * work, and a bad one throws naming the file, the row and the field.
 */
import type { Task } from '../core/types.js';
import { show } from './common.js';
import { readRows, type Row } from './rows.js';

/** Where the answer is: a column, or a column and the marker after whose last occurrence it stands. */
export type AnswerField = string | { field: string; after?: string };

/** Which column is what (the config's `tasks.train.fields`); unset ones take {@link DEFAULT_FIELDS}. */
export interface FieldMap {
  /** a column, or a template whose `{column}`s are filled from the row (TinyZero's countdown rows have no prompt column) */
  prompt?: string | { template: string };
  answer?: AnswerField;
  id?: string;
  system?: string;
}

/** The columns of the project's own task files (`{"id","family","prompt","answer"}`). */
export const DEFAULT_FIELDS = { prompt: 'prompt', answer: 'answer', id: 'id' } as const;

/** A check of one task beyond its fields (it fits the model, say): what is wrong, or undefined. */
export type TaskCheck = (task: Task) => string | undefined;

/** Options of {@link readTaskFile}. */
export interface ReadOptions {
  fields?: FieldMap;
  check?: TaskCheck;
}

/**
 * Reads a task file (`.parquet`, else JSONL) whole and checks every row: see {@link rowsToTasks}.
 * An empty file gives no tasks (the caller decides whether that is an error).
 */
export async function readTaskFile(path: string, family: string, o: ReadOptions = {}): Promise<Task[]> {
  return rowsToTasks(await readRows(path), family, o);
}

/**
 * Tasks from rows. Each row must be an object whose prompt column holds a string or chat
 * messages; the answer column (optional, for unlabeled data) a string or a number, and with
 * `after`, text holding that marker (the answer is what follows its last occurrence,
 * trimmed); the id column (optional, default `${family}-${n}`, n the line or row number) a unique
 * string or integer; the system column (optional) a string. A `family` column, when there,
 * must equal `family`, since that names the verifier. `check` may refuse a task for other
 * reasons. Throws `<file>:<line>: field 'x': what is wrong` (`<file>: row n` for Parquet).
 */
export function rowsToTasks(rows: readonly Row[], family: string, o: ReadOptions = {}): Task[] {
  const map = { ...DEFAULT_FIELDS, ...o.fields };
  const answer = typeof map.answer === 'string' ? { field: map.answer } : map.answer;
  const promptColumn = typeof map.prompt === 'string' ? map.prompt : undefined;
  const used = new Set([
    'family',
    answer.field,
    map.id,
    ...(promptColumn ? [promptColumn] : []),
    ...(map.system ? [map.system] : []),
  ]);
  const seen = new Map<string, string>();
  return rows.map(({ where, n, value }) => {
    const fail = (what: string): never => {
      throw new Error(`${where}: ${what}`);
    };
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      fail(`expected an object, got ${show(value)}`);
    const rec = value as Record<string, unknown>;
    const field = (name: string, what: string): never => fail(`field '${name}': ${what}`);
    if (rec.family !== undefined && rec.family !== family)
      field('family', `${show(rec.family)} does not match the expected '${family}'`);
    const task: Task = { id: '', family, prompt: '' };
    if (promptColumn !== undefined) readPrompt(rec[promptColumn], task, (what) => field(promptColumn, what));
    else task.prompt = fill((map.prompt as { template: string }).template, rec, field);
    if (map.system !== undefined && rec[map.system] !== undefined && rec[map.system] !== null) {
      if (typeof rec[map.system] !== 'string') field(map.system, `must be a string, got ${show(rec[map.system])}`);
      if (task.system !== undefined) field(map.system, 'a system message, and the prompt has one too');
      task.system = rec[map.system] as string;
    }
    const a = rec[answer.field];
    if (a !== undefined && a !== null) {
      if (typeof a === 'number' && Number.isFinite(a)) task.answer = String(a);
      else if (typeof a === 'string') task.answer = a;
      else field(answer.field, `must be a string or a number, got ${show(a)}`);
      if (answer.after !== undefined) {
        const at = task.answer!.lastIndexOf(answer.after);
        if (at < 0) field(answer.field, `has no '${answer.after}' before the answer: ${show(task.answer, 60)}`);
        task.answer = task.answer!.slice(at + answer.after.length).trim();
        if (task.answer === '') field(answer.field, `nothing after '${answer.after}'`);
      }
    }
    const rawId = rec[map.id];
    if (rawId !== undefined && rawId !== null && typeof rawId !== 'string' && !Number.isInteger(rawId))
      field(map.id, `must be a string or an integer, got ${show(rawId)}`);
    task.id = rawId === undefined || rawId === null ? `${family}-${n}` : String(rawId);
    // Ids key rewards and logs within a run, so a repeat would silently merge two tasks.
    if (seen.has(task.id)) field(map.id, `duplicate id '${task.id}' (first at ${seen.get(task.id)})`);
    seen.set(task.id, where);
    const rest = Object.entries(rec).filter(([k]) => !used.has(k));
    if (rest.length > 0) task.fields = Object.fromEntries(rest);
    const wrong = o.check?.(task);
    if (wrong !== undefined) fail(wrong);
    return task;
  });
}

// `{name}` → the row's column, a list joined with ", " (`[3, 5]` → `3, 5`); `{{` and `}}` are braces.
function fill(template: string, rec: Record<string, unknown>, field: (name: string, what: string) => never): string {
  return template.replace(/\{\{|\}\}|\{([^{}]+)\}/g, (m, name: string | undefined) => {
    if (name === undefined) return m[0];
    const v = rec[name];
    if (Array.isArray(v) && v.every((x) => typeof x === 'number' || typeof x === 'string')) return v.join(', ');
    if (typeof v === 'string' || typeof v === 'number') return String(v);
    return field(name, `the prompt template needs a string, a number or a list of them, got ${show(v)}`);
  });
}

// A string, or TRL's conversational prompt: [{role: 'system', content}?, {role: 'user', content}].
// The chat templates here render one system and one user message, so a longer conversation
// (few-shot turns) is refused rather than cut.
function readPrompt(v: unknown, task: Task, fail: (what: string) => never): void {
  if (typeof v === 'string') {
    task.prompt = v;
    return;
  }
  if (v === undefined || v === null) fail('missing');
  if (!Array.isArray(v)) fail(`must be a string or a list of chat messages, got ${show(v)}`);
  const messages = v as unknown[];
  messages.forEach((m, k) => {
    const r = m as Record<string, unknown>;
    if (m === null || typeof m !== 'object' || typeof r.role !== 'string' || typeof r.content !== 'string')
      fail(`message ${k + 1} must be {role, content} with string values, got ${show(m)}`);
  });
  const roles = (messages as { role: string }[]).map((m) => m.role).join(',');
  if (roles !== 'user' && roles !== 'system,user')
    fail(
      `chat messages must be a user message, or a system message and a user message; got roles ${roles || '(none)'}`,
    );
  const [first, last] = [messages[0], messages.at(-1)] as { content: string }[];
  task.prompt = last.content;
  if (messages.length === 2) task.system = first.content;
}
