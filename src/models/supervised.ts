import * as tf from '@tensorflow/tfjs';
import { applyClipped } from '../rl/apply.js';
import { Rng } from '../util/rng.js';
import type { TinyLM } from './tinylm.js';
import type { PolicyInput } from './types.js';

export interface SupervisedOptions {
  /** optimizer steps */
  steps: number;
  /** examples per step, drawn without replacement per epoch */
  batchSize: number;
  /** Adam learning rate */
  lr: number;
  /** global gradient-norm clip */
  maxGradNorm?: number;
  /** seed of the example order */
  seed?: number;
  /** called after every step with its mean loss (nats per completion token) */
  onStep?: (step: number, loss: number) => void;
}

/**
 * Supervised next-token training (how base models are made): minimises the mean negative
 * log-likelihood of each example's completion tokens given its prompt. For plain text,
 * use prompt [BOS] and completion = the text's ids followed by EOS.
 */
export function trainSupervised(model: TinyLM, examples: readonly PolicyInput[], o: SupervisedOptions): number[] {
  if (examples.length === 0) throw new Error('supervised: no examples');
  if (!Number.isInteger(o.batchSize) || o.batchSize <= 0) throw new Error(`supervised: batchSize must be a positive integer, got ${o.batchSize}`);
  const optimizer = tf.train.adam(o.lr, 0.9, 0.999, 1e-8);
  const rng = new Rng(o.seed ?? 0);
  let order: number[] = [];
  const losses: number[] = [];
  try {
    for (let step = 0; step < o.steps; step++) {
      if (order.length < o.batchSize) order = order.concat(shuffled(examples.length, rng));
      const batch = order.splice(0, o.batchSize).map((i) => examples[i]);
      const { value, grads } = tf.variableGrads(() => {
        const s = model.score(batch);
        return s.logProbs.sum().div(s.mask.sum()).neg() as tf.Scalar;
      }, model.variables());
      const loss = value.dataSync()[0];
      value.dispose();
      const r = applyClipped(optimizer, grads, loss, o.maxGradNorm ?? 1);
      if (r.skipped) throw new Error(`supervised: step ${step} skipped: ${r.reason}`);
      losses.push(loss);
      o.onStep?.(step, loss);
    }
  } finally {
    optimizer.dispose();
  }
  return losses;
}

/** Mean negative log-likelihood per completion token, without training. */
export function evaluateNll(model: TinyLM, examples: readonly PolicyInput[], batchSize = 64): number {
  let nll = 0;
  let tokens = 0;
  for (let i = 0; i < examples.length; i += batchSize) {
    tf.tidy(() => {
      const s = model.score(examples.slice(i, i + batchSize));
      nll -= s.logProbs.sum().dataSync()[0];
      tokens += s.mask.sum().dataSync()[0];
    });
  }
  return nll / Math.max(1, tokens);
}

function shuffled(n: number, rng: Rng): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
