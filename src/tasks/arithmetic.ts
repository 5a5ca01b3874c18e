/**
 * Integer arithmetic: prompts like `12+7*3=`, answers like `33`. Answers come from a small
 * evaluator of our own (never eval) using BigInt, so they are exact at every difficulty:
 * 9999^6 is past 2^53, and a wrong reference answer would poison the reward.
 */
import type { Task } from '../core/types.js';
import type { Rng } from '../util/rng.js';
import { difficultyFields, intField, invalid, show, verifyWith } from './common.js';
import { parseScratchpad, scratchpadTarget } from './scratchpad.js';
import type { ParsedAnswer, TaskFamily } from './types.js';

/** The arithmetic difficulty knob. */
export interface ArithmeticDifficulty {
  /** maximum digits per operand, 1..4 (each operand's length is drawn from 1..digits) */
  digits: number;
  /** exact number of operands, 2..6 */
  operands: number;
  /** the operators to draw from: a non-empty subset of '+-*', e.g. '+' or '+-' */
  operators: string;
  /** give each task a `target` with working (see scratchpad.ts); sums only */
  scratchpad: boolean;
}

const OPERATORS = '+-*';

/** Frozen so no caller can change the defaults for everyone else. */
const DEFAULTS: ArithmeticDifficulty = Object.freeze({ digits: 2, operands: 2, operators: '+', scratchpad: false });

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
    if (!OPERATORS.includes(body[i])) throw new Error(`arithmetic: unexpected ${show(body[i])} at position ${i} of ${show(expr)}`);
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
  if (digits.length > 1 && digits[0] === '0') return invalid(`leading zero in ${show(text)}: write integers without leading zeros`);
  if (sign && digits === '0') return invalid(`'-0' is not an accepted spelling of zero: write 0`);
  return { valid: true, value: text };
}

/** An integer answer, or working ending in one (`a+b=c,...`), whose last result is the value. */
export function parseArithmeticOutput(output: string): ParsedAnswer {
  if (typeof output === 'string' && output.includes('=')) return parseScratchpad(output.trim());
  return parseIntegerAnswer(output);
}

/** Draws one operand: first its length in 1..digits, so short numbers are not swamped. */
function operand(rng: Rng, digits: number): number {
  const len = 1 + rng.int(digits);
  const lo = len === 1 ? 0 : 10 ** (len - 1);
  return lo + rng.int(10 ** len - lo);
}

/** The arithmetic task family. */
export const arithmetic: TaskFamily<ArithmeticDifficulty> = {
  name: 'arithmetic',
  defaults: DEFAULTS,

  validate(d: unknown): ArithmeticDifficulty {
    const f = difficultyFields('arithmetic', d, DEFAULTS);
    const digits = intField('arithmetic', 'digits', f.digits, 1, 4);
    const operands = intField('arithmetic', 'operands', f.operands, 2, 6);
    const operators = f.operators;
    if (typeof operators !== 'string' || operators.length === 0) {
      throw new Error(`arithmetic: operators must be a non-empty subset of '${OPERATORS}', got ${show(operators)}`);
    }
    for (const [i, op] of [...operators].entries()) {
      if (!OPERATORS.includes(op)) throw new Error(`arithmetic: operators may only contain '${OPERATORS}', got ${show(op)} in ${show(operators)}`);
      if (operators.indexOf(op) !== i) throw new Error(`arithmetic: operators lists ${show(op)} twice in ${show(operators)}`);
    }
    const scratchpad = f.scratchpad;
    if (typeof scratchpad !== 'boolean') throw new Error(`arithmetic: scratchpad must be true or false, got ${show(scratchpad)}`);
    if (scratchpad && operators !== '+') throw new Error(`arithmetic: scratchpad needs operators '+', got ${show(operators)}`);
    return { digits, operands, operators, scratchpad };
  },

  generate(rng: Rng, d: ArithmeticDifficulty, index: number): Task {
    const values = [operand(rng, d.digits)];
    let expr = String(values[0]);
    for (let k = 1; k < d.operands; k++) {
      values.push(operand(rng, d.digits));
      expr += d.operators[rng.int(d.operators.length)] + String(values[k]);
    }
    const prompt = `${expr}=`;
    const task: Task = { id: `arithmetic-${index}`, family: 'arithmetic', prompt, answer: evaluateArithmetic(prompt).toString() };
    if (d.scratchpad) task.target = scratchpadTarget(values, rng); // only drawn when asked, so plain task sets are what they were
    return task;
  },

  parseAnswer: parseArithmeticOutput,

  verify(task: Task, output: string): boolean {
    return verifyWith('arithmetic', parseArithmeticOutput, task, output);
  },
};
