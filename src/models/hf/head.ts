/**
 * The vocabulary projection for scoring, in row chunks: each chunk's logits [rows, V] exist
 * only while that chunk is computed, forward and backward, so `[batch, tokens, vocabulary]`
 * logits never exist at once (151,669 columns for Qwen). The backward pass recomputes a
 * chunk's logits from the saved hidden states instead of keeping them: peak memory is one
 * chunk's logits plus the hidden states, for one extra head product per chunk. (tfjs calls a
 * custom gradient outside any scope, so each chunk's backward frees its own temporaries.)
 *
 * Per row: logp = log_softmax(z)[target] and H = -sum p log p, for z = h W / temperature.
 * d logp / dz = onehot - p;  dH / dz = -p (log p + H).
 */
import * as tf from '@tensorflow/tfjs';
import { HostMatrix, hostProduct } from '../../backend/native/host.js';

/** Rows per chunk: a chunk's logits take rows x V x 4 bytes (64 MB for 100 rows of Qwen's vocabulary). */
export const HEAD_CHUNK_BYTES = 64 << 20;

/**
 * Target log-probs and entropies [N] of rows `hidden` [N, d] under the head `w` ([d, V], or
 * [V, d] when `tied`, the embedding table; a host matrix is [V, d] either way), logits divided
 * by `temperature`; `chunkRows` overrides the rows per chunk (HEAD_CHUNK_BYTES of logits by
 * default); `trainHead` false when the head is frozen (LoRA), so no gradient of it is computed.
 */
export function headScores(hidden: tf.Tensor2D, w: tf.Tensor2D | HostMatrix, tied: boolean, targets: Int32Array, temperature = 1, chunkRows?: number, trainHead = true): { logProbs: tf.Tensor1D; entropy: tf.Tensor1D } {
  const [N] = hidden.shape;
  const host = w instanceof HostMatrix;
  if (host && trainHead) throw new Error('head: a host matrix is frozen; it cannot train');
  const V = host ? w.rows : tied ? w.shape[0] : w.shape[1];
  // z = h W (or h W^T) and its transpose product dz -> dh
  const project = host ? (h: tf.Tensor2D) => hostProduct(h, w, true) : (h: tf.Tensor2D) => tf.matMul(h, w, false, tied) as tf.Tensor2D;
  const back = host ? (dz: tf.Tensor2D) => hostProduct(dz, w, false) : (dz: tf.Tensor2D) => tf.matMul(dz, w, false, !tied) as tf.Tensor2D;
  const rows = chunkRows ?? Math.max(1, Math.floor(HEAD_CHUNK_BYTES / (4 * V)));
  const logProbs: tf.Tensor1D[] = [];
  const entropy: tf.Tensor1D[] = [];
  for (let start = 0; start < N; start += rows) {
    const n = Math.min(rows, N - start);
    const part = hidden.slice([start, 0], [n, -1]) as tf.Tensor2D;
    // a frozen head (an adapter trains) is not an input of the chunk: its [V, d] gradient is never formed
    const ids = targets.subarray(start, start + n);
    const both = trainHead ? chunk(ids, V, tied, temperature)(part, w as tf.Tensor2D) : frozenChunk(ids, V, temperature, project, back)(part); // [n, 2]
    const [lp, h] = tf.split(both, 2, 1);
    logProbs.push(lp.reshape([n]));
    entropy.push(h.reshape([n]));
  }
  return { logProbs: tf.concat(logProbs), entropy: tf.concat(entropy) };
}

/** d(logp, H)/dz for a chunk's logits z (recomputed), given the upstream gradient dy [rows, 2]. */
function logitGrad(dy: tf.Tensor2D, z: tf.Tensor2D, targets: Int32Array, V: number, t: number): tf.Tensor2D {
  const [dLogp, dEntropy] = tf.split(dy, 2, 1);
  const lp = tf.logSoftmax(z);
  const p = lp.exp();
  const H = p.mul(lp).sum(-1, true).neg();
  const oneHot = tf.oneHot(tf.tensor1d(targets, 'int32'), V);
  return oneHot.sub(p).mul(dLogp).add(p.mul(lp.add(H)).neg().mul(dEntropy)).div(t) as tf.Tensor2D;
}

/** A chunk's [rows, 2] of logp and H from its logits. */
function scoresOf(z: tf.Tensor2D, targets: Int32Array, V: number): tf.Tensor2D {
  const logp = tf.logSoftmax(z);
  return tf.stack([logp.mul(tf.oneHot(tf.tensor1d(targets, 'int32'), V)).sum(-1), logp.exp().mul(logp).sum(-1).neg()], 1) as tf.Tensor2D;
}

/** One chunk as a custom gradient: [rows, 2] holding each row's logp and H (tfjs's customGrad has one output); the backward recomputes its logits. */
function chunk(targets: Int32Array, V: number, tied: boolean, temperature: number): (h: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D {
  const t = temperature === 0 ? 1 : temperature; // greedy scores at 1, as the sampler reports greedy tokens
  const logits = (h: tf.Tensor2D, w: tf.Tensor2D) => tf.matMul(h, w, false, tied).div(t) as tf.Tensor2D;
  const f = tf.customGrad(((h: tf.Tensor2D, w: tf.Tensor2D, save: tf.GradSaveFunc) => {
    save([h, w]);
    return {
      value: scoresOf(logits(h, w), targets, V),
      // tfjs runs a custom gradient outside any scope until the whole backward pass ends: the chunk's temporaries are freed here
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => tf.tidy(() => {
        const [hs, ws] = saved as tf.Tensor2D[];
        const dz = logitGrad(dy, logits(hs, ws), targets, V, t);
        return [tf.matMul(dz, ws, false, !tied), tied ? tf.matMul(dz, hs, true, false) : tf.matMul(hs, dz, true, false)];
      }),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return f as unknown as (h: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;
}

/** The same with the head frozen (`project` h -> z, `back` dz -> dh): only the rows get a gradient. */
function frozenChunk(targets: Int32Array, V: number, temperature: number, project: (h: tf.Tensor2D) => tf.Tensor2D, back: (dz: tf.Tensor2D) => tf.Tensor2D): (h: tf.Tensor2D) => tf.Tensor2D {
  const t = temperature === 0 ? 1 : temperature;
  const f = tf.customGrad(((h: tf.Tensor2D, save: tf.GradSaveFunc) => {
    save([h]);
    return {
      value: scoresOf(project(h).div(t) as tf.Tensor2D, targets, V),
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => tf.tidy(() => [back(logitGrad(dy, project(saved[0] as tf.Tensor2D).div(t) as tf.Tensor2D, targets, V, t))]),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return f as unknown as (h: tf.Tensor2D) => tf.Tensor2D;
}
