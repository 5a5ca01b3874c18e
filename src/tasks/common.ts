/**
 * Helpers shared by the task families: the integer field of a difficulty's schema, the one
 * verify rule, so every family judges completions the same way, and
 * drawing from a weighted mixture of difficulties (a curriculum's corpus).
 */
import { z } from 'zod';
import type { Task } from '../core/types.js';
import type { Rng } from '../util/rng.js';
import type { ParsedAnswer, TaskFamily } from '../core/task-family.js';

/** A value as it should appear in an error message (JSON where possible, cut short). */
export function show(value: unknown, max = 40): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** An invalid parse with its reason. */
export function invalid(error: string): ParsedAnswer {
  return { valid: false, value: null, error };
}

/** An integer in [min, max]: a difficulty field's schema. */
export const intIn = (min: number, max: number) => z.number().int().min(min).max(max);

/** A family's difficulty parsed by `schema` (defaults filled), or an error naming `where` and each bad field. */
export function parseDifficulty<D>(schema: z.ZodType<D>, d: unknown, where: string): D {
  const r = schema.safeParse(d ?? {});
  if (!r.success)
    throw new Error(
      `${where}: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

/** The shared verify rule: parse, then compare exactly with the reference answer. */
export function verifyWith(
  family: string,
  parse: (output: string) => ParsedAnswer,
  task: Task,
  output: string,
): boolean {
  if (task.family !== family) {
    throw new Error(`${family}: cannot verify task '${task.id}' of family '${task.family}'`);
  }
  if (typeof task.answer !== 'string') {
    throw new Error(`${family}: task '${task.id}' has no answer to verify against`);
  }
  const parsed = parse(output);
  return parsed.valid && parsed.value === task.answer;
}

/** One cell of a difficulty mixture: a validated difficulty and its relative weight. */
export interface MixtureCell<D> {
  difficulty: D;
  weight: number;
}

/** Draws one task; `index` only names it. */
export type TaskSource = (rng: Rng, index: number) => Task;

/**
 * A source for a weighted mixture: each draw picks a cell by weight, then generates from
 * it with the same Rng. A single cell makes no pick, so one difficulty draws exactly what
 * `family.generate` alone would, and corpora made before mixtures existed stay the same.
 */
export function mixtureSource<D>(family: TaskFamily<D>, cells: readonly MixtureCell<D>[]): TaskSource {
  if (cells.length === 0) throw new Error(`${family.name}: a mixture needs at least one cell`);
  for (const [i, c] of cells.entries()) {
    if (!(c.weight > 0 && Number.isFinite(c.weight)))
      throw new Error(`${family.name}: mixture cell ${i} weight must be a positive number, got ${show(c.weight)}`);
  }
  const total = cells.reduce((sum, c) => sum + c.weight, 0);
  return (rng, index) => {
    let k = 0;
    if (cells.length > 1)
      for (let u = rng.next() * total; k < cells.length - 1 && u >= cells[k].weight; k++) u -= cells[k].weight;
    return family.generate(rng, cells[k].difficulty, index);
  };
}

/**
 * `n` tasks from `source` whose prompts are not in `seen`, by rejection sampling (so the
 * source's distribution minus those prompts), drawn as disjointSplit draws its test set;
 * `distinct` also refuses repeats within the set. `seen` is not changed. The budget turns
 * an exhausted prompt space into an error naming `what` instead of a hang.
 */
export function drawUnseen(
  rng: Rng,
  source: TaskSource,
  n: number,
  seen: ReadonlySet<string>,
  o: { what: string; distinct?: boolean },
): Task[] {
  const out: Task[] = [];
  const mine = new Set<string>();
  const budget = 1000 + 100 * n;
  for (let draws = 0; out.length < n; draws++) {
    if (draws >= budget)
      throw new Error(
        `${o.what}: found only ${out.length} of ${n} prompts outside the corpus after ${budget} draws; the difficulty has too few distinct prompts`,
      );
    const task = source(rng, out.length);
    if (seen.has(task.prompt) || (o.distinct && mine.has(task.prompt))) continue;
    mine.add(task.prompt);
    out.push(task);
  }
  return out;
}
