/**
 * Stop strings during generation, checked on the ids alone: a tokenizer's text of each token
 * as UTF-8 bytes (TokenPieces, made by src/tokenizer/pieces.ts) lets generate() follow each
 * row's text as it grows, in this thread or in a replica's, without the tokenizer. A stop
 * string may span tokens ("\n\n" as two "\n" tokens, or a token ending "ans" and one starting
 * "wer:"): each row keeps the last bytes that could begin one.
 */
import type { TokenPieces } from '../tokenizer/pieces.js';

/** Why `stop` cannot be a list of stop strings, or undefined. */
export function stopStringsProblem(stop: unknown): string | undefined {
  if (!Array.isArray(stop)) return `stop strings must be a list of strings, got ${JSON.stringify(stop)}`;
  const bad = stop.findIndex((s) => typeof s !== 'string' || s === '');
  if (bad >= 0)
    return `stop string ${bad} is ${JSON.stringify(stop[bad])}: each must be non-empty text (an empty one would end every answer at once)`;
  return undefined;
}

const encoder = new TextEncoder();

/**
 * The stop strings of a batch's rows. `push` is told each new token of a row and answers the
 * stop string its text now holds, if any: the occurrence that starts first among those the
 * token completed (an earlier-ending one would have stopped the row a token before). vLLM
 * tries its stop strings in list order instead; the two differ only when one token completes
 * two of them.
 */
export class StopStrings {
  private readonly targets: Uint8Array[];
  /** bytes a row keeps of its text: one less than the longest stop string, all a new token can complete */
  private readonly keep: number;
  private readonly tails: Uint8Array[];

  constructor(
    readonly strings: readonly string[],
    private readonly pieces: Pick<TokenPieces, 'bytes' | 'offsets'>,
    rows: number,
  ) {
    const problem = stopStringsProblem(strings);
    if (problem) throw new Error(`generate: ${problem}`);
    this.targets = strings.map((s) => encoder.encode(s));
    this.keep = Math.max(...this.targets.map((t) => t.length)) - 1;
    this.tails = Array.from({ length: rows }, () => new Uint8Array(0));
  }

  /** After row `b` emitted `id`: the stop string its text now contains, or undefined. */
  push(b: number, id: number): string | undefined {
    const { bytes, offsets } = this.pieces;
    const piece = id + 1 < offsets.length ? bytes.subarray(offsets[id], offsets[id + 1]) : new Uint8Array(0);
    if (piece.length === 0) return undefined;
    const tail = this.tails[b];
    const text = new Uint8Array(tail.length + piece.length);
    text.set(tail);
    text.set(piece, tail.length);
    let best = -1;
    let found: string | undefined;
    this.targets.forEach((t, k) => {
      // occurrences that end in the new piece: start from the first that can
      for (let at = Math.max(0, tail.length - t.length + 1); at + t.length <= text.length; at++) {
        if (best >= 0 && at >= best) break;
        let i = 0;
        while (i < t.length && text[at + i] === t[i]) i++;
        if (i === t.length) {
          best = at;
          found = this.strings[k];
          break;
        }
      }
    });
    this.tails[b] = text.slice(Math.max(0, text.length - this.keep));
    return found;
  }
}

/**
 * The text of a generation that a reward reads and a role parses: its tokens decoded, without
 * the EOS or stop token it ended on, and cut before the stop string that ended it (vLLM's
 * default, include_stop_str_in_output false). The tokens keep all of it, the token that
 * completed the stop string included (what is trained).
 */
export function completionText(
  decode: (ids: readonly number[]) => string,
  g: { tokens: readonly number[]; stopped: boolean; stopString?: string },
): string {
  if (g.stopString === undefined) return decode(g.stopped ? g.tokens.slice(0, -1) : g.tokens);
  const text = decode(g.tokens);
  const at = text.indexOf(g.stopString);
  return at >= 0 ? text.slice(0, at) : text;
}
