import * as tf from '@tensorflow/tfjs';
import type { Sgemm } from '../../backend/native/library.js';
import type { TinyLMConfig } from '../tinylm-config.js';
import type { PolicyInput, ScoredBatch } from '../types.js';
import { NativeScore } from './score.js';
import { layoutBatch } from '../score-batch.js';

/** What the native path reads of a TinyLM: its shape and its weights by name. */
export interface NativeScored {
  readonly config: TinyLMConfig;
  readonly weights: Record<string, tf.Variable>;
  readonly hasValueHead: boolean;
}

/**
 * `TinyLM.score` on the native path: one tfjs op (tf.customGrad) whose inputs are the
 * model's variables, so tf.variableGrads and every trainer above see an ordinary op; its
 * forward and backward are NativeScore's. Log-probs, entropy and values leave as slices of
 * its one output, and their gradients come back through it. Without a gradient tape the
 * pass keeps nothing for a backward pass.
 */
export function nativeScore(
  model: NativeScored,
  sgemm: Sgemm,
  inputs: readonly PolicyInput[],
  temperature: number,
): ScoredBatch {
  const batch = layoutBatch(inputs);
  const names = Object.keys(model.weights);
  const vars = names.map((n) => model.weights[n]);
  const channels = model.hasValueHead ? 3 : 2;
  const taping = tf.engine().isTapeOn();
  const op = tf.customGrad(((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const weights = Object.fromEntries(names.map((n, i) => [n, (args[i] as tf.Tensor).dataSync() as Float32Array]));
    const pass = new NativeScore(model.config, weights, sgemm, batch, temperature, taping);
    const value = tf.tensor3d(pass.forward().slice(), [channels, batch.B, batch.Tc]);
    if (!taping) pass.release();
    const gradFunc = (dy: tf.Tensor) => {
      const g = pass.backward(dy.dataSync() as Float32Array);
      return names.map((n, i) => tf.tensor(g[n], vars[i].shape));
    };
    return { value, gradFunc };
  }) as Parameters<typeof tf.customGrad>[0]) as (...w: tf.Tensor[]) => tf.Tensor3D;
  const out = op(...vars);
  const [logProbs, entropy, values] = tf.unstack(out) as tf.Tensor2D[];
  out.dispose();
  return { logProbs, entropy, mask: tf.tensor2d(batch.mask, [batch.B, batch.Tc]), values };
}
