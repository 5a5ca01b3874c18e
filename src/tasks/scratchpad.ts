/**
 * Answers with working for sums: `12+34+56=` is answered `12+56=68,68+34=102` (or any other
 * order of the operands), one partial sum per step, the last result being the answer.
 * Different orders reach the right answer by different paths, while a slip on one path
 * lands on a wrong answer of its own: errors scatter, which is what a majority vote needs.
 */
import type { Rng } from '../util/rng.js';
import { invalid } from './common.js';
import type { ParsedAnswer } from '../core/task-family.js';

/** The working for adding `operands` in a random order drawn from `rng`. */
export function scratchpadTarget(operands: readonly number[], rng: Rng): string {
  const order = [...operands];
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const steps: string[] = [];
  let total = order[0];
  for (const x of order.slice(1)) {
    steps.push(`${total}+${x}=${total + x}`);
    total += x;
  }
  return steps.join(',');
}

const STEP = /^(0|[1-9]\d*)\+(0|[1-9]\d*)=(0|[1-9]\d*)$/;

/**
 * Reads working like `12+56=68,68+34=102`: every step must have the form `a+b=c`; the
 * value is the last step's result. The steps' sums are not checked: only the answer is
 * rewarded, and the text is parsed, never evaluated.
 */
export function parseScratchpad(text: string): ParsedAnswer {
  const steps = text.split(',');
  for (const [i, step] of steps.entries()) {
    const m = STEP.exec(step);
    if (!m) return invalid(`step ${i + 1} of the working, ${JSON.stringify(step)}, is not of the form a+b=c`);
  }
  return { valid: true, value: STEP.exec(steps[steps.length - 1])![3] };
}

/** The operands of a sum's prompt, `12+34+56=` gives [12, 34, 56]; null when the prompt is not a sum. */
export function sumOperands(prompt: string): number[] | null {
  const m = /^((?:0|[1-9]\d*)(?:\+(?:0|[1-9]\d*))+)=$/.exec(prompt);
  return m ? m[1].split('+').map(Number) : null;
}

/** What the step checker found: the 1-based index of the first step that breaks a rule (0: none does). */
export type StepCheck = { first: number } | { error: string };

/**
 * A rule checker for working (the environment's truth for a critic): step 1 adds two of the
 * task's operands, each later step adds an operand not yet used to the previous step's
 * result, and every step's sum is right. The first step that breaks any of these is the
 * first wrong step. Text that is not working of exactly `operands.length - 1` steps is an
 * error, not a wrong step: it has no step to name. Parsed, never evaluated.
 */
export function firstWrongStep(operands: readonly number[], text: string): StepCheck {
  const steps = text.split(',');
  if (steps.length !== operands.length - 1)
    return { error: `working for ${operands.length} operands has ${operands.length - 1} steps, got ${steps.length}` };
  const parsed: number[][] = [];
  for (const [i, step] of steps.entries()) {
    const m = STEP.exec(step);
    if (!m) return { error: `step ${i + 1}, ${JSON.stringify(step)}, is not of the form a+b=c` };
    parsed.push([Number(m[1]), Number(m[2]), Number(m[3])]);
  }
  const unused = [...operands];
  const take = (x: number) => {
    const i = unused.indexOf(x);
    if (i < 0) return false;
    unused.splice(i, 1);
    return true;
  };
  for (const [i, [a, b, c]] of parsed.entries()) {
    const first = i === 0 ? take(a) : a === parsed[i - 1][2];
    if (!first || !take(b) || a + b !== c) return { first: i + 1 };
  }
  return { first: 0 };
}

/**
 * The results of right working for the sum of `operands` that starts with `working`'s first
 * step and adds the rest in `working`'s order: `12+56=69,69+34=103` gives `68,102`, and so
 * does `12+56=68,68+35=103` (34 misread: the right working adds the task's 34). An operand
 * that is not one the task has left is replaced by the first that is. What a critic that
 * solves on from the first step should write: right working gives its own results, and the
 * first step whose result differs from them is where the working first goes wrong (unless
 * the first step itself misreads an operand). Null when `working` is not steps a+b=c.
 */
export function rightResults(operands: readonly number[], working: string): string | null {
  const unused = [...operands];
  const take = (x: number) => {
    const i = unused.indexOf(x);
    return i >= 0 ? unused.splice(i, 1)[0] : unused.length ? unused.shift()! : x;
  };
  const sums: number[] = [];
  for (const step of working.split(',')) {
    const m = STEP.exec(step);
    if (!m) return null;
    if (sums.length === 0) {
      // the first step's operands are taken as shown, and leave the task's others
      for (const x of [Number(m[1]), Number(m[2])]) if (unused.includes(x)) unused.splice(unused.indexOf(x), 1);
      sums.push(Number(m[1]) + Number(m[2]));
    } else sums.push(sums[sums.length - 1] + take(Number(m[2])));
  }
  return sums.join(',');
}

/**
 * Per step, whether working's shown result is right working's from its first step
 * (rightResults): what a critic that checks and compares should say of each step.
 * `12+56=69,69+34=103` gives [false, false]; null unless every step has the form a+b=c.
 */
export function resultsAgree(operands: readonly number[], working: string): boolean[] | null {
  const right = rightResults(operands, working);
  return right === null ? null : stepResults(working)!.map((r, k) => r === right.split(',')[k]);
}

/**
 * What a solve-first judge's own answer to `task` is paid against: `text` itself when it is
 * right working for the task's sum in any order (firstWrongStep finds no wrong step), else the
 * task's working (`target`) or its answer. A task that is not a sum, or an answer without
 * working, is paid against the answer as before.
 */
export function ownTruth(task: { prompt: string; answer?: string; target?: string }, text: string): string | undefined {
  const operands = sumOperands(task.prompt);
  const check = operands ? firstWrongStep(operands, text) : null;
  return check && 'first' in check && check.first === 0 ? text : (task.target ?? task.answer);
}

/** The results of working, `12+56=68,68+34=102` gives ['68', '102']; null unless every step has the form a+b=c. */
export function stepResults(working: string): string[] | null {
  const results: string[] = [];
  for (const step of working.split(',')) {
    const m = STEP.exec(step);
    if (!m) return null;
    results.push(m[3]);
  }
  return results;
}

/**
 * Right working with one planted error: step `at`'s (1-based) result becomes `value`, and
 * every later step adds rightly from it, as a carry slip the rest of the working follows
 * (only step `at` is wrong, and the final answer is wrong with it).
 */
export function plantError(working: string, at: number, value: number): string {
  const steps = working.split(',').map((s) => STEP.exec(s)!.slice(1, 4).map(Number));
  if (at < 1 || at > steps.length) throw new RangeError(`step ${at} of ${steps.length}`);
  if (value === steps[at - 1][2] || value < 0 || !Number.isSafeInteger(value))
    throw new RangeError(`a planted result must be a different whole number, got ${value}`);
  steps[at - 1][2] = value;
  for (let i = at; i < steps.length; i++) {
    steps[i][0] = steps[i - 1][2];
    steps[i][2] = steps[i][0] + steps[i][1];
  }
  return steps.map(([a, b, c]) => `${a}+${b}=${c}`).join(',');
}
