/**
 * The `math` task family: tasks from a dataset (GSM8K, MATH, any file of problems with
 * reference answers), checked as math-verify checks them. The answer is the last
 * `\boxed{}`, else what follows the last answer marker, else the last number (extract.ts);
 * it is right when equal to the reference by math-verify's rules (equal.ts). A reference
 * with a `\boxed{}` in it (a MATH solution) is read through the same extraction. Its own
 * generator makes fraction sums and products (`What is 1/2 + 2/3?`, answer `\frac{7}{6}`),
 * for smoke runs and tests; a real run reads a dataset (`tasks.train.path`).
 */
import { z } from 'zod';
import type { TaskFamily } from '../../core/task-family.js';
import { intIn, invalid, parseDifficulty } from '../common.js';
import { mathEqual } from './equal.js';
import { extractAnswer, lastBoxed } from './extract.js';

export { extractAnswer } from './extract.js';
export { mathEqual } from './equal.js';

const NAME = 'math';

/** The answer part of a reference: its last `\boxed{}` when it has one, else all of it. */
export function referenceAnswer(answer: string): string {
  return lastBoxed(answer) ?? answer;
}

/** The generator's knobs: how many fractions, and their largest denominator. */
export interface MathDifficulty {
  terms: number;
  maxDenominator: number;
}

const DIFFICULTY = z.strictObject({
  terms: intIn(2, 5).default(2),
  maxDenominator: intIn(2, 20).default(9),
});

const gcd = (a: number, b: number): number => (b === 0 ? Math.abs(a) : gcd(b, a % b));

/** p/q in lowest terms as the reference writes it: an integer, or `\frac{p}{q}` (sign in front). */
function fraction(p: number, q: number): string {
  const g = gcd(p, q);
  const [n, d] = [p / g, q / g];
  if (d === 1) return String(n);
  return `${n < 0 ? '-' : ''}\\frac{${Math.abs(n)}}{${d}}`;
}

export const math: TaskFamily<MathDifficulty> = {
  name: NAME,
  defaults: { terms: 2, maxDenominator: 9 },
  difficulty: DIFFICULTY,
  validate: (d: unknown, where = 'tasks.difficulty') => parseDifficulty(DIFFICULTY, d, where),
  generate(rng, d, index) {
    let [p, q] = [0, 1];
    const parts: string[] = [];
    for (let k = 0; k < d.terms; k++) {
      const den = 2 + rng.int(d.maxDenominator - 1);
      const num = 1 + rng.int(den);
      const op = k === 0 ? '+' : rng.next() < 0.5 ? '+' : '-';
      parts.push(k === 0 ? `${num}/${den}` : `${op} ${num}/${den}`);
      [p, q] = [op === '+' ? p * den + num * q : p * den - num * q, q * den];
    }
    return {
      id: `${NAME}-${index}`,
      family: NAME,
      prompt: `What is ${parts.join(' ')}? Put the final answer in \\boxed{}.`,
      answer: fraction(p, q),
    };
  },
  parseAnswer(output) {
    const answer = extractAnswer(output);
    return answer === undefined
      ? invalid('no answer found (no \\boxed{}, answer marker or number)')
      : { valid: true, value: answer };
  },
  verify(task, output) {
    if (task.family !== NAME) throw new Error(`${NAME}: cannot verify task '${task.id}' of family '${task.family}'`);
    if (typeof task.answer !== 'string') throw new Error(`${NAME}: task '${task.id}' has no answer to verify against`);
    const answer = extractAnswer(output);
    return answer !== undefined && mathEqual(referenceAnswer(task.answer), answer);
  },
};
