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
import { StopStrings } from './stop-strings.js';
import { sampleCompact } from './hf/compact-sampling.js';
import type { TokenPieces } from '../tokenizer/pieces.js';

/** A language model generate() runs: coevolve's TinyLM, or a Hugging Face decoder (alone or with an adapter). */
export type LanguageModel = TinyLM | HfCausalLM | HfPolicy;

export interface GenerateOptions extends SamplingOptions {
  /** most tokens to add to each prompt */
  maxNewTokens: number;
  /** a row stops after emitting this token (kept in its output); omit to never stop early */
  eos?: number;
  /** more tokens a row stops after, as after EOS (a rewritten step's result ends at its ',') */
  stop?: readonly number[];
  /**
   * stop strings (vLLM's `stop`): a row ends at the token after which its text contains one,
   * checked on the text as it grows, so one may span tokens. That token stays in the row's
   * tokens and log-probs (what is trained, as vLLM's token ids and verl's responses keep it);
   * the text stops before the string (see completionText). Needs `pieces`.
   */
  stopStrings?: readonly string[];
  /** each token's text (src/tokenizer/pieces.ts), for `stopStrings` */
  pieces?: TokenPieces;
  /** false keeps finished rows in the batch to the end (only to measure what dropping them saves) */
  dropFinished?: boolean;
  /** seed of the sampler: same seed, same backend, same tokens */
  seed?: number;
  /** the most logits a forward pass holds, in floats (default LOGITS_BUDGET): more rows run in parts, with the same draws */
  logitsBudget?: number;
  /** called after each decoding step with the number of steps done (a long generation's progress) */
  onStep?: (done: number) => void;
}

export interface Generation {
  /** the new tokens, ending with EOS (or a stop token) when the row stopped on it */
  tokens: number[];
  /** log-probability of each new token (see sampleToken) */
  logProbs: number[];
  /** entropy and self-certainty of the model's distribution at each new token (temperature 1) */
  entropy: number[];
  selfCertainty: number[];
  /** true when the row emitted EOS or a stop token, or completed a stop string */
  stopped: boolean;
  /** the stop string the row's text reached (its last token completed it), when one ended it */
  stopString?: string;
}

/**
 * The most logits one forward pass of generation holds, in floats (256 MB): a batch whose last
 * positions' logits [B, V] would be larger runs in parts of rows, each with its own cache (1,086
 * rows of Qwen's 151,669-token vocabulary, 659 MB, failed to fit beside a 4-layer model's
 * training state).
 */
export const LOGITS_BUDGET = 2 ** 26;

/**
 * Batched generation with a key/value cache. Prompts of different lengths share one
 * batch: they are left-padded and the padding is masked, so each row gets what it would
 * get alone. One forward pass per new token for the batch's rows: rows that end (EOS, a stop
 * token, a stop string) leave the batch and its cache once they are a quarter of it (see
 * narrows), so they stop costing compute. Only the last position's logits leave the backend, and sampling runs on the host
 * with a seeded generator (rows draw in order, so dropping finished ones changes no draw).
 */
export function generate(
  model: LanguageModel,
  prompts: readonly (readonly number[])[],
  o: GenerateOptions,
): Generation[] {
  validateSampling(o);
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 0)
    throw new Error(`generate: maxNewTokens must be a non-negative integer, got ${o.maxNewTokens}`);
  const strings = o.stopStrings?.length ? o.stopStrings : undefined;
  if (strings && !o.pieces)
    throw new Error("generate: stop strings need the tokenizer's pieces (src/tokenizer/pieces.ts) to read the text");
  const matcher = strings && new StopStrings(strings, o.pieces!, prompts.length);
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
    throw new Error(
      `generate: a prompt of ${P} tokens and maxNewTokens ${o.maxNewTokens} need ${P + o.maxNewTokens} positions; the model has ${context}`,
    );
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

  const open = (rows: readonly number[]): Forward => {
    const pads = rows.map((b) => leftPad[b]);
    return model.kind === 'hf'
      ? hfForward(model, pads)
      : activeSgemm()
        ? nativeForward(model, pads)
        : tfjsForward(model, pads);
  };
  const drop = o.dropFinished ?? true;
  // a frozen base made with sharedRows gives its compact logits: the own ids, then the shared row
  const split = model.kind === 'hf' ? model.compactRows() : undefined;
  const width = split ? split.ids.length : vocabSize;
  // rows in parts, so that a part's logits [rows, width] fit the budget; each part keeps its own cache
  const per = Math.max(1, Math.floor((o.logitsBudget ?? LOGITS_BUDGET) / width));
  const parts: Array<{ forward: Forward; live: number[] }> = [];
  try {
    for (let first = 0; first < B; first += per) {
      const rows = Array.from({ length: Math.min(per, B - first) }, (_, i) => first + i);
      parts.push({ forward: open(rows), live: rows }); // live: the row of each of the part's rows, in order
    }
    for (let step = 0; step < o.maxNewTokens; step++) {
      // the parts in order, each row drawing in order: the draws of one batch of all the rows
      for (const part of parts) {
        const { forward, live } = part;
        if (live.length === 0) continue;
        const values =
          step === 0
            ? forward.feed(
                padded.subarray(live[0] * P, (live[0] + live.length) * P), // a part's rows are consecutive at first
                P,
              )
            : // a finished row still in the batch is fed its last token again; its output is not read
              forward.feed(
                Int32Array.from(live, (b) => out[b].tokens.at(-1)!),
                1,
              );
        for (let i = 0; i < live.length; i++) {
          const row = out[live[i]];
          if (row.stopped) continue; // kept in the batch (dropFinished false)
          const rowLogits = values.subarray(i * width, (i + 1) * width);
          const { token, logProb, entropy, selfCertainty } = split
            ? sampleCompact(rowLogits, split, o, rng)
            : sampleToken(rowLogits, o, rng);
          row.tokens.push(token);
          row.logProbs.push(logProb);
          row.entropy.push(entropy);
          row.selfCertainty.push(selfCertainty);
          row.stopped = token === o.eos || (o.stop?.includes(token) ?? false);
          const reached = !row.stopped && matcher?.push(live[i], token);
          if (reached) [row.stopped, row.stopString] = [true, reached];
        }
        forward.release();
      }
      o.onStep?.(step + 1);
      if (step === o.maxNewTokens - 1) return out;
      for (const part of parts) {
        const going = part.live.flatMap((b, i) => (out[b].stopped ? [] : [i]));
        if (going.length === 0) part.live = [];
        else if (drop && narrows(part.live.length, going.length)) {
          part.forward.keep(going);
          part.live = going.map((i) => part.live[i]);
        }
      }
      if (parts.every((part) => part.live.length === 0)) return out;
    }
    return out;
  } finally {
    for (const part of parts) part.forward.dispose();
  }
}

/**
 * Whether a batch of `rows` rows, `going` of them unfinished, is narrowed to those: once a
 * quarter or more have finished. Narrowing copies the whole cache, so narrowing at every row's
 * end cost more than the rows saved (measured at SmolLM2-135M's shape, 64 rows of up to 128
 * tokens: 106 s against 83 s keeping them); a quarter at a time copies it about four times in all.
 */
export const narrows = (rows: number, going: number): boolean => going === 0 || 4 * (rows - going) >= rows;

/**
 * A model's forward pass during generation: feed tokens [B, T] after the cached ones, get the
 * last position's logits [B, V]; `keep` narrows the batch to some of its rows (by index, in
 * order), their caches kept, so that finished rows cost nothing after.
 */
interface Forward {
  feed(tokens: Int32Array, T: number): Float32Array;
  keep(rows: readonly number[]): void;
  /** frees the last step's logits once they are read (a batch in parts holds one part's at a time) */
  release(): void;
  dispose(): void;
}

/** The native step (see NativeDecoder), used when a native sgemm serves the backend. */
function nativeForward(model: TinyLM, leftPad: number[]): Forward {
  const decoder = new NativeDecoder(model, activeSgemm()!, leftPad.length, leftPad);
  return {
    feed: (tokens, T) => decoder.feed(tokens, T),
    keep: (rows) => decoder.keep(rows),
    release: () => {}, // the decoder's logits live in its own buffer, reused every step
    dispose: () => decoder.release(),
  };
}

/** TinyLM.forward on tfjs tensors, the reference path. */
function tfjsForward(model: TinyLM, leftPad: number[]): Forward {
  return cachedForward<LayerCache>(
    leftPad,
    (tokens, pads, past, cache) => model.forward(tokens, pads, past, cache),
    (h) => model.logits(h),
  );
}

/** HfCausalLM.forward on tfjs tensors: positions count from each row's first real token, pad keys masked. */
function hfForward(model: HfCausalLM | HfPolicy, leftPad: number[]): Forward {
  // a frozen base made with sharedRows: its compact logits go to the sampler, not V of them
  const split = model.compactRows();
  return cachedForward<HfLayerCache>(
    leftPad,
    (tokens, pads, past, cache) => {
      const [B, T] = tokens.shape;
      const S = past + T;
      const positions = new Int32Array(B * T);
      const keyMask = new Float32Array(B * S).fill(1);
      for (let b = 0; b < B; b++) {
        for (let t = 0; t < T; t++) positions[b * T + t] = Math.max(0, past + t - pads[b]);
        keyMask.fill(0, b * S, b * S + Math.min(pads[b], S));
      }
      return model.forward(tokens, positions, keyMask, cache);
    },
    (h) => (split ? model.compactLogits(h) : model.logits(h)),
  );
}

/**
 * A tfjs forward pass with a key/value cache: `step` runs the model on the new tokens of rows
 * left-padded by `pads` after `past` cached ones; only the last position's logits leave the backend.
 */
function cachedForward<C extends { k: tf.Tensor; v: tf.Tensor }>(
  leftPad: readonly number[],
  step: (
    tokens: tf.Tensor2D,
    pads: readonly number[],
    past: number,
    cache?: C[],
  ) => { hidden: tf.Tensor3D; cache: C[] },
  logits: (h: tf.Tensor3D) => tf.Tensor3D,
): Forward {
  let cache: C[] | undefined;
  let past = 0;
  let pads = leftPad;
  // the last step's logits, read in place by the sampler until the next step (a [B, V] copy
  // a step, 39 MB at 64 rows of Qwen's vocabulary, made the garbage collector run for it)
  let held: tf.Tensor | undefined;
  return {
    feed(tokens, T) {
      const B = pads.length;
      const old = cache;
      held?.dispose();
      held = undefined;
      const r = tidyKeep(() => {
        const f = step(tf.tensor2d(tokens, [B, T], 'int32'), pads, past, old);
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
    keep(rows) {
      const before = pads;
      pads = rows.map((i) => before[i]);
      if (!cache) return;
      const old = cache;
      // runs of consecutive rows, each one slice (a row's keys are contiguous): a copy, where a gather went element by element
      const runs: [number, number][] = [];
      for (const r of rows) {
        const last = runs[runs.length - 1];
        if (last && last[0] + last[1] === r) last[1]++;
        else runs.push([r, 1]);
      }
      const take = (x: tf.Tensor) => {
        const parts = runs.map(([start, n]) => x.slice(start, n));
        return parts.length === 1 ? parts[0] : tf.concat(parts, 0);
      };
      cache = tidyKeep(() => old.map((c) => ({ ...c, k: take(c.k), v: take(c.v) })));
      disposeCache(old);
    },
    release() {
      held?.dispose();
      held = undefined;
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
