/**
 * Symbolic string tasks on random lowercase words: `rev:abcd=` -> `dcba`,
 * `sort:dcba=` -> `abcd`. Length and alphabet size are the difficulty knobs.
 */
import type { Task } from '../core/types.js';
import type { Rng } from '../util/rng.js';
import { z } from 'zod';
import { parseOptions } from '../config/issues.js';
import { intIn, invalid, show, verifyWith } from './common.js';
import type { ParsedAnswer, TaskFamily } from '../core/task-family.js';

/** The string operations this family knows. */
export type StringOp = 'reverse' | 'sort';

/** The strings difficulty knob. */
export interface StringsDifficulty {
  /** shortest input string, >= 1 (an empty answer could not be told from no answer) */
  minLength: number;
  /** longest input string, minLength..1000 */
  maxLength: number;
  /** letters drawn from the first `alphabet` of a..z, 1..26 */
  alphabet: number;
  /** the operations to draw from, non-empty, no repeats */
  ops: StringOp[];
}

/** Each op's tag in the prompt, and what it computes. */
const OPS: Record<StringOp, { tag: string; apply: (s: string) => string }> = {
  reverse: { tag: 'rev', apply: (s) => [...s].reverse().join('') },
  sort: { tag: 'sort', apply: (s) => [...s].sort().join('') },
};

/** Frozen (ops too) so no caller can change the defaults for everyone else. */
const DEFAULTS: StringsDifficulty = Object.freeze({
  minLength: 3,
  maxLength: 6,
  alphabet: 6,
  ops: Object.freeze(['reverse', 'sort']) as StringOp[],
});

/** Parses a string answer: trimmed, one or more lowercase letters a-z and nothing else. */
export function parseStringAnswer(output: string): ParsedAnswer {
  if (typeof output !== 'string') return invalid(`answer must be a string, got ${show(output)}`);
  const text = output.trim();
  if (text === '') return invalid('empty answer: expected lowercase letters');
  const bad = text.search(/[^a-z]/);
  if (bad >= 0)
    return invalid(
      `unexpected character ${show(text[bad])} at position ${bad} of ${show(text)}: expected only lowercase letters a-z`,
    );
  return { valid: true, value: text };
}

/** The difficulty's schema: the defaults above, lengths in range, a non-empty list of distinct ops (a fresh copy). */
export const StringsDifficultySchema = z
  .strictObject({
    minLength: intIn(1, 1000).default(DEFAULTS.minLength),
    maxLength: intIn(1, 1000).default(DEFAULTS.maxLength),
    alphabet: intIn(1, 26).default(DEFAULTS.alphabet),
    ops: z
      .array(z.enum(Object.keys(OPS) as [StringOp, ...StringOp[]]))
      .min(1, 'a non-empty list of ops')
      .default(() => [...DEFAULTS.ops]),
  })
  .superRefine((d, ctx) => {
    if (d.maxLength < d.minLength)
      ctx.addIssue({
        code: 'custom',
        path: ['maxLength'],
        message: `must be at least minLength (${d.minLength}), got ${d.maxLength}`,
      });
    d.ops.forEach(
      (op, i) =>
        d.ops.indexOf(op) !== i && ctx.addIssue({ code: 'custom', path: ['ops', i], message: `lists '${op}' twice` }),
    );
  })
  .transform((d) => ({ ...d, ops: [...d.ops] }));

/** The strings task family. */
export const strings: TaskFamily<StringsDifficulty> = {
  name: 'strings',
  defaults: DEFAULTS,

  difficulty: StringsDifficultySchema,
  validate: (d, where = 'tasks.difficulty') => parseOptions(StringsDifficultySchema, d, where),

  generate(rng: Rng, d: StringsDifficulty, index: number): Task {
    const op = OPS[d.ops[rng.int(d.ops.length)]];
    const length = d.minLength + rng.int(d.maxLength - d.minLength + 1);
    let input = '';
    for (let i = 0; i < length; i++) input += String.fromCharCode(97 + rng.int(d.alphabet));
    return { id: `strings-${index}`, family: 'strings', prompt: `${op.tag}:${input}=`, answer: op.apply(input) };
  },

  parseAnswer: parseStringAnswer,

  verify(task: Task, output: string): boolean {
    return verifyWith('strings', parseStringAnswer, task, output);
  },
};
