/**
 * Each token's text as bytes, for following a generated text by its ids alone (stop strings,
 * src/models/stop-strings.ts).
 */
import type { Tokenizer } from './types.js';

let count = 0;

/**
 * Each token's text as UTF-8 bytes, what decoding it among others adds to the text: token i's
 * are `bytes[offsets[i] .. offsets[i + 1])`; a special token's are none. Held in shared memory,
 * so a replica thread reads the same arrays (a message carries them without a copy). As JSON it
 * is a short key, so requests that name the same pieces group together (BatchingServer).
 */
export class TokenPieces {
  readonly key = `pieces-${++count}`;
  constructor(
    readonly bytes: Uint8Array,
    readonly offsets: Uint32Array,
  ) {}

  /** Pieces from each token's bytes, in id order. */
  static of(pieces: readonly Uint8Array[]): TokenPieces {
    const total = pieces.reduce((n, p) => n + p.length, 0);
    const bytes = new Uint8Array(new SharedArrayBuffer(Math.max(1, total)));
    const offsets = new Uint32Array(new SharedArrayBuffer(4 * (pieces.length + 1)));
    let at = 0;
    pieces.forEach((p, i) => {
      offsets[i] = at;
      bytes.set(p, at);
      at += p.length;
    });
    offsets[pieces.length] = at;
    return new TokenPieces(bytes, offsets);
  }

  toJSON(): string {
    return this.key;
  }
}

const encoder = new TextEncoder();
type Vocabulary = Pick<Tokenizer, 'size' | 'decode' | 'bytes'>;
const made = new WeakMap<Vocabulary, TokenPieces>();

/**
 * The pieces of `tokenizer`'s vocabulary, made once per tokenizer: each id's `bytes` when the
 * tokenizer knows them (a byte-level BPE token may hold part of a character, which decoding it
 * alone would show as U+FFFD), else its decoded text.
 */
export function tokenPieces(tokenizer: Vocabulary): TokenPieces {
  let p = made.get(tokenizer);
  if (!p) {
    p = TokenPieces.of(
      Array.from(
        { length: tokenizer.size },
        (_, id) => tokenizer.bytes?.(id) ?? encoder.encode(tokenizer.decode([id])),
      ),
    );
    made.set(tokenizer, p);
  }
  return p;
}
