import * as tf from '@tensorflow/tfjs';
import { Rng } from '../util/rng.js';
import { readView } from '../backend/views.js';
import { sampleToken, validateSampling, type SamplingOptions } from './sampling.js';
import { tidyKeep } from './ops.js';
import { checkIds, type LayerCache, type TinyLM } from './tinylm.js';
import { activeSgemm } from '../backend/native/index.js';
import { NativeDecoder } from './native/decode.js';
import type { HfCausalLM, HfLayerCache } from './hf/model.js';
import type { HfPolicy } from './hf/policy.js';

/** A language model generate() runs: coevolve's TinyLM, or a Hugging Face decoder (alone or with an adapter). */
export type LanguageModel = TinyLM | HfCausalLM | HfPolicy;

export interface GenerateOptions extends SamplingOptions {
  /** most tokens to add to each prompt */
  maxNewTokens: number;
  /** a row stops after emitting this token (kept in its output); omit to never stop early */
  eos?: number;
  /** more tokens a row stops after, as after EOS (a rewritten step's result ends at its ',') */
  stop?: readonly number[];
  /** seed of the sampler: same seed, same backend, same tokens */
  seed?: number;
}

export interface Generation {
  /** the new tokens, ending with EOS (or a stop token) when the row stopped on it */
  tokens: number[];
  /** log-probability of each new token (see sampleToken) */
  logProbs: number[];
  /** entropy and self-certainty of the model's distribution at each new token (temperature 1) */
  entropy: number[];
  selfCertainty: number[];
  /** true when the row emitted EOS or a stop token */
  stopped: boolean;
}

/**
 * Batched generation with a key/value cache. Prompts of different lengths share one
 * batch: they are left-padded and the padding is masked, so each row gets what it would
 * get alone. One forward pass per new token for the whole batch; only the last position's
 * logits leave the backend, and sampling runs on the host with a seeded generator.
 */
export function generate(
  model: LanguageModel,
  prompts: readonly (readonly number[])[],
  o: GenerateOptions,
): Generation[] {
  validateSampling(o);
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 0)
    throw new Error(`generate: maxNewTokens must be a non-negative integer, got ${o.maxNewTokens}`);
  if (prompts.length === 0) return [];
  prompts.forEach((p, b) => {
    if (p.length === 0) throw new Error(`generate: prompt ${b} is empty (start prompts with BOS)`);
    checkIds(p, model.config.vocabSize, `generate: prompt ${b}`);
  });
  const B = prompts.length;
  const P = Math.max(...prompts.map((p) => p.length));
  const { vocabSize } = model.config;
  const context = model.maxSequence;
  if (P + o.maxNewTokens > context)
    throw new Error(`generate: prompt of ${P} tokens + ${o.maxNewTokens} new exceeds context ${context}`);
  const leftPad = prompts.map((p) => P - p.length);
  const rng = new Rng(o.seed ?? 0);
  const out: Generation[] = prompts.map(() => ({
    tokens: [],
    logProbs: [],
    entropy: [],
    selfCertainty: [],
    stopped: false,
  }));
  const padded = new Int32Array(B * P);
  prompts.forEach((p, b) => padded.set(p, b * P + leftPad[b]));

  const forward =
    model.kind === 'hf'
      ? hfForward(model, B, leftPad)
      : activeSgemm()
        ? nativeForward(model, B, leftPad)
        : tfjsForward(model, B, leftPad);
  try {
    let values = forward.feed(padded, P);
    const next = new Int32Array(B); // read by feed before it returns, so one array serves every step
    for (let step = 0; step < o.maxNewTokens; step++) {
      let active = 0;
      for (let b = 0; b < B; b++) {
        const row = out[b];
        if (row.stopped) {
          next[b] = o.eos ?? 0;
          continue;
        }
        const rowLogits = values.subarray(b * vocabSize, (b + 1) * vocabSize);
        const { token, logProb, entropy, selfCertainty } = sampleToken(rowLogits, o, rng);
        row.tokens.push(token);
        row.logProbs.push(logProb);
        row.entropy.push(entropy);
        row.selfCertainty.push(selfCertainty);
        row.stopped = token === o.eos || (o.stop?.includes(token) ?? false);
        next[b] = token;
        if (!row.stopped) active++;
      }
      if (active === 0 || step === o.maxNewTokens - 1) return out;
      values = forward.feed(next, 1);
    }
    return out;
  } finally {
    forward.dispose();
  }
}

/** A model's forward pass during generation: feed tokens [B, T] after the cached ones, get the last position's logits [B, V]. */
interface Forward {
  feed(tokens: Int32Array, T: number): Float32Array;
  dispose(): void;
}

/** The native step (see NativeDecoder), used when a native sgemm serves the backend. */
function nativeForward(model: TinyLM, B: number, leftPad: number[]): Forward {
  const decoder = new NativeDecoder(model, activeSgemm()!, B, leftPad);
  return { feed: (tokens, T) => decoder.feed(tokens, T), dispose: () => decoder.release() };
}

/** TinyLM.forward on tfjs tensors, the reference path. */
function tfjsForward(model: TinyLM, B: number, leftPad: number[]): Forward {
  return cachedForward<LayerCache>(
    B,
    (tokens, past, cache) => model.forward(tokens, leftPad, past, cache),
    (h) => model.logits(h),
  );
}

/** HfCausalLM.forward on tfjs tensors: positions count from each row's first real token, pad keys masked. */
function hfForward(model: HfCausalLM | HfPolicy, B: number, leftPad: number[]): Forward {
  return cachedForward<HfLayerCache>(
    B,
    (tokens, past, cache) => {
      const T = tokens.shape[1];
      const S = past + T;
      const positions = new Int32Array(B * T);
      const keyMask = new Float32Array(B * S).fill(1);
      for (let b = 0; b < B; b++) {
        for (let t = 0; t < T; t++) positions[b * T + t] = Math.max(0, past + t - leftPad[b]);
        keyMask.fill(0, b * S, b * S + Math.min(leftPad[b], S));
      }
      return model.forward(tokens, positions, keyMask, cache);
    },
    (h) => model.logits(h),
  );
}

/**
 * A tfjs forward pass with a key/value cache: `step` runs the model on the new tokens after
 * `past` cached ones; only the last position's logits leave the backend.
 */
function cachedForward<C extends { k: tf.Tensor; v: tf.Tensor }>(
  B: number,
  step: (tokens: tf.Tensor2D, past: number, cache?: C[]) => { hidden: tf.Tensor3D; cache: C[] },
  logits: (h: tf.Tensor3D) => tf.Tensor3D,
): Forward {
  let cache: C[] | undefined;
  let past = 0;
  // the last step's logits, read in place by the sampler until the next step (a [B, V] copy
  // a step, 39 MB at 64 rows of Qwen's vocabulary, made the garbage collector run for it)
  let held: tf.Tensor | undefined;
  return {
    feed(tokens, T) {
      const old = cache;
      held?.dispose();
      held = undefined;
      const r = tidyKeep(() => {
        const f = step(tf.tensor2d(tokens, [B, T], 'int32'), past, old);
        const last = T === 1 ? f.hidden : (f.hidden.slice([0, T - 1, 0], [-1, 1, -1]) as tf.Tensor3D);
        return { logits: logits(last), cache: f.cache };
      });
      // Swap caches only once the step succeeded, so an error leaves one cache to free.
      cache = r.cache;
      past += T;
      if (old) disposeCache(old);
      held = r.logits;
      return readView(r.logits);
    },
    dispose() {
      held?.dispose();
      if (cache) disposeCache(cache);
    },
  };
}

function disposeCache(cache: ReadonlyArray<{ k: tf.Tensor; v: tf.Tensor }>): void {
  for (const c of cache) {
    c.k.dispose();
    c.v.dispose();
  }
}
