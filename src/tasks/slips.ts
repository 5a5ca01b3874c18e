/** The wrong answers an environment makes from a right one: one digit changed (a judge's planted slips, a judge base's near misses). */
import type { Rng } from '../util/rng.js';

/**
 * `answer` with one of its digits, drawn at random, changed to another (never to a leading
 * zero): to any other digit, or with `change` 'adjacent' to one a step up or down (0 and 9 have
 * one neighbour); undefined when it has no digit.
 */
export function digitSlip(answer: string, rng: Rng, change: 'any' | 'adjacent' = 'any'): string | undefined {
  const digits = [...answer].flatMap((ch, i) => (ch >= '0' && ch <= '9' ? [i] : []));
  if (!digits.length) return undefined;
  const at = digits[rng.int(digits.length)];
  const leading = at === digits[0] && digits.length > 1;
  const near = (d: string) => change === 'any' || Math.abs(Number(d) - Number(answer[at])) === 1;
  const choices = '0123456789'.split('').filter((d) => d !== answer[at] && !(leading && d === '0') && near(d));
  return answer.slice(0, at) + choices[rng.int(choices.length)] + answer.slice(at + 1);
}
