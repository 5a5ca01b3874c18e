import * as tf from '@tensorflow/tfjs';
import { Rng } from '../util/rng.js';
import { distributionStats, sampleToken, validateSampling, type SamplingOptions } from './sampling.js';
import { tidyKeep } from './ops.js';
import { checkIds, type LayerCache, type TinyLM } from './tinylm.js';

export interface GenerateOptions extends SamplingOptions {
  /** most tokens to add to each prompt */
  maxNewTokens: number;
  /** a row stops after emitting this token (kept in its output); omit to never stop early */
  eos?: number;
  /** seed of the sampler: same seed, same backend, same tokens */
  seed?: number;
}

export interface Generation {
  /** the new tokens, ending with EOS when the row stopped on it */
  tokens: number[];
  /** log-probability of each new token (see sampleToken) */
  logProbs: number[];
  /** entropy and self-certainty of the model's distribution at each new token (temperature 1) */
  entropy: number[];
  selfCertainty: number[];
  /** true when the row emitted EOS */
  stopped: boolean;
}

/**
 * Batched generation with a key/value cache. Prompts of different lengths share one
 * batch: they are left-padded and the padding is masked, so each row gets what it would
 * get alone. One forward pass per new token for the whole batch; only the last position's
 * logits leave the backend, and sampling runs on the host with a seeded generator.
 */
export function generate(model: TinyLM, prompts: readonly (readonly number[])[], o: GenerateOptions): Generation[] {
  validateSampling(o);
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 0) throw new Error(`generate: maxNewTokens must be a non-negative integer, got ${o.maxNewTokens}`);
  if (prompts.length === 0) return [];
  prompts.forEach((p, b) => {
    if (p.length === 0) throw new Error(`generate: prompt ${b} is empty (start prompts with BOS)`);
    checkIds(p, model.config.vocabSize, `prompt ${b}`);
  });
  const B = prompts.length;
  const P = Math.max(...prompts.map((p) => p.length));
  const { context, vocabSize } = model.config;
  if (P + o.maxNewTokens > context) throw new Error(`generate: prompt of ${P} tokens + ${o.maxNewTokens} new exceeds context ${context}`);
  const leftPad = prompts.map((p) => P - p.length);
  const rng = new Rng(o.seed ?? 0);
  const out: Generation[] = prompts.map(() => ({ tokens: [], logProbs: [], entropy: [], selfCertainty: [], stopped: false }));
  const padded = new Int32Array(B * P);
  prompts.forEach((p, b) => padded.set(p, b * P + leftPad[b]));

  const first = tidyKeep(() => {
    const r = model.forward(tf.tensor2d(padded, [B, P], 'int32'), leftPad);
    return { logits: model.logits(r.hidden.slice([0, P - 1, 0], [-1, 1, -1]) as tf.Tensor3D), cache: r.cache };
  });
  let cache: LayerCache[] = first.cache;
  let logits = first.logits;
  try {
    for (let step = 0; step < o.maxNewTokens; step++) {
      const values = logits.dataSync() as Float32Array;
      logits.dispose();
      const next = new Int32Array(B);
      let active = 0;
      for (let b = 0; b < B; b++) {
        const row = out[b];
        if (row.stopped) { next[b] = o.eos ?? 0; continue; }
        const rowLogits = values.subarray(b * vocabSize, (b + 1) * vocabSize);
        const { token, logProb } = sampleToken(rowLogits, o, rng);
        const stats = distributionStats(rowLogits);
        row.tokens.push(token);
        row.logProbs.push(logProb);
        row.entropy.push(stats.entropy);
        row.selfCertainty.push(stats.selfCertainty);
        row.stopped = token === o.eos;
        next[b] = token;
        if (!row.stopped) active++;
      }
      if (active === 0 || step === o.maxNewTokens - 1) return out;
      const old = cache;
      const r = tidyKeep(() => {
        const f = model.forward(tf.tensor2d(next, [B, 1], 'int32'), leftPad, P + step, old);
        return { logits: model.logits(f.hidden), cache: f.cache };
      });
      // Swap caches only once the step succeeded, so an error leaves one cache to free.
      cache = r.cache;
      logits = r.logits;
      disposeCache(old);
    }
    return out;
  } finally {
    disposeCache(cache);
    if (!logits.isDisposed) logits.dispose();
  }
}

function disposeCache(cache: LayerCache[]): void {
  for (const c of cache) {
    c.k.dispose();
    c.v.dispose();
  }
}
