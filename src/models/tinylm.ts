import * as tf from '@tensorflow/tfjs';
import { Rng } from '../util/rng.js';
import { gelu, layerNorm, linear, seededNormal, tokenEntropy, tokenLogProbs } from './ops.js';
import type { Policy, PolicyInput, ScoredBatch } from './types.js';
import { layoutBatch } from './score-batch.js';
import { activeSgemm } from '../backend/native/index.js';
import { nativeScore } from './native/scored.js';
import { variablePrefix } from './names.js';
import type { TinyLMConfig } from './tinylm-config.js';

export type { TinyLMConfig } from './tinylm-config.js';

/** Per-layer keys and values kept during generation: [B, H, S, hd] each. */
export interface LayerCache {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

const NEG = -1e9; // added to masked attention scores; finite so a fully masked row stays finite

export function validateConfig(c: TinyLMConfig): void {
  for (const key of ['vocabSize', 'dModel', 'nHeads', 'nLayers', 'context'] as const) {
    if (!Number.isInteger(c[key]) || c[key] <= 0)
      throw new Error(`tinylm: ${key} must be a positive integer, got ${c[key]}`);
  }
  if (c.dModel % c.nHeads !== 0) throw new Error(`tinylm: dModel ${c.dModel} is not divisible by nHeads ${c.nHeads}`);
}

/** The names and shapes of every weight, which checkpoints check against. */
export function weightShapes(c: TinyLMConfig): Record<string, number[]> {
  const d = c.dModel;
  const s: Record<string, number[]> = { tok_emb: [c.vocabSize, d], pos_emb: [c.context, d] };
  for (let i = 0; i < c.nLayers; i++) {
    Object.assign(s, {
      [`h${i}.ln1.g`]: [d],
      [`h${i}.ln1.b`]: [d],
      [`h${i}.q.w`]: [d, d],
      [`h${i}.q.b`]: [d],
      [`h${i}.k.w`]: [d, d],
      [`h${i}.k.b`]: [d],
      [`h${i}.v.w`]: [d, d],
      [`h${i}.v.b`]: [d],
      [`h${i}.proj.w`]: [d, d],
      [`h${i}.proj.b`]: [d],
      [`h${i}.ln2.g`]: [d],
      [`h${i}.ln2.b`]: [d],
      [`h${i}.fc.w`]: [d, 4 * d],
      [`h${i}.fc.b`]: [4 * d],
      [`h${i}.out.w`]: [4 * d, d],
      [`h${i}.out.b`]: [d],
    });
  }
  Object.assign(s, { 'ln_f.g': [d], 'ln_f.b': [d], 'head.w': [d, c.vocabSize], 'head.b': [c.vocabSize] });
  if (c.valueHead) Object.assign(s, { 'value.w': [d, 1], 'value.b': [1] });
  return s;
}

/** GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 layers), gains 1, biases 0. */
function initialWeight(name: string, shape: number[], c: TinyLMConfig, rng: Rng): Float32Array {
  const size = shape.reduce((a, b) => a * b, 1);
  if (name.endsWith('.g')) return new Float32Array(size).fill(1);
  if (name.endsWith('.b')) return new Float32Array(size);
  const residual = name.endsWith('proj.w') || name.endsWith('out.w');
  return seededNormal(size, residual ? 0.02 / Math.sqrt(2 * c.nLayers) : 0.02, () => rng.normal());
}

/**
 * A tiny causal transformer (nanoGPT's shape): token + learned position embeddings,
 * pre-LayerNorm blocks of attention and a 4x GELU MLP, a final LayerNorm, an untied head.
 * Rows may be left-padded: `leftPad[b]` pad tokens precede row b's first real token; they
 * are masked as keys and positions count from the first real token, so a padded row
 * computes what it would alone.
 */
export class TinyLM implements Policy {
  readonly kind = 'tinylm';
  readonly weights: Record<string, tf.Variable>;

  constructor(
    readonly config: TinyLMConfig,
    initial?: Record<string, tf.Tensor>,
  ) {
    validateConfig(config);
    const rng = new Rng(config.seed ?? 0);
    const prefix = variablePrefix('tinylm');
    this.weights = {};
    for (const [name, shape] of Object.entries(weightShapes(config))) {
      const init = initial?.[name] ?? tf.tensor(initialWeight(name, shape, config, rng), shape);
      this.weights[name] = tf.variable(init, true, `${prefix}/${name}`);
      if (!initial?.[name]) init.dispose();
    }
  }

  get maxSequence(): number {
    return this.config.context;
  }

  get hasValueHead(): boolean {
    return Boolean(this.config.valueHead);
  }

  variables(): tf.Variable[] {
    return Object.values(this.weights);
  }

  private w(name: string): tf.Tensor {
    return this.weights[name];
  }

  /**
   * Hidden states of `tokens` [B, T] (int32), continuing from `cache` if given (whose
   * length is `past`). Returns the hidden states [B, T, d] and the extended caches.
   */
  forward(
    tokens: tf.Tensor2D,
    leftPad: readonly number[],
    past = 0,
    cache?: LayerCache[],
  ): { hidden: tf.Tensor3D; cache: LayerCache[] } {
    const [B, T] = tokens.shape;
    const { dModel: d, nHeads: H, context } = this.config;
    if (past + T > context) throw new Error(`tinylm: sequence of ${past + T} tokens exceeds context ${context}`);
    const positions = new Int32Array(B * T);
    const keyBias = new Float32Array(B * (past + T));
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) positions[b * T + t] = Math.max(0, past + t - leftPad[b]);
      for (let s = 0; s < Math.min(leftPad[b], past + T); s++) keyBias[b * (past + T) + s] = NEG;
    }
    let bias = tf.tensor4d(keyBias, [B, 1, 1, past + T]); // [B, 1, 1, S]
    if (T > 1) bias = bias.add(causalBias(T, past)); // [B, 1, T, S]
    const pos = tf.tensor2d(positions, [B, T], 'int32');
    // Embeddings as one-hot products: faster than gather on wasm, forward and backward.
    const emb = (ids: tf.Tensor2D, table: string, n: number) =>
      linear(tf.oneHot(ids, n).toFloat(), this.w(table) as tf.Tensor2D);
    let x = emb(tokens, 'tok_emb', this.config.vocabSize).add(emb(pos, 'pos_emb', context)); // [B, T, d]
    const next: LayerCache[] = [];
    for (let i = 0; i < this.config.nLayers; i++) {
      const p = `h${i}.`;
      // Separate q, k, v products: on wasm, splitting one fused qkv along its last axis is
      // a strided copy that costs more than the two extra matrix products.
      const normed = layerNorm(x, this.w(p + 'ln1.g'), this.w(p + 'ln1.b'));
      const heads = (name: string) =>
        linear(normed, this.w(p + name + '.w') as tf.Tensor2D, this.w(p + name + '.b'))
          .reshape([B, T, H, d / H])
          .transpose([0, 2, 1, 3]) as tf.Tensor4D; // [B, H, T, hd]
      const [q, kNew, vNew] = [heads('q'), heads('k'), heads('v')];
      const k = cache ? tf.concat([cache[i].k, kNew], 2) : kNew; // [B, H, S, hd]
      const v = cache ? tf.concat([cache[i].v, vNew], 2) : vNew;
      next.push({ k, v });
      const att = tf.softmax(tf.matMul(q.mul(1 / Math.sqrt(d / H)), k, false, true).add(bias)); // [B, H, T, S]
      const y = tf.matMul(att, v).transpose([0, 2, 1, 3]).reshape([B, T, d]); // [B, T, d]
      x = x.add(linear(y, this.w(p + 'proj.w') as tf.Tensor2D, this.w(p + 'proj.b')));
      const h = gelu(
        linear(
          layerNorm(x, this.w(p + 'ln2.g'), this.w(p + 'ln2.b')),
          this.w(p + 'fc.w') as tf.Tensor2D,
          this.w(p + 'fc.b'),
        ),
      );
      x = x.add(linear(h, this.w(p + 'out.w') as tf.Tensor2D, this.w(p + 'out.b')));
    }
    const hidden = layerNorm(x, this.w('ln_f.g'), this.w('ln_f.b')) as tf.Tensor3D;
    return { hidden, cache: next };
  }

  /** Next-token logits from hidden states: [B, T, d] -> [B, T, V]. */
  logits(hidden: tf.Tensor3D): tf.Tensor3D {
    return linear(hidden, this.w('head.w') as tf.Tensor2D, this.w('head.b')) as tf.Tensor3D;
  }

  /** The value head's estimate at each position: [B, T, d] -> [B, T]. */
  values(hidden: tf.Tensor3D): tf.Tensor2D {
    if (!this.hasValueHead) throw new Error('tinylm: this model has no value head (set valueHead: true)');
    return linear(hidden, this.w('value.w') as tf.Tensor2D, this.w('value.b')).squeeze([2]) as tf.Tensor2D;
  }

  /**
   * Logits that predict each completion token: prompts are left-padded to a common length P
   * so that completion token j is predicted at column P - 1 + j in every row.
   * Returns logits [B, Tc, V], hidden [B, Tc, d], targets [B, Tc] and the mask [B, Tc].
   */
  completionLogits(inputs: readonly PolicyInput[]): {
    logits: tf.Tensor3D;
    hidden: tf.Tensor3D;
    targets: tf.Tensor2D;
    mask: tf.Tensor2D;
  } {
    this.checkInputs(inputs);
    const { B, P, Tc, L, tokens: ids, leftPad, targets: t, mask: m } = layoutBatch(inputs);
    const tokens = tf.tensor2d(ids, [B, L], 'int32');
    const { hidden: full } = this.forward(tokens, leftPad);
    const hidden = full.slice([0, P - 1, 0], [-1, Tc, -1]) as tf.Tensor3D;
    const targets = tf.tensor2d(t, [B, Tc], 'int32');
    const mask = tf.tensor2d(m, [B, Tc]);
    return { logits: this.logits(hidden), hidden, targets, mask };
  }

  /**
   * See Policy.score. `temperature` divides the logits, as the sampler did; 0 (greedy)
   * scores at temperature 1, as the sampler reports greedy tokens' log-probs.
   */
  score(inputs: readonly PolicyInput[], temperature = 1): ScoredBatch {
    if (!(temperature >= 0) || !Number.isFinite(temperature))
      throw new Error(`tinylm: score temperature must be >= 0, got ${temperature}`);
    // with a native sgemm serving the backend, the whole pass and its gradient run natively
    // (src/models/native, checked against this tfjs path to 1e-4); accelerate: off keeps tfjs
    const sgemm = activeSgemm();
    if (sgemm) {
      this.checkInputs(inputs);
      return nativeScore(this, sgemm, inputs, temperature);
    }
    const { logits: raw, hidden, targets, mask } = this.completionLogits(inputs);
    const logits = temperature === 1 || temperature === 0 ? raw : (raw.div(temperature) as tf.Tensor3D);
    return {
      logProbs: tokenLogProbs(logits, targets).mul(mask) as tf.Tensor2D,
      entropy: tokenEntropy(logits),
      mask,
      values: this.hasValueHead ? this.values(hidden) : undefined,
    };
  }

  /** Refuses what TinyLM cannot score: no rows, an empty prompt, ids outside the vocabulary, more than the context. */
  private checkInputs(inputs: readonly PolicyInput[]): void {
    if (inputs.length === 0) throw new Error('tinylm: nothing to score');
    inputs.forEach((r, b) => {
      if (r.prompt.length === 0) throw new Error(`tinylm: row ${b} has an empty prompt (start prompts with BOS)`);
      checkIds(r.prompt, this.config.vocabSize, `tinylm: row ${b} prompt`);
      checkIds(r.completion, this.config.vocabSize, `tinylm: row ${b} completion`);
    });
    const length =
      Math.max(...inputs.map((r) => r.prompt.length)) + Math.max(1, ...inputs.map((r) => r.completion.length)) - 1;
    if (length > this.config.context)
      throw new Error(`tinylm: sequence of ${length} tokens exceeds context ${this.config.context}`);
  }

  dispose(): void {
    for (const v of Object.values(this.weights)) v.dispose();
  }
}

/** Ids outside the vocabulary would one-hot to zeros and score as certain: refuse them. */
export function checkIds(ids: readonly number[], vocabSize: number, where: string): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize)
      throw new Error(`${where} has token id ${id} at position ${i}, outside vocabulary of ${vocabSize}`);
  }
}

/** 0 where key s may be seen by query t (s <= past + t), NEG elsewhere: [T, past + T]. */
function causalBias(T: number, past: number): tf.Tensor2D {
  const S = past + T;
  const out = new Float32Array(T * S);
  for (let t = 0; t < T; t++) for (let s = past + t + 1; s < S; s++) out[t * S + s] = NEG;
  return tf.tensor2d(out, [T, S]);
}
