/**
 * Where a completion's final answer is, in math-verify's order of preference: the last
 * `\boxed{}` (or `\fbox{}`), else what follows the last answer marker ("the final answer
 * is", "the answer is", "answer:", GSM8K's "####"), else the last `$...$` (or `\(...\)`,
 * `\[...\]`) span, else the whole completion when it reads as a math answer (no words), else
 * the last number, as verl's and lm-eval's math rewards fall back to it. Text only: nothing
 * here is evaluated.
 */
import { readsAsMath } from './equal.js';
import { matching, readAnswer } from './latex.js';

/** The content of the last `\boxed{...}` / `\fbox{...}` (braces balanced), or `\boxed 5`; undefined when none. */
export function lastBoxed(text: string): string | undefined {
  const boxed = text.lastIndexOf('\\boxed');
  const fbox = text.lastIndexOf('\\fbox');
  if (boxed < 0 && fbox < 0) return undefined;
  let i = boxed > fbox ? boxed + 6 : fbox + 5;
  while (text[i] === ' ') i++;
  // `\boxed 5`: the token up to the next space or dollar
  if (text[i] !== '{') return /^[^\s$]+/.exec(text.slice(i))?.[0];
  const close = matching(text, i);
  return close < 0 ? undefined : text.slice(i + 1, close);
}

const MARKERS = /(?:final answer is|the answer is|answer\s*:|####)/gi;

/** What follows the last answer marker, cut at its first line (a `$...$` span kept whole), or undefined. */
export function afterMarker(text: string): string | undefined {
  let last: RegExpExecArray | undefined;
  for (const m of text.matchAll(MARKERS)) last = m;
  if (!last) return undefined;
  let rest = text.slice(last.index + last[0].length).trim();
  const math = /^\$\$?([^$]+)\$\$?/.exec(rest) ?? /^\\\(([\s\S]+?)\\\)/.exec(rest) ?? /^\\\[([\s\S]+?)\\\]/.exec(rest);
  if (math) return math[1].trim();
  rest = rest.split('\n')[0];
  // a sentence's end ("... is 12. I hope it is correct") is no part of the answer
  rest = rest.replace(/\.(\s.*)?$/, '').trim();
  return rest === '' ? undefined : rest;
}

/** A number as people write them: a sign, thousands separators, a decimal part, or a fraction `a/b`. */
const NUMBER = /(?<![A-Za-z])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*\/\s*\d+)?|-?\.\d+/g;

/** The last number in the text (verl's and lm-eval's fallback), or undefined. */
export function lastNumber(text: string): string | undefined {
  let last: string | undefined;
  for (const m of text.matchAll(NUMBER)) last = m[0];
  return last;
}

/** The completion's final answer, by the rules above; undefined when it has none. */
export function extractAnswer(text: string): string | undefined {
  const boxed = lastBoxed(text);
  if (boxed !== undefined && boxed.trim() !== '') return boxed.trim();
  const marked = afterMarker(text);
  if (marked !== undefined) return marked;
  let span: string | undefined;
  for (const m of text.matchAll(/\$\$([^$]+)\$\$|\$([^$\n]+)\$|\\\(([^\n]+?)\\\)|\\\[([\s\S]+?)\\\]/g))
    span = m[1] ?? m[2] ?? m[3] ?? m[4];
  if (span !== undefined && span.trim() !== '') return span.trim();
  const whole = text.trim();
  if (whole !== '' && whole.length <= 200 && readsAsMath(readAnswer(whole))) return whole;
  return lastNumber(text);
}
