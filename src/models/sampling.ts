import type { Rng } from '../util/rng.js';

export interface SamplingOptions {
  /** 0 means greedy (argmax); otherwise logits are divided by it */
  temperature?: number;
  /** keep only the k most likely tokens; 0 keeps all */
  topK?: number;
  /** keep the smallest set of tokens whose probability reaches p; 1 keeps all */
  topP?: number;
}

export function validateSampling(o: SamplingOptions): void {
  const { temperature = 1, topK = 0, topP = 1 } = o;
  if (!(temperature >= 0) || !Number.isFinite(temperature))
    throw new Error(`sampling: temperature must be >= 0, got ${temperature}`);
  if (!Number.isInteger(topK) || topK < 0)
    throw new Error(`sampling: topK must be a non-negative integer, got ${topK}`);
  if (!(topP > 0 && topP <= 1)) throw new Error(`sampling: topP must be in (0, 1], got ${topP}`);
}

// the unnormalised probabilities of the row being sampled: one array per vocabulary size, not
// one per token, since an off-heap array a token makes the GC run for memory pressure
let weights = new Float64Array(0);

/**
 * Picks one token from a row of logits and returns it with its log-probability under
 * the temperature-scaled distribution before top-k/top-p filtering (temperature 1 when
 * greedy), which is what a trainer recomputes from logits / temperature, as TRL and verl do.
 */
export function sampleToken(logits: Float32Array, o: SamplingOptions, rng: Rng): { token: number; logProb: number } {
  const { temperature = 1, topK = 0, topP = 1 } = o;
  const V = logits.length;
  const tau = temperature === 0 ? 1 : temperature;
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[i] / tau);
  if (weights.length !== V) weights = new Float64Array(V);
  const probs = weights;
  let total = 0;
  for (let i = 0; i < V; i++) total += probs[i] = Math.exp(logits[i] / tau - max);
  const logZ = Math.log(total) + max;
  const token = temperature === 0 ? argmax(logits) : drawFiltered(probs, total, topK, topP, rng);
  return { token, logProb: logits[token] / tau - logZ };
}

/**
 * Entropy and self-certainty of the untempered distribution softmax(logits), computed on
 * the host from the row the sampler already holds. Self-certainty is KL(U || p) =
 * logsumexp(z) - mean(z) - log V (see tokenSelfCertainty in ops.ts).
 */
export function distributionStats(logits: Float32Array): { entropy: number; selfCertainty: number } {
  const V = logits.length;
  let max = -Infinity;
  let sum = 0;
  for (let i = 0; i < V; i++) {
    max = Math.max(max, logits[i]);
    sum += logits[i];
  }
  let z = 0;
  let weighted = 0;
  for (let i = 0; i < V; i++) {
    const e = Math.exp(logits[i] - max);
    z += e;
    weighted += e * (logits[i] - max);
  }
  const logZ = Math.log(z); // log-sum-exp minus max
  return { entropy: logZ - weighted / z, selfCertainty: logZ + max - sum / V - Math.log(V) };
}

/** The first index of the largest value, so ties break the same way every time. */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

function drawFiltered(probs: Float64Array, total: number, topK: number, topP: number, rng: Rng): number {
  const V = probs.length;
  if ((topK === 0 || topK >= V) && topP >= 1) return drawFrom(probs, total, rng);
  const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => probs[b] - probs[a] || a - b);
  const keep = new Float64Array(V);
  let kept = 0;
  const limit = topK > 0 ? Math.min(topK, V) : V;
  for (let r = 0; r < limit; r++) {
    const i = order[r];
    keep[i] = probs[i];
    kept += probs[i];
    if (kept >= topP * total) break; // the token that crosses p is kept, as in HF's top-p
  }
  return drawFrom(keep, kept, rng);
}

function drawFrom(weights: Float64Array, total: number, rng: Rng): number {
  let u = rng.next() * total;
  let last = 0;
  for (let i = 0; i < weights.length; i++) {
    if (weights[i] <= 0) continue;
    last = i;
    u -= weights[i];
    if (u < 0) return i;
  }
  return last; // round-off left u a hair above zero: the last token with weight
}
