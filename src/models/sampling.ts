import { kernelsOver, type SimdKernels } from '../backend/simd/index.js';
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

/** A sampled token with its log-probability and the untempered distribution's statistics (see distributionStats). */
export interface Sampled {
  token: number;
  logProb: number;
  entropy: number;
  selfCertainty: number;
}

/**
 * Picks one token from a row of logits and returns it with its log-probability under
 * the temperature-scaled distribution before top-k/top-p filtering (temperature 1 when
 * greedy), which is what a trainer recomputes from logits / temperature, as TRL and verl do;
 * and the entropy and self-certainty of the untempered distribution (distributionStats).
 * At temperature 1 (and greedy) both come from one pass of exponentials, the row's main cost
 * at a real vocabulary (151,669 exponentials a token for Qwen's); otherwise a second pass.
 */
export function sampleToken(logits: Float32Array, o: SamplingOptions, rng: Rng): Sampled {
  const { temperature = 1, topK = 0, topP = 1 } = o;
  const V = logits.length;
  const tau = temperature === 0 ? 1 : temperature;
  const filtered = (topK > 0 && topK < V) || topP < 1;
  const heap = filtered ? undefined : kernelsOver(logits);
  if (heap) {
    const [max, sum] = heap.kernels.rowMaxSum(heap.at, V);
    if (Number.isFinite(max)) return sampleInHeap(logits, heap, temperature, max, sum, rng);
  }
  let max = -Infinity;
  let sum = 0;
  for (let i = 0; i < V; i++) {
    const z = logits[i];
    if (z > max) max = z;
    sum += z;
  }
  if (weights.length !== V) weights = new Float64Array(V);
  const probs = weights;
  // e_i = exp((z_i - max) / tau): the tempered distribution's weights, max / tau its largest logit
  let total = 0;
  let weighted = 0;
  for (let i = 0; i < V; i++) {
    const d = logits[i] - max;
    const e = Math.exp(d / tau);
    probs[i] = e;
    total += e;
    weighted += e * d;
  }
  const logZ = Math.log(total) + max / tau;
  const stats =
    tau === 1
      ? { entropy: Math.log(total) - weighted / total, selfCertainty: Math.log(total) + max - sum / V - Math.log(V) }
      : distributionStats(logits);
  const token = temperature === 0 ? argmax(logits) : drawFrom(probs, total, topK, topP, rng);
  return { token, logProb: logits[token] / tau - logZ, ...stats };
}

/**
 * sampleToken on a row in the wasm heap, by SIMD kernels: the sums of exponentials (expSums)
 * and the draw (expDraw) take four logits at a time through the polynomial exp of the fused
 * head (relative error 1.2e-7) and add in doubles, as the JS path does.
 */
function sampleInHeap(
  logits: Float32Array,
  { kernels, at }: { kernels: SimdKernels; at: number },
  temperature: number,
  max: number,
  sum: number,
  rng: Rng,
): Sampled {
  const V = logits.length;
  const [s, q] = kernels.expSums(at, V, 1, max); // Σ e and Σ e (z - max), e = exp(z - max)
  const stats = { entropy: Math.log(s) - q / s, selfCertainty: Math.log(s) + max - sum / V - Math.log(V) };
  if (temperature === 0) {
    const token = logits.indexOf(max); // argmax: the first index of the largest value
    return { token, logProb: logits[token] - max - Math.log(s), ...stats };
  }
  const k = 1 / temperature;
  const total = temperature === 1 ? s : kernels.expSums(at, V, k, k * max)[0];
  let token = kernels.expDraw(at, V, k, k * max, rng.next() * total);
  if (token < 0) token = lastWeighted(logits, k, k * max); // round-off: u a hair above the sum
  return { token, logProb: k * logits[token] - k * max - Math.log(total), ...stats };
}

/** The last index whose weight exp(k z - m) is positive (0 if none). */
function lastWeighted(logits: Float32Array, k: number, m: number): number {
  for (let i = logits.length - 1; i > 0; i--) if (Math.exp(k * logits[i] - m) > 0) return i;
  return 0;
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

function drawFrom(probs: Float64Array, total: number, topK: number, topP: number, rng: Rng): number {
  const V = probs.length;
  if ((topK === 0 || topK >= V) && topP >= 1) return drawWeights(probs, total, rng);
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
  return drawWeights(keep, kept, rng);
}

function drawWeights(weights: Float64Array, total: number, rng: Rng): number {
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
