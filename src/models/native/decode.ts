import type { Sgemm } from '../../backend/native/library.js';
import type { TinyLM } from '../tinylm.js';
import { geluRows } from './gelu-table.js';
import { affine, layerNormRows } from './ops.js';

const NEG = -1e9; // as TinyLM: added to masked attention scores

/**
 * TinyLM's forward pass for generation written as one step on plain arrays: the dense
 * products go to a native sgemm, attention over the key/value cache, layer norms and GELU
 * are loops. A tfjs decode step is about 200 kernel calls whose overhead outweighs the
 * arithmetic at this size; here a step is a dozen library calls. Same maths as
 * `TinyLM.forward` (left padding masked as keys, positions from the first real token, keys
 * scaled after the query as there), checked against it to 1e-4 by the tests.
 * Weights are read at construction (a copy on wasm, the variable's own array on cpu, never
 * written): build a new decoder after the weights change.
 */
export class NativeDecoder {
  private readonly w: Record<string, Float32Array> = {};
  private readonly cache: KVCache;
  /** the step's arrays for the last T fed (a decode feeds the prompt, then T = 1 at every step) */
  private step?: Scratch;
  private readonly shape: string;
  private past = 0;
  /** rows fed now: the first B of the arrays' rows (keep() narrows it) */
  private B: number;
  private leftPad: readonly number[];
  /** rows the arrays hold (the shape they are kept under for the next decode) */
  private readonly allocated: number;

  constructor(
    private readonly model: TinyLM,
    private readonly sgemm: Sgemm,
    B: number,
    leftPad: readonly number[],
  ) {
    this.B = this.allocated = B;
    this.leftPad = leftPad;
    for (const [name, v] of Object.entries(model.weights)) this.w[name] = v.dataSync() as Float32Array;
    const { context, dModel: d, nLayers, nHeads: H, vocabSize } = model.config;
    this.shape = `${B} ${context} ${d} ${H} ${nLayers} ${vocabSize}`;
    // every position a step reads was written earlier in this decode, so a reused cache needs no clearing
    this.cache =
      (idle.take(`kv ${this.shape}`) as KVCache | undefined) ??
      (() => {
        const keys = Array.from({ length: nLayers }, () => new Float32Array(B * context * d));
        const vals = Array.from({ length: nLayers }, () => new Float32Array(B * context * d));
        return {
          keys,
          vals,
          keyViews: keys.map((a) => heads(a, B, H, context * d, d / H)),
          valViews: vals.map((a) => heads(a, B, H, context * d, d / H)),
        };
      })();
  }

  /** Hands this decoder's arrays to the next decoder of the same shape on this thread; the decoder is not to be fed after. */
  release(): void {
    idle.give(`kv ${this.shape}`, this.cache);
    if (this.step) idle.give(`step ${this.step.T} ${this.shape}`, this.step);
    this.step = undefined;
  }

  /**
   * Narrows the batch to `rows` (indices of the rows fed now, in increasing order): their
   * cached keys and values move up to the first rows, and later steps compute only those.
   */
  keep(rows: readonly number[]): void {
    const { dModel: d, context } = this.model.config;
    const { keys, vals } = this.cache;
    rows.forEach((from, to) => {
      if (from < to || (to > 0 && from <= rows[to - 1])) throw new Error('NativeDecoder.keep: rows must increase');
      if (from === to) return;
      for (const a of [...keys, ...vals])
        a.copyWithin(to * context * d, from * context * d, (from * context + this.past) * d);
    });
    this.leftPad = rows.map((i) => this.leftPad[i]);
    this.B = rows.length;
  }

  /** Feeds `tokens` [B, T] (row-major) after the cached ones; returns the last position's logits [B, V], valid until the next feed. */
  feed(tokens: Int32Array, T: number): Float32Array {
    const { B, leftPad, past } = this;
    const { dModel: d, nHeads: H, nLayers, context, vocabSize: V } = this.model.config;
    const { keys, vals, keyViews, valViews } = this.cache;
    if (past + T > context) throw new Error(`tinylm: sequence of ${past + T} tokens exceeds context ${context}`);
    const R = B * T;
    const s = this.scratch(T);
    const { x, normed, q, kv, y, hidden, tmp } = s;
    const tok = this.w.tok_emb,
      pos = this.w.pos_emb;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        const r = b * T + t,
          id = tokens[r],
          p = Math.max(0, past + t - leftPad[b]);
        for (let j = 0; j < d; j++) x[r * d + j] = tok[id * d + j] + pos[p * d + j];
      }
    }
    const scale = 1 / Math.sqrt(d / H);
    for (let i = 0; i < nLayers; i++) {
      const p = `h${i}.`;
      layerNormRows(x, normed, R, d, this.w[p + 'ln1.g'], this.w[p + 'ln1.b']);
      this.affine(normed, R, d, d, p + 'q', q);
      for (const [name, cache] of [
        ['k', keys[i]],
        ['v', vals[i]],
      ] as const) {
        this.affine(normed, R, d, d, p + name, kv);
        for (let b = 0; b < B; b++) {
          const from = b * T * d,
            to = (b * context + past) * d;
          for (let j = 0; j < T * d; j++) cache[to + j] = kv[from + j];
        }
      }
      for (let j = 0; j < R * d; j++) q[j] *= scale; // float32 rounding, as tfjs's q.mul(scale)
      this.attend(s, keyViews[i], valViews[i], T);
      this.affine(y, R, d, d, p + 'proj', tmp);
      for (let j = 0; j < R * d; j++) x[j] += tmp[j];
      layerNormRows(x, normed, R, d, this.w[p + 'ln2.g'], this.w[p + 'ln2.b']);
      this.affine(normed, R, d, 4 * d, p + 'fc', hidden);
      geluRows(hidden, hidden); // GELU = h Φ(h), in place
      this.affine(hidden, R, 4 * d, d, p + 'out', tmp);
      for (let j = 0; j < R * d; j++) x[j] += tmp[j];
    }
    const { last, lastNormed, logits } = s;
    for (let b = 0; b < B; b++) {
      const from = (b * T + T - 1) * d;
      for (let j = 0; j < d; j++) last[b * d + j] = x[from + j];
    }
    layerNormRows(last, lastNormed, B, d, this.w['ln_f.g'], this.w['ln_f.b']);
    this.affine(lastNormed, B, d, V, 'head', logits);
    this.past += T;
    return logits;
  }

  /** The arrays of a step of T tokens, kept while T stays the same. */
  private scratch(T: number): Scratch {
    if (this.step?.T === T) return this.step;
    if (this.step) idle.give(`step ${this.step.T} ${this.shape}`, this.step);
    this.step = idle.take(`step ${T} ${this.shape}`) as Scratch | undefined;
    if (this.step) return this.step;
    const B = this.allocated;
    const { dModel: d, nHeads: H, context, vocabSize: V } = this.model.config;
    const R = B * T,
      f = (n: number) => new Float32Array(n);
    const q = f(R * d),
      y = f(R * d);
    this.step = {
      T,
      x: f(R * d),
      normed: f(R * d),
      q,
      kv: f(R * d),
      y,
      hidden: f(R * 4 * d),
      tmp: f(R * d),
      probs: f(T * context),
      last: f(B * d),
      lastNormed: f(B * d),
      logits: f(B * V),
      qViews: heads(q, B, H, T * d, d / H),
      yViews: heads(y, B, H, T * d, d / H),
    };
    return this.step;
  }

  /**
   * Causal attention of the step's scaled queries q [B*T, d] over the cached keys and values
   * [B, context, d], per row and head: scores and the weighted sum are small native
   * products (strided views, no copies); masking and the softmax are loops.
   */
  private attend(s: Scratch, K: Float32Array[], V: Float32Array[], T: number): void {
    const { B, leftPad, past } = this;
    const { dModel: d, nHeads: H } = this.model.config;
    const hd = d / H,
      S = past + T;
    const { probs, qViews, yViews } = s;
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        const i = b * H + h;
        this.sgemm(false, true, T, S, hd, qViews[i], d, K[i], d, 0, probs, S);
        for (let t = 0; t < T; t++) {
          const o = t * S;
          let max = -Infinity;
          for (let s = 0; s < S; s++) {
            if (s < leftPad[b] || s > past + t) probs[o + s] += NEG;
            if (probs[o + s] > max) max = probs[o + s];
          }
          let total = 0;
          for (let s = 0; s < S; s++) total += probs[o + s] = Math.exp(probs[o + s] - max);
          for (let s = 0; s < S; s++) probs[o + s] /= total;
        }
        this.sgemm(false, false, T, hd, S, probs, S, V[i], d, 0, yViews[i], d);
      }
    }
  }

  /** out [rows, n] = x [rows, k] @ the named layer's weight + its bias. */
  private affine(x: Float32Array, rows: number, k: number, n: number, name: string, out: Float32Array): void {
    affine(this.sgemm, x, rows, k, n, this.w[name + '.w'], this.w[name + '.b'], out);
  }
}

interface Scratch {
  T: number;
  x: Float32Array;
  normed: Float32Array;
  q: Float32Array;
  kv: Float32Array;
  y: Float32Array;
  hidden: Float32Array;
  tmp: Float32Array;
  probs: Float32Array;
  last: Float32Array;
  lastNormed: Float32Array;
  logits: Float32Array;
  /** each row's and head's slice of q and y */
  qViews: Float32Array[];
  yViews: Float32Array[];
}

interface KVCache {
  keys: Float32Array[];
  vals: Float32Array[];
  /** per layer, each row's and head's slice of the keys and values */
  keyViews: Float32Array[][];
  valViews: Float32Array[][];
}

/** Views of each of B rows (`row` floats apart) and H heads (`hd` apart) of a; index b H + h. */
function heads(a: Float32Array, B: number, H: number, row: number, hd: number): Float32Array[] {
  return Array.from({ length: B * H }, (_, i) => a.subarray(Math.floor(i / H) * row + (i % H) * hd));
}

/**
 * The arrays of finished decodes on this thread, by shape, for the next decode to take: a
 * rollout decodes batch after batch of the same shape, and making its thousands of head views
 * and megabytes of arrays anew each time was most of what the collector had to do (measured
 * with V8's sampling heap profiler). The most recent are kept, at most 8 and 256 MB (prompts
 * of many lengths or a large model would otherwise hold memory no decode will take).
 */
const idle = new (class {
  private readonly kept = new Map<string, { v: KVCache | Scratch; bytes: number }>();
  private bytes = 0;
  take(key: string): KVCache | Scratch | undefined {
    const e = this.kept.get(key);
    if (!e) return undefined;
    this.kept.delete(key);
    this.bytes -= e.bytes;
    return e.v;
  }
  give(key: string, v: KVCache | Scratch): void {
    this.take(key);
    const arrays =
      'keys' in v
        ? [...v.keys, ...v.vals]
        : Object.values(v).filter((a): a is Float32Array => a instanceof Float32Array);
    const bytes = arrays.reduce((n, a) => n + a.byteLength, 0);
    this.kept.set(key, { v, bytes });
    this.bytes += bytes;
    for (const [k] of this.kept) {
      if (this.kept.size <= 8 && this.bytes <= 256 * 2 ** 20) break;
      this.take(k);
    }
  }
})();
