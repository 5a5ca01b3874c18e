/**
 * Answers with working for sums: `12+34+56=` is answered `12+56=68,68+34=102` (or any other
 * order of the operands), one partial sum per step, the last result being the answer.
 * Different orders reach the right answer by different paths, while a slip on one path
 * lands on a wrong answer of its own: errors scatter, which is what a majority vote needs.
 */
import type { Rng } from '../util/rng.js';
import { invalid } from './common.js';
import type { ParsedAnswer } from './types.js';

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
