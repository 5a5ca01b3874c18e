import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Task } from '../core/types.js';
import { pretrainCorpus, PretrainSchema } from '../pretrain/index.js';
import { readTasksJsonl, writeTasksJsonl } from '../tasks/jsonl.js';
import { taskFamily } from '../registry.js';
import type { TaskFamily } from '../core/task-family.js';
import { Rng } from '../util/rng.js';

export interface TasksOptions {
  family: string;
  difficulty: string;
  count: number;
  seed: number;
  out: string;
  /** pretraining configs whose corpus and held-out sets are skipped */
  excludePretrain?: string | string[];
  /** JSONL task files whose prompts are skipped */
  exclude?: string[];
  overwrite?: boolean;
}

/**
 * `coevolve tasks`: writes a seeded JSONL set of distinct tasks. With --exclude-pretrain, no
 * prompt of that pretraining config's corpus (proposer completions included) or held-out
 * sets is drawn, so RL can train on prompts its base never saw. `family` is resolved by the
 * caller when a plugin defines it.
 */
export function tasksCommand(
  o: TasksOptions,
  family: TaskFamily<unknown> = taskFamily(o.family),
): { out: string; count: number } {
  if (!o.overwrite && existsSync(o.out)) throw new Error(`tasks: ${o.out} exists; pass --overwrite to replace it`);
  let difficulty: unknown;
  try {
    difficulty = JSON.parse(o.difficulty);
  } catch {
    throw new Error(`tasks: --difficulty must be JSON, e.g. '{"digits":2}', got ${o.difficulty}`);
  }
  const d = family.validate(difficulty);
  const configs =
    o.excludePretrain === undefined ? [] : Array.isArray(o.excludePretrain) ? o.excludePretrain : [o.excludePretrain];
  const seen = new Set([
    ...configs.flatMap(pretrainPrompts),
    ...(o.exclude ?? []).flatMap((f) => readTasksJsonl(f, family.name).map((t) => t.prompt)),
  ]);
  const rng = new Rng(o.seed);
  const tasks: Task[] = [];
  for (let draws = 0; tasks.length < o.count; draws++) {
    if (draws > 1000 * o.count) throw new Error(`tasks: found only ${tasks.length} of ${o.count} distinct new prompts`);
    const t = family.generate(rng, d, tasks.length);
    if (!seen.has(t.prompt)) {
      seen.add(t.prompt);
      tasks.push(t);
    }
  }
  writeTasksJsonl(o.out, tasks, { overwrite: o.overwrite });
  return { out: o.out, count: tasks.length };
}

function pretrainPrompts(path: string): string[] {
  const { train, proposals, test, sets } = pretrainCorpus(PretrainSchema.parse(parseYaml(readFileSync(path, 'utf8'))));
  return [...train, ...proposals, ...test, ...Object.values(sets).flat()].map((t) => t.prompt);
}
