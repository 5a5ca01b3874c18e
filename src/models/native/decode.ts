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
  private readonly keys: Float32Array[];
  private readonly vals: Float32Array[];
  private past = 0;

  constructor(private readonly model: TinyLM, private readonly sgemm: Sgemm, private readonly B: number, private readonly leftPad: readonly number[]) {
    for (const [name, v] of Object.entries(model.weights)) this.w[name] = v.dataSync() as Float32Array;
    const { context, dModel, nLayers } = model.config;
    this.keys = Array.from({ length: nLayers }, () => new Float32Array(B * context * dModel));
    this.vals = Array.from({ length: nLayers }, () => new Float32Array(B * context * dModel));
  }

  /** Feeds `tokens` [B, T] (row-major) after the cached ones; returns the last position's logits [B, V]. */
  feed(tokens: Int32Array, T: number): Float32Array {
    const { B, leftPad, past } = this;
    const { dModel: d, nHeads: H, nLayers, context, vocabSize: V } = this.model.config;
    if (past + T > context) throw new Error(`tinylm: sequence of ${past + T} tokens exceeds context ${context}`);
    const R = B * T;
    const x = new Float32Array(R * d);
    const tok = this.w.tok_emb, pos = this.w.pos_emb;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        const r = b * T + t, id = tokens[r], p = Math.max(0, past + t - leftPad[b]);
        for (let j = 0; j < d; j++) x[r * d + j] = tok[id * d + j] + pos[p * d + j];
      }
    }
    const normed = new Float32Array(R * d), q = new Float32Array(R * d), kv = new Float32Array(R * d), y = new Float32Array(R * d);
    const hidden = new Float32Array(R * 4 * d), tmp = new Float32Array(R * d);
    const scale = 1 / Math.sqrt(d / H);
    const probs = new Float32Array(T * (past + T));
    for (let i = 0; i < nLayers; i++) {
      const p = `h${i}.`;
      layerNormRows(x, normed, R, d, this.w[p + 'ln1.g'], this.w[p + 'ln1.b']);
      this.affine(normed, R, d, d, p + 'q', q);
      for (const [name, cache] of [['k', this.keys[i]], ['v', this.vals[i]]] as const) {
        this.affine(normed, R, d, d, p + name, kv);
        for (let b = 0; b < B; b++) cache.set(kv.subarray(b * T * d, (b + 1) * T * d), (b * context + past) * d);
      }
      for (let j = 0; j < R * d; j++) q[j] *= scale; // float32 rounding, as tfjs's q.mul(scale)
      this.attend(q, this.keys[i], this.vals[i], y, T, probs);
      this.affine(y, R, d, d, p + 'proj', tmp);
      for (let j = 0; j < R * d; j++) x[j] += tmp[j];
      layerNormRows(x, normed, R, d, this.w[p + 'ln2.g'], this.w[p + 'ln2.b']);
      this.affine(normed, R, d, 4 * d, p + 'fc', hidden);
      geluRows(hidden, hidden); // GELU = h Φ(h), in place
      this.affine(hidden, R, 4 * d, d, p + 'out', tmp);
      for (let j = 0; j < R * d; j++) x[j] += tmp[j];
    }
    const last = new Float32Array(B * d);
    for (let b = 0; b < B; b++) last.set(x.subarray((b * T + T - 1) * d, (b * T + T) * d), b * d);
    const lastNormed = new Float32Array(B * d);
    layerNormRows(last, lastNormed, B, d, this.w['ln_f.g'], this.w['ln_f.b']);
    const logits = new Float32Array(B * V);
    this.affine(lastNormed, B, d, V, 'head', logits);
    this.past += T;
    return logits;
  }

  /**
   * Causal attention of the scaled queries q [B*T, d] over the cached keys and values
   * [B, context, d], per row and head: scores and the weighted sum are small native
   * products (strided views, no copies); masking and the softmax are loops.
   */
  private attend(q: Float32Array, K: Float32Array, V: Float32Array, y: Float32Array, T: number, probs: Float32Array): void {
    const { B, leftPad, past } = this;
    const { dModel: d, nHeads: H, context } = this.model.config;
    const hd = d / H, S = past + T;
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        const rows = b * T * d + h * hd, keys = b * context * d + h * hd;
        this.sgemm(false, true, T, S, hd, q.subarray(rows), d, K.subarray(keys), d, 0, probs, S);
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
        this.sgemm(false, false, T, hd, S, probs, S, V.subarray(keys), d, 0, y.subarray(rows), d);
      }
    }
  }

  /** out [rows, n] = x [rows, k] @ the named layer's weight + its bias. */
  private affine(x: Float32Array, rows: number, k: number, n: number, name: string, out: Float32Array): void {
    affine(this.sgemm, x, rows, k, n, this.w[name + '.w'], this.w[name + '.b'], out);
  }
}
