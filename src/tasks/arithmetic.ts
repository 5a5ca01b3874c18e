/**
 * Integer arithmetic: prompts like `12+7*3=`, answers like `33`. Answers come from a small
 * evaluator of our own (never eval) using BigInt, so they are exact at every difficulty:
 * 9999^6 is past 2^53, and a wrong reference answer would poison the reward.
 */
import type { Task } from '../core/types.js';
import type { Rng } from '../util/rng.js';
import { z } from 'zod';
import { parseOptions } from '../config/issues.js';
import { intIn, invalid, show, verifyWith } from './common.js';
import { parseScratchpad, scratchpadTarget } from './scratchpad.js';
import type { ParsedAnswer, ParsedProposal, TaskFamily } from '../core/task-family.js';

/** The arithmetic difficulty knob. */
export interface ArithmeticDifficulty {
  /** maximum digits per operand, 1..4 (each operand's length is drawn from minDigits..digits) */
  digits: number;
  /** minimum digits per operand, 1..digits: `{digits: 3, minDigits: 3}` makes every operand exactly 3 digits */
  minDigits: number;
  /** exact number of operands, 2..6 */
  operands: number;
  /** the operators to draw from: a non-empty subset of '+-*', e.g. '+' or '+-' */
  operators: string;
  /** give each task a `target` with working (see scratchpad.ts); sums only */
  scratchpad: boolean;
}

const OPERATORS = '+-*';

/** Frozen so no caller can change the defaults for everyone else. */
const DEFAULTS: ArithmeticDifficulty = Object.freeze({
  digits: 2,
  operands: 2,
  operators: '+',
  scratchpad: false,
  minDigits: 1,
});

/**
 * Evaluates `a op b op c ...` (optionally ending in '=') over non-negative integers with
 * `*` before `+` and `-`, left to right otherwise. Throws on anything else: it exists to
 * compute reference answers and is never pointed at model output.
 */
export function evaluateArithmetic(expr: string): bigint {
  const body = expr.endsWith('=') ? expr.slice(0, -1) : expr;
  const nums: bigint[] = [];
  const ops: string[] = [];
  let i = 0;
  for (;;) {
    const start = i;
    while (i < body.length && body[i] >= '0' && body[i] <= '9') i++;
    if (i === start) throw new Error(`arithmetic: expected a number at position ${i} of ${show(expr)}`);
    nums.push(BigInt(body.slice(start, i)));
    if (i === body.length) break;
    if (!OPERATORS.includes(body[i]))
      throw new Error(`arithmetic: unexpected ${show(body[i])} at position ${i} of ${show(expr)}`);
    ops.push(body[i++]);
  }
  // Sum of terms; a term is a run of products, its sign set by the '+' or '-' before it.
  let total = 0n;
  let term = nums[0];
  ops.forEach((op, k) => {
    if (op === '*') {
      term *= nums[k + 1];
    } else {
      total += term;
      term = op === '-' ? -nums[k + 1] : nums[k + 1];
    }
  });
  return total + term;
}

/**
 * Parses an integer answer: trimmed, an optional '-' then digits, no leading zeros ('0'
 * itself is fine, '-0' is not), so each number has exactly one accepted spelling.
 */
export function parseIntegerAnswer(output: string): ParsedAnswer {
  if (typeof output !== 'string') return invalid(`answer must be a string, got ${show(output)}`);
  const text = output.trim();
  if (text === '') return invalid('empty answer: expected an integer');
  const sign = text[0] === '-' ? 1 : 0;
  const digits = text.slice(sign);
  if (digits === '') return invalid(`'-' must be followed by digits`);
  for (let i = 0; i < digits.length; i++) {
    const c = digits[i];
    if (c < '0' || c > '9') {
      return invalid(
        `unexpected character ${show(c)} at position ${i + sign} of ${show(text)}: ` +
          `an answer is a single integer (optional '-' then digits), not an expression or text`,
      );
    }
  }
  if (digits.length > 1 && digits[0] === '0')
    return invalid(`leading zero in ${show(text)}: write integers without leading zeros`);
  if (sign && digits === '0') return invalid(`'-0' is not an accepted spelling of zero: write 0`);
  return { valid: true, value: text };
}

/** An integer answer, or working ending in one (`a+b=c,...`), whose last result is the value. */
export function parseArithmeticOutput(output: string): ParsedAnswer {
  if (typeof output === 'string' && output.includes('=')) return parseScratchpad(output.trim());
  return parseIntegerAnswer(output);
}

/** A prompt split into its operands (digit strings) and the operators between them. */
interface Expression {
  operands: string[];
  operators: string[];
}

/**
 * Reads `a op b ... =` strictly: non-negative integers without leading zeros joined by
 * '+-*', one '=' at the end and nothing else. No trimming: a proposed task becomes the
 * solver's prompt exactly as written. Reads only; never evaluates.
 */
/** The columns of a sum, from the ones up, whose digits and carry-in reach 10 (a carry out). */
function carries(operands: readonly string[]): number {
  let count = 0;
  let carry = 0;
  for (let col = 0; col < Math.max(...operands.map((o) => o.length)); col++) {
    const sum = carry + operands.reduce((s, o) => s + (col < o.length ? Number(o[o.length - 1 - col]) : 0), 0);
    carry = Math.floor(sum / 10);
    if (carry > 0) count++;
  }
  return count;
}

function readExpression(text: unknown): Expression | { error: string } {
  if (typeof text !== 'string') return { error: `a task must be a string, got ${show(text)}` };
  const eq = text.indexOf('=');
  if (eq < 0) return { error: `a task ends in '=', got ${show(text)}` };
  if (eq !== text.length - 1)
    return { error: `a task ends at its one '=', got ${show(text.slice(eq))} after the expression in ${show(text)}` };
  const body = text.slice(0, -1);
  const e: Expression = { operands: [], operators: [] };
  for (let i = 0; ;) {
    const start = i;
    while (i < body.length && body[i] >= '0' && body[i] <= '9') i++;
    if (i === start) return { error: `expected a number at position ${i} of ${show(text)}` };
    const n = body.slice(start, i);
    if (n.length > 1 && n[0] === '0')
      return { error: `leading zero in operand ${e.operands.length + 1} (${show(n)}) of ${show(text)}` };
    e.operands.push(n);
    if (i === body.length) return e;
    if (!OPERATORS.includes(body[i])) return { error: `unexpected ${show(body[i])} at position ${i} of ${show(text)}` };
    e.operators.push(body[i++]);
  }
}

/** Why an expression is outside the bounds of `limits`, or undefined. */
function outOfLimits(e: Expression, limits: ArithmeticDifficulty): string | undefined {
  const n = e.operands.length;
  if (n < 2 || n > limits.operands) return `${n} operand${n === 1 ? '' : 's'}; a task has 2..${limits.operands}`;
  const op = e.operators.find((o) => !limits.operators.includes(o));
  if (op !== undefined) return `operator ${show(op)} is not allowed; allowed: ${show(limits.operators)}`;
  for (const [k, x] of e.operands.entries()) {
    if (x.length > limits.digits)
      return `operand ${k + 1} (${show(x)}) has ${x.length} digit${x.length === 1 ? '' : 's'}; at most ${limits.digits}`;
    if (x.length < limits.minDigits)
      return `operand ${k + 1} (${show(x)}) has ${x.length} digit${x.length === 1 ? '' : 's'}; at least ${limits.minDigits}`;
  }
  return undefined;
}

/**
 * Draws one operand: first its length in minDigits..digits, so short numbers are not
 * swamped. With minDigits 1 the draws are exactly those made before minDigits existed.
 */
function operand(rng: Rng, d: ArithmeticDifficulty): number {
  const len = d.minDigits + rng.int(d.digits - d.minDigits + 1);
  const lo = len === 1 ? 0 : 10 ** (len - 1);
  return lo + rng.int(10 ** len - lo);
}

/** The difficulty's schema: the defaults above, integers in range, an operator set of distinct ops, scratchpad for sums only. */
export const ArithmeticDifficultySchema = z
  .strictObject({
    digits: intIn(1, 4).default(DEFAULTS.digits),
    minDigits: intIn(1, 4).default(DEFAULTS.minDigits),
    operands: intIn(2, 6).default(DEFAULTS.operands),
    operators: z.string().min(1, `a non-empty subset of '${OPERATORS}'`).default(DEFAULTS.operators),
    scratchpad: z.boolean().default(DEFAULTS.scratchpad),
  })
  .superRefine((d, ctx) => {
    if (d.minDigits > d.digits)
      ctx.addIssue({
        code: 'custom',
        path: ['minDigits'],
        message: `must be at most digits (${d.digits}), got ${d.minDigits}`,
      });
    for (const [i, op] of [...d.operators].entries()) {
      if (!OPERATORS.includes(op))
        ctx.addIssue({
          code: 'custom',
          path: ['operators'],
          message: `may only contain '${OPERATORS}', got ${show(op)} in ${show(d.operators)}`,
        });
      else if (d.operators.indexOf(op) !== i)
        ctx.addIssue({
          code: 'custom',
          path: ['operators'],
          message: `lists ${show(op)} twice in ${show(d.operators)}`,
        });
    }
    if (d.scratchpad && d.operators !== '+')
      ctx.addIssue({ code: 'custom', path: ['scratchpad'], message: `needs operators '+', got ${show(d.operators)}` });
  });

/** The arithmetic task family. */
export const arithmetic: TaskFamily<ArithmeticDifficulty> = {
  name: 'arithmetic',
  defaults: DEFAULTS,

  difficulty: ArithmeticDifficultySchema,
  validate: (d, where = 'tasks.difficulty') => parseOptions(ArithmeticDifficultySchema, d, where),

  generate(rng: Rng, d: ArithmeticDifficulty, index: number): Task {
    const values = [operand(rng, d)];
    let expr = String(values[0]);
    for (let k = 1; k < d.operands; k++) {
      values.push(operand(rng, d));
      expr += d.operators[rng.int(d.operators.length)] + String(values[k]);
    }
    const prompt = `${expr}=`;
    const task: Task = {
      id: `arithmetic-${index}`,
      family: 'arithmetic',
      prompt,
      answer: evaluateArithmetic(prompt).toString(),
    };
    if (d.scratchpad) task.target = scratchpadTarget(values, rng); // only drawn when asked, so plain task sets are what they were
    return task;
  },

  parseAnswer: parseArithmeticOutput,

  verify(task: Task, output: string): boolean {
    return verifyWith('arithmetic', parseArithmeticOutput, task, output);
  },

  /** Between 2 and `limits.operands` operands, each of minDigits..digits digits, operators from `limits.operators`. */
  parseProposal(text: string, limits: ArithmeticDifficulty): ParsedProposal {
    const bounds = arithmetic.validate(limits); // the caller's bug if this throws, not the model's
    const e = readExpression(text);
    if ('error' in e) return e;
    const wrong = outOfLimits(e, bounds);
    if (wrong !== undefined) return { error: `${wrong} in ${show(text)}` };
    return {
      task: { id: 'proposed', family: 'arithmetic', prompt: text, answer: evaluateArithmetic(text).toString() },
    };
  },

  /**
   * `{ operands, digits (longest operand), minDigits (shortest), totalDigits }`, read from the
   * prompt, and for a sum `carries`: the columns that carry. Why carries: they are what makes a
   * sum hard (measured on the chat base, a self-play proposer settled on carry-free two-digit
   * sums such as 23+43, which digit counts alone cannot tell from 47+85).
   */
  measure(task: Task): Record<string, number> {
    if (task.family !== 'arithmetic')
      throw new Error(`arithmetic: cannot measure task '${task.id}' of family '${task.family}'`);
    const e = readExpression(task.prompt);
    if ('error' in e) throw new Error(`arithmetic: cannot measure task '${task.id}': ${e.error}`);
    const lengths = e.operands.map((x) => x.length);
    const sizes = {
      operands: lengths.length,
      digits: Math.max(...lengths),
      minDigits: Math.min(...lengths),
      totalDigits: lengths.reduce((a, b) => a + b, 0),
    };
    return e.operators.every((op) => op === '+') ? { ...sizes, carries: carries(e.operands) } : sizes;
  },
};
