import type { TinyLMConfig } from '../tinylm-config.js';
import type { PassOps } from './ops.js';
import type { ScoreBatch } from '../score-batch.js';

type Views = Record<string, Float32Array>;
type Weight = (name: string) => Float32Array;

/** The temperature that divides the logits: 0 (greedy) and 1 leave them as they are, as TinyLM.score. */
const divisor = (t: number) => (t === 0 || t === 1 ? 1 : t);

/**
 * From hidden [N, d] (N = B * Tc): logits through the head, divided by the temperature,
 * log-softmax into v.logp and its probabilities into v.p; into v.out the channels
 * [log p(target) · mask, entropy -Σ p log p, the value head's estimate].
 */
export function logitsForward(
  ops: PassOps,
  c: TinyLMConfig,
  w: Weight,
  v: Views,
  batch: ScoreBatch,
  temperature: number,
): void {
  const { dModel: d, vocabSize: V } = c;
  const N = batch.B * batch.Tc,
    T = divisor(temperature),
    { targets, mask } = batch;
  const { hidden, logp, p, out } = v;
  ops.affine(hidden, N, d, V, w('head.w'), w('head.b'), logp);
  for (let r = 0; r < N; r++) {
    const o = r * V;
    let max = -Infinity;
    for (let j = 0; j < V; j++) {
      if (T !== 1) logp[o + j] /= T;
      if (logp[o + j] > max) max = logp[o + j];
    }
    let total = 0;
    for (let j = 0; j < V; j++) total += p[o + j] = Math.exp(logp[o + j] - max);
    const lse = max + Math.log(total);
    let h = 0;
    for (let j = 0; j < V; j++) {
      p[o + j] /= total;
      h -= p[o + j] * (logp[o + j] -= lse);
    }
    out[N + r] = h;
    out[r] = logp[o + targets[r]] * mask[r];
  }
  if (!c.valueHead) return;
  const vw = w('value.w'),
    vb = w('value.b')[0];
  for (let r = 0; r < N; r++) {
    let s = vb;
    for (let j = 0; j < d; j++) s += hidden[r * d + j] * vw[j];
    out[2 * N + r] = s;
  }
}

/**
 * Given dOut, the gradient of the channels: dz = (g_lp mask (onehot - p) - g_H p (log p + H)) / T
 * (the log-prob's and the entropy's derivatives in the logits), the head's gradients, the
 * value head's, and v.dHidden, the gradient of hidden.
 */
export function logitsBackward(
  ops: PassOps,
  c: TinyLMConfig,
  w: Weight,
  g: Weight,
  v: Views,
  batch: ScoreBatch,
  temperature: number,
  dOut: Float32Array,
): void {
  const { dModel: d, vocabSize: V } = c;
  const N = batch.B * batch.Tc,
    T = divisor(temperature),
    { targets, mask } = batch;
  const { logp, p, out, dz, hidden, dHidden } = v;
  for (let r = 0; r < N; r++) {
    const gl = dOut[r] * mask[r],
      gh = dOut[N + r],
      h = out[N + r],
      o = r * V;
    for (let j = 0; j < V; j++)
      dz[o + j] = (gl * ((j === targets[r] ? 1 : 0) - p[o + j]) - gh * p[o + j] * (logp[o + j] + h)) / T;
  }
  ops.affineGrad(hidden, dz, N, d, V, w('head.w'), g('head.w'), g('head.b'), v.ones, dHidden);
  if (!c.valueHead) return;
  const dv = dOut.subarray(2 * N, 3 * N),
    vw = w('value.w'),
    gw = g('value.w'),
    gb = g('value.b');
  for (let r = 0; r < N; r++) {
    gb[0] += dv[r];
    for (let j = 0; j < d; j++) {
      gw[j] += hidden[r * d + j] * dv[r];
      dHidden[r * d + j] += dv[r] * vw[j];
    }
  }
}
