/**
 * A Hugging Face model as a role's policy: one base, shared, with this policy's own LoRA
 * adapter or none. Without an adapter the base's weights are the variables (full
 * fine-tuning); with one only the adapter's are, so several policies on one base are several
 * "separate models" at the memory cost of one base and their adapters.
 */
import type * as tf from '@tensorflow/tfjs';
import type { Policy, PolicyInput, ScoredBatch } from '../types.js';
import type { LoraAdapter } from './lora.js';
import type { HfCausalLM, HfLayerCache } from './model.js';

export class HfPolicy implements Policy {
  readonly kind = 'hf';
  readonly hasValueHead = false;

  constructor(
    readonly base: HfCausalLM,
    readonly adapter?: LoraAdapter,
  ) {}

  get config() {
    return this.base.config;
  }

  /** the base's sha256 as loaded, when known */
  get baseSha256(): string | undefined {
    return this.base.sha256;
  }

  get maxSequence(): number {
    return this.base.maxSequence;
  }

  variables(): tf.Variable[] {
    if (this.adapter) return this.adapter.variables();
    // a base loaded frozen keeps its matrices outside the heap, where no gradient reaches them
    if (this.base.frozen)
      throw new Error(
        `hf: the base ${this.base.dir ?? ''} was loaded frozen (for an adapter, generation or serving): it cannot be fine-tuned in full`,
      );
    return this.base.variables();
  }

  /** The variables an update changes, by name: the adapter's, or the base's (transformers' names). */
  get weights(): Record<string, tf.Variable> {
    return this.adapter ? this.adapter.named() : this.base.weights;
  }

  score(inputs: readonly PolicyInput[], temperature?: number): ScoredBatch {
    return this.base.score(inputs, temperature, this.adapter);
  }

  forward(
    tokens: tf.Tensor2D,
    positions: Int32Array,
    keyMask: Float32Array,
    cache?: HfLayerCache[],
  ): { hidden: tf.Tensor3D; cache: HfLayerCache[] } {
    return this.base.forward(tokens, positions, keyMask, cache, this.adapter);
  }

  logits(hidden: tf.Tensor3D): tf.Tensor3D {
    return this.base.logits(hidden);
  }

  /** The clip's weights for the base's shared rows, when it trains in full with them. */
  gradNormWeights(): Record<string, tf.Tensor> | undefined {
    return this.adapter ? undefined : this.base.gradNormWeights();
  }

  /** The base's compact head, when it has one (an adapter leaves the head alone). */
  compactRows() {
    return this.base.compactRows();
  }

  compactLogits(hidden: tf.Tensor3D): tf.Tensor3D {
    return this.base.compactLogits(hidden);
  }

  /** Frees the adapter; the base belongs to whoever loaded it, since other policies may share it. */
  dispose(): void {
    this.adapter?.dispose();
  }
}
