/**
 * Countdown, TinyZero's task: reach a target with + - * / and parentheses, using every given
 * number exactly once. A task carries its numbers and target as `fields` ({ nums, target },
 * TinyZero's dataset columns); its `answer` is one solution (a generated task's) or the
 * target itself (a dataset row's). The verifier has TinyZero's rules (verl's countdown.py):
 * the expression is the last `<answer>...</answer>` (the whole completion when it has no
 * tags; the format judge asks for them), the multiset of its numbers must equal the given
 * ones, and its value must equal the target. It reads the expression with its own
 * recursive-descent parser over exact fractions: model text is never evaluated as code.
 */
import { z } from 'zod';
import type { Task } from '../core/types.js';
import type { ParsedAnswer, TaskFamily } from '../core/task-family.js';
import type { Rng } from '../util/rng.js';
import { intIn, invalid, parseDifficulty, show } from './common.js';

/** The generator's knobs: how many numbers, their largest value, and the largest target. */
export interface CountdownDifficulty {
  numbers: number;
  maxNumber: number;
  maxTarget: number;
}

const DIFFICULTY = z.strictObject({
  numbers: intIn(2, 6).default(3),
  maxNumber: intIn(2, 100).default(20),
  maxTarget: intIn(1, 10000).default(100),
});

/** An exact rational n/d, d > 0, in lowest terms. */
type Q = [bigint, bigint];
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
function q(n: bigint, d: bigint): Q {
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d) || 1n;
  return [n / g, d / g];
}

/** What an expression is: its exact value and the numbers it uses, or why it is not one. */
export type Parsed = { value: Q; numbers: number[] } | { error: string };

/**
 * Parses `expr` (integers, + - * /, unary minus, parentheses, spaces) and computes it
 * exactly. Grammar: sum := product (('+'|'-') product)*; product := unary (('*'|'/') unary)*;
 * unary := '-' unary | atom; atom := integer | '(' sum ')'. Division by zero is an error.
 */
export function parseExpression(expr: string): Parsed {
  let i = 0;
  const numbers: number[] = [];
  const space = () => {
    while (expr[i] === ' ' || expr[i] === '\t') i++;
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i} of ${show(expr, 60)}`);
  };
  const atom = (depth: number): Q => {
    space();
    if (depth > 50) fail('too deeply nested');
    if (expr[i] === '(') {
      i++;
      const v = sum(depth + 1);
      space();
      if (expr[i] !== ')') fail("expected ')'");
      i++;
      return v;
    }
    const m = /^\d+/.exec(expr.slice(i));
    if (!m) fail(i < expr.length ? `unexpected ${show(expr[i])}` : 'unexpected end');
    if (m![0].length > 9) fail('number too long');
    i += m![0].length;
    numbers.push(Number(m![0]));
    return [BigInt(m![0]), 1n];
  };
  const unary = (depth: number): Q => {
    space();
    if (expr[i] === '-') {
      i++;
      const [n, d] = unary(depth + 1);
      return [-n, d];
    }
    return atom(depth);
  };
  const product = (depth: number): Q => {
    let v = unary(depth);
    for (space(); expr[i] === '*' || expr[i] === '/'; space()) {
      const op = expr[i++];
      const [n, d] = unary(depth);
      if (op === '/' && n === 0n) fail('division by zero');
      v = op === '*' ? q(v[0] * n, v[1] * d) : q(v[0] * d, v[1] * n);
    }
    return v;
  };
  const sum = (depth: number): Q => {
    let v = product(depth);
    for (space(); expr[i] === '+' || expr[i] === '-'; space()) {
      const op = expr[i++];
      const [n, d] = product(depth);
      v = q(op === '+' ? v[0] * d + n * v[1] : v[0] * d - n * v[1], v[1] * d);
    }
    return v;
  };
  try {
    const value = sum(0);
    space();
    if (i < expr.length) fail(`unexpected ${show(expr[i])}`);
    return { value, numbers };
  } catch (e) {
    if (e instanceof SyntaxError) return { error: e.message };
    throw e;
  }
}

/** The expression of a completion: the last `<answer>...</answer>`, else all of it, trimmed. */
export function countdownExpression(output: string): string {
  const all = [...output.matchAll(/<answer>([\s\S]*?)<\/answer>/g)];
  return (all.length > 0 ? all[all.length - 1][1] : output).trim();
}

/** The task's numbers and target, from its fields (the target may also be its answer); throws naming what is missing. */
export function countdownSpec(task: Task): { nums: number[]; target: Q } {
  const nums = task.fields?.nums;
  if (!Array.isArray(nums) || nums.length === 0 || !nums.every((n) => Number.isInteger(n) && n >= 0))
    throw new Error(
      `countdown: task '${task.id}' needs fields.nums, a list of non-negative integers; got ${show(nums)}`,
    );
  const raw = task.fields?.target ?? task.answer;
  const parsed =
    typeof raw === 'number' ? parseExpression(String(raw)) : typeof raw === 'string' ? parseExpression(raw) : undefined;
  if (!parsed || 'error' in parsed)
    throw new Error(
      `countdown: task '${task.id}' needs fields.target (or an answer) that is a number; got ${show(raw)}`,
    );
  return { nums: nums as number[], target: parsed.value };
}

const sameNumbers = (a: readonly number[], b: readonly number[]) => {
  const [x, y] = [[...a].sort((m, n) => m - n), [...b].sort((m, n) => m - n)];
  return x.length === y.length && x.every((v, k) => v === y[k]);
};

/** Why `output` does not solve `task`, or undefined when it does. */
export function countdownError(task: Task, output: string): string | undefined {
  const { nums, target } = countdownSpec(task);
  const parsed = parseExpression(countdownExpression(output));
  if ('error' in parsed) return parsed.error;
  if (!sameNumbers(parsed.numbers, nums)) return `uses ${show(parsed.numbers)}, not each of ${show(nums)} exactly once`;
  if (parsed.value[0] !== target[0] || parsed.value[1] !== target[1])
    return `equals ${parsed.value[0]}${parsed.value[1] === 1n ? '' : `/${parsed.value[1]}`}, not the target`;
  return undefined;
}

// A random expression over all of `nums` in drawn order, as text and exact value.
function randomExpression(rng: Rng, nums: readonly number[]): { text: string; value: Q } {
  if (nums.length === 1) return { text: String(nums[0]), value: [BigInt(nums[0]), 1n] };
  const cut = 1 + rng.int(nums.length - 1);
  const [l, r] = [randomExpression(rng, nums.slice(0, cut)), randomExpression(rng, nums.slice(cut))];
  const op = '+-*/'[rng.int(4)];
  if (op === '/' && r.value[0] === 0n)
    return {
      text: `(${l.text} + ${r.text})`,
      value: q(l.value[0] * r.value[1] + r.value[0] * l.value[1], l.value[1] * r.value[1]),
    };
  const [a, b, c, d] = [l.value[0], l.value[1], r.value[0], r.value[1]];
  const value =
    op === '+'
      ? q(a * d + c * b, b * d)
      : op === '-'
        ? q(a * d - c * b, b * d)
        : op === '*'
          ? q(a * c, b * d)
          : q(a * d, b * c);
  return { text: `(${l.text} ${op} ${r.text})`, value };
}

const NAME = 'countdown';

export const countdown: TaskFamily<CountdownDifficulty> = {
  name: NAME,
  defaults: { numbers: 3, maxNumber: 20, maxTarget: 100 },
  difficulty: DIFFICULTY,
  validate: (d: unknown, where = 'tasks.difficulty') => parseDifficulty(DIFFICULTY, d, where),
  /**
   * Numbers drawn from 1..maxNumber, then random expressions over them until one reaches an
   * integer target in 1..maxTarget: every task has a solution, its answer. The prompt is
   * short, for small models; the tags a reasoning run wants are asked for by the role's
   * system message (or a dataset's own prompts).
   */
  generate(rng, d, index) {
    for (let tries = 0; ; tries++) {
      const nums = Array.from({ length: d.numbers }, () => 1 + rng.int(d.maxNumber));
      const e = randomExpression(rng, nums);
      const [n, den] = e.value;
      if (den !== 1n || n < 1n || n > BigInt(d.maxTarget)) {
        if (tries > 10000) throw new Error(`countdown: no target in 1..${d.maxTarget} found for ${show(d)}`);
        continue;
      }
      const shown = [...nums].sort((a, b) => a - b);
      const target = Number(n);
      return {
        id: `${NAME}-${index}`,
        family: NAME,
        prompt: `Use ${shown.join(', ')} once each with + - * / to make ${target}.`,
        answer: e.text.slice(1, -1),
        fields: { nums: shown, target },
      };
    }
  },
  parseAnswer(output): ParsedAnswer {
    const expr = countdownExpression(output);
    const parsed = parseExpression(expr);
    return 'error' in parsed ? invalid(parsed.error) : { valid: true, value: expr };
  },
  verify(task, output) {
    if (task.family !== NAME) throw new Error(`${NAME}: cannot verify task '${task.id}' of family '${task.family}'`);
    return countdownError(task, output) === undefined;
  },
};
