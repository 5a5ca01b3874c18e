import * as tf from '@tensorflow/tfjs';

export interface ApplyResult {
  /** global gradient norm before clipping */
  gradNorm: number;
  /** true when the loss or the gradient norm was not finite: nothing was applied */
  skipped: boolean;
  reason?: string;
}

/**
 * Applies `grads` (keyed by variable name) with `optimizer` after clipping their global
 * norm as torch's clip_grad_norm_ does (scale by maxNorm / (norm + 1e-6) when that is
 * below 1). A non-finite loss or gradient skips the step and says why. Disposes `grads`.
 * `normWeights` (by variable name, broadcast over its gradient) weigh the squares the norm
 * sums: a row that stands for N tied rows counts 1/N of its gradient's square, as the N rows'
 * own gradients (each 1/N of it) would (src/models/hf/shared-rows.ts).
 */
export function applyClipped(
  optimizer: tf.Optimizer,
  grads: tf.NamedTensorMap,
  loss: number,
  maxNorm: number,
  normWeights: Readonly<Record<string, tf.Tensor>> = {},
): ApplyResult {
  const list = Object.entries(grads);
  const gradNorm = list.length
    ? tf.tidy(
        () =>
          tf
            .sqrt(tf.addN(list.map(([k, g]) => (normWeights[k] ? g.square().mul(normWeights[k]) : g.square()).sum())))
            .dataSync()[0],
      )
    : 0;
  if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
    tf.dispose(Object.values(grads));
    return {
      gradNorm,
      skipped: true,
      reason: !Number.isFinite(loss) ? `loss is ${loss}` : `gradient norm is ${gradNorm}`,
    };
  }
  const scale = maxNorm / (gradNorm + 1e-6);
  // scaled one gradient at a time, each original freed at once: one extra gradient at most, not a second set
  const applied: tf.NamedTensorMap = {};
  for (const [k, g] of Object.entries(grads)) {
    if (scale < 1) {
      applied[k] = tf.mul(g, scale);
      g.dispose();
    } else applied[k] = g;
  }
  optimizer.applyGradients(applied);
  tf.dispose(Object.values(applied));
  return { gradNorm, skipped: false };
}
