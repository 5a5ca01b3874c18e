/**
 * sampleToken (src/models/sampling.ts) on a compact row of logits (shared-rows.ts): the own
 * ids' logits, then the shared row's, which every one of the N sharing ids has. The full
 * distribution is the compact one with the shared row counted N times, so the draw, its
 * log-probability and the untempered entropy and self-certainty are the full row's, without
 * writing its V logits: the shared class weighs N e_r, and a draw landing in it names the
 * sharing id its remainder falls on (one uniform number a token, as the full sampler uses).
 * Greedy takes the first id of the largest logit, as argmax over the full row does. Top-k and
 * top-p sample the full row, written out.
 */
import type { Rng } from '../../util/rng.js';
import { sampleToken, type Sampled, type SamplingOptions } from '../sampling.js';
import type { SharedRows } from './shared-rows.js';

export function sampleCompact(z: Float32Array, split: SharedRows, o: SamplingOptions, rng: Rng): Sampled {
  const { temperature = 1, topK = 0, topP = 1 } = o;
  const { ids, sharing, index } = split;
  const V = index.length;
  const n = ids.length;
  const N = sharing.length;
  if ((topK > 0 && topK < V) || topP < 1) return sampleToken(fullRow(z, split), o, rng);
  const r = z[n - 1];
  let max = r;
  let sum = N * r;
  for (let i = 0; i < n - 1; i++) {
    if (z[i] > max) max = z[i];
    sum += z[i];
  }
  // the untempered distribution: Σ e and Σ e (z - max), e = exp(z - max), the shared row N times
  const er = Math.exp(r - max);
  let s = N * er;
  let q = N * er * (r - max);
  for (let i = 0; i < n - 1; i++) {
    const e = Math.exp(z[i] - max);
    s += e;
    q += e * (z[i] - max);
  }
  const stats = { entropy: Math.log(s) - q / s, selfCertainty: Math.log(s) + max - sum / V - Math.log(V) };
  if (temperature === 0) {
    let token = r === max ? sharing[0] : V;
    for (let i = 0; i < n - 1; i++) if (z[i] === max && ids[i] < token) token = ids[i];
    return { token, logProb: -Math.log(s), ...stats }; // z[token] - max - log Σ e, z[token] the max
  }
  const k = 1 / temperature;
  const wr = Math.exp(k * (r - max));
  let total = N * wr;
  for (let i = 0; i < n - 1; i++) total += Math.exp(k * (z[i] - max));
  let u = rng.next() * total;
  let token = -1;
  // own ids in id order, then the shared class: a draw's position in the order is not the
  // full sampler's, its distribution is
  for (let i = 0; i < n - 1 && token < 0; i++) {
    u -= Math.exp(k * (z[i] - max));
    if (u < 0) token = ids[i];
  }
  if (token < 0 && wr > 0) token = sharing[Math.min(N - 1, Math.max(0, Math.floor(u / wr)))];
  // round-off left u a hair above the sum and the shared class has no weight: the last own id with weight
  for (let i = n - 2; token < 0 && i >= 0; i--) if (Math.exp(k * (z[i] - max)) > 0) token = ids[i];
  if (token < 0) token = ids[0];
  const zt = index[token] === n - 1 ? r : z[index[token]];
  return { token, logProb: k * (zt - max) - Math.log(total), ...stats };
}

/** The full row of V logits a compact row stands for, written into `out` (a new row by default). */
export function fullRow(
  z: Float32Array,
  { ids, index }: SharedRows,
  out = new Float32Array(index.length),
): Float32Array {
  out.fill(z[ids.length - 1]);
  for (let i = 0; i < ids.length - 1; i++) out[ids[i]] = z[i];
  return out;
}
