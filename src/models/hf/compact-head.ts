/**
 * The head of a model with shared rows (shared-rows.ts) computed on its compact rows: the own
 * rows, then the shared row that N ids hold alike. Scores (log-probs, entropies, gradients) and
 * full logits equal the full head's for a table whose sharing rows are equal.
 */
import * as tf from '@tensorflow/tfjs';
import { headScores } from './head.js';
import type { SharedRows } from './shared-rows.js';
import { fullRow } from './compact-sampling.js';

/**
 * Target log-probs and entropies [N] of `rows` [N, d] under a compact head (shared-rows.ts):
 * `table` holds the own rows, then the shared row, whose logit gains t log n (n ids share it; t
 * the temperature, which divides it again) through one extra input column of ones. A target
 * that shares the row scores its log-prob less log n (`ownOnly`: refused, as in pretraining);
 * the entropy gains q log n, q the shared row's probability, for the n equal rows' spread.
 * Exactly the full head's values and gradients for a table whose sharing rows are equal.
 */
export function compactScores(
  split: SharedRows,
  table: tf.Tensor2D,
  rows: tf.Tensor2D,
  targets: Int32Array,
  mask: Float32Array,
  temperature: number,
  ownOnly: boolean,
): { logProbs: tf.Tensor1D; entropy: tf.Tensor1D } {
  const other = split.ids.length - 1;
  const logN = Math.log(split.sharing.length);
  const shift = new Float32Array(targets.length);
  const compact = Int32Array.from(targets, (t, i) => {
    if (mask[i] === 0) return 0;
    if (!(t >= 0 && t < split.index.length))
      throw new Error(`head: target ${t} outside the vocabulary [0, ${split.index.length})`);
    if (split.index[t] === other) {
      if (ownOnly) throw new Error(`sharedRows: token ${t} is a target, but the corpus was said not to use it`);
      shift[i] = -logN;
    }
    return split.index[t];
  });
  const bias = new Float32Array(other + 1);
  bias[other] = (temperature === 0 ? 1 : temperature) * logN;
  const h = tf.concat([rows, tf.ones([rows.shape[0], 1])], 1) as tf.Tensor2D;
  const w = tf.concat([table, tf.tensor2d(bias, [other + 1, 1])], 1) as tf.Tensor2D;
  // w is an input of the head (as a training head's is), so the backward pass keeps it; a frozen table takes no gradient, being no variable
  const scored = headScores(h, w, true, compact, temperature);
  const q = headScores(h, w, true, new Int32Array(targets.length).fill(other), temperature);
  return {
    logProbs: scored.logProbs.add(tf.tensor1d(shift)) as tf.Tensor1D,
    entropy: scored.entropy.add(q.logProbs.exp().mul(logN)) as tf.Tensor1D,
  };
}

/**
 * A frozen compact head's full logits [B, T, V] from its compact ones [B, T, n] (compactLogits):
 * each row the shared row's logit at every sharing id, each own id's at its own. Not
 * differentiable (a frozen head's logits are read, not trained through).
 */
export function expandedLogits(split: SharedRows, compact: tf.Tensor3D): tf.Tensor3D {
  const [B, T, n] = compact.shape;
  const V = split.index.length;
  const zc = compact.dataSync() as Float32Array;
  // a fresh array each call: the cpu backend keeps it as the tensor's data (a wasm gather along the vocabulary took 0.8 s for 128 rows of Qwen's)
  const expanded = new Float32Array(B * T * V);
  for (let r = 0; r < B * T; r++) fullRow(zc.subarray(r * n, r * n + n), split, expanded.subarray(r * V, r * V + V));
  return tf.tensor3d(expanded, [B, T, V]);
}
