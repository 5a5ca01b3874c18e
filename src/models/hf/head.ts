/**
 * The vocabulary projection for scoring, in row chunks: each chunk's logits [rows, V] exist
 * only while that chunk is computed, forward and backward, so `[batch, tokens, vocabulary]`
 * logits never exist at once (151,669 columns for Qwen). While every chunk's log-softmax fits
 * HEAD_KEEP_BYTES (a small batch) it is kept for the backward pass; beyond, the backward pass
 * recomputes a chunk's logits from the saved hidden states: peak memory is then one chunk's
 * logits plus the hidden states, for one extra head product per chunk. (tfjs calls a
 * custom gradient outside any scope, so each chunk's backward frees its own temporaries.)
 *
 * Per row: logp = log_softmax(z)[target] and H = -sum p log p, for z = h W / temperature.
 * d logp / dz = onehot - p;  dH / dz = -p (log p + H).
 */
import * as tf from '@tensorflow/tfjs';
import { totalmem } from 'node:os';
import { HostMatrix, hostProduct } from '../../backend/native/host.js';
import { activeSgemm } from '../../backend/native/index.js';
import { nativeHeadScores } from './head-native.js';

/** Rows per chunk: a chunk's logits take rows x V x 4 bytes (64 MB for 100 rows of Qwen's vocabulary). */
export const HEAD_CHUNK_BYTES = 64 << 20;
/** Up to this many bytes of log-softmax ([rows, V] floats, all chunks) are kept from the forward pass for the backward instead of recomputed. */
export const HEAD_KEEP_BYTES = 256 << 20;
/** On the native path (head-native.ts) the logits are kept in Node's memory, outside the heap: up to a sixteenth of the machine's memory, at most 1 GiB. */
export const HEAD_KEEP_HOST_BYTES = Math.min(2 ** 30, Math.floor(totalmem() / 16));

/**
 * Target log-probs and entropies [N] of rows `hidden` [N, d] under the head `w` ([d, V], or
 * [V, d] when `tied`, the embedding table; a host matrix is [V, d] either way), logits divided
 * by `temperature`; `chunkRows` overrides the rows per chunk (HEAD_CHUNK_BYTES of logits by
 * default); `trainHead` false when the head is frozen (LoRA), so no gradient of it is computed;
 * `keepBytes` bounds what is kept for the backward pass (HEAD_KEEP_BYTES of log-softmax in
 * the heap; HEAD_KEEP_HOST_BYTES of logits in Node's memory when a native sgemm serves the
 * backend, which head-native.ts then computes on).
 */
export function headScores(
  hidden: tf.Tensor2D,
  w: tf.Tensor2D | HostMatrix,
  tied: boolean,
  targets: Int32Array,
  temperature = 1,
  chunkRows?: number,
  trainHead = true,
  keepBytes?: number,
): { logProbs: tf.Tensor1D; entropy: tf.Tensor1D } {
  const [N] = hidden.shape;
  const host = w instanceof HostMatrix;
  if (host && trainHead) throw new Error('head: a host matrix is frozen; it cannot train');
  const V = host ? w.rows : tied ? w.shape[0] : w.shape[1];
  const rows = chunkRows ?? Math.max(1, Math.floor(HEAD_CHUNK_BYTES / (4 * V)));
  const sgemm = activeSgemm();
  if (sgemm)
    return nativeHeadScores(
      hidden,
      w,
      tied,
      targets,
      temperature,
      rows,
      trainHead,
      keepBytes ?? HEAD_KEEP_HOST_BYTES,
      sgemm,
    );
  // z = h W (or h W^T) and its transpose product dz -> dh; a training head is the chunk's second input
  const project = host
    ? (h: tf.Tensor2D) => hostProduct(h, w, true)
    : (h: tf.Tensor2D, ww?: tf.Tensor2D) => tf.matMul(h, ww ?? w, false, tied) as tf.Tensor2D;
  const back = host
    ? (dz: tf.Tensor2D) => hostProduct(dz, w, false)
    : (dz: tf.Tensor2D, ww?: tf.Tensor2D) => tf.matMul(dz, ww ?? w, false, !tied) as tf.Tensor2D;
  const weightGrad = trainHead
    ? (dz: tf.Tensor2D, h: tf.Tensor2D) =>
        (tied ? tf.matMul(dz, h, true, false) : tf.matMul(h, dz, true, false)) as tf.Tensor2D
    : undefined;
  // every chunk's log-softmax kept for the backward while they fit `keepBytes`; else recomputed
  const keep = 4 * N * V <= (keepBytes ?? HEAD_KEEP_BYTES);
  const logProbs: tf.Tensor1D[] = [];
  const entropy: tf.Tensor1D[] = [];
  for (let start = 0; start < N; start += rows) {
    const n = Math.min(rows, N - start);
    const part = hidden.slice([start, 0], [n, -1]) as tf.Tensor2D;
    // a frozen head (an adapter trains) is not an input of the chunk: its [V, d] gradient is never formed
    const ids = targets.subarray(start, start + n);
    const f = chunk(ids, V, temperature, keep, project, back, weightGrad);
    const both = trainHead ? f(part, w as tf.Tensor2D) : f(part); // [n, 2]
    const [lp, h] = tf.split(both, 2, 1);
    logProbs.push(lp.reshape([n]));
    entropy.push(h.reshape([n]));
  }
  return { logProbs: tf.concat(logProbs), entropy: tf.concat(entropy) };
}

/** A chunk's log-softmax, its [rows, 2] of logp[target] and H, and H [rows, 1] alone. */
function scoresOf(
  z: tf.Tensor2D,
  targets: Int32Array,
  V: number,
): { lp: tf.Tensor2D; value: tf.Tensor2D; H: tf.Tensor2D } {
  const lp = tf.logSoftmax(z);
  const at = tf.tensor1d(
    Int32Array.from(targets, (target, r) => r * V + target),
    'int32',
  );
  const H = lp.exp().mul(lp).sum(-1, true).neg() as tf.Tensor2D;
  return { lp, H, value: tf.concat([tf.gather(lp.reshape([-1]), at).reshape([-1, 1]), H], 1) as tf.Tensor2D };
}

/** d(logp, H)/dz from the chunk's log-softmax and H, given the upstream gradient dy [rows, 2]: ((onehot - p) dLogp - p (log p + H) dH) / t. */
function logitGrad(
  dy: tf.Tensor2D,
  lp: tf.Tensor2D,
  H: tf.Tensor2D,
  targets: Int32Array,
  V: number,
  t: number,
): tf.Tensor2D {
  const [dLogp, dH] = tf.split(dy, 2, 1);
  const p = lp.exp();
  return tf
    .oneHot(tf.tensor1d(targets, 'int32'), V)
    .sub(p)
    .mul(dLogp)
    .sub(p.mul(lp.add(H)).mul(dH))
    .div(t) as tf.Tensor2D;
}

/**
 * A chunk as a custom gradient: [rows, 2] holding each row's logp and H (tfjs's customGrad has
 * one output). With `keep` the forward's log-softmax is kept for the backward; without, the
 * backward computes the chunk's logits again from the saved rows (memory for compute).
 * `project` is h -> z before the temperature, `back` dz -> dh; `weight` the head when it trains
 * (its gradient is then the second output).
 */
function chunk(
  targets: Int32Array,
  V: number,
  temperature: number,
  keep: boolean,
  project: (h: tf.Tensor2D, w?: tf.Tensor2D) => tf.Tensor2D,
  back: (dz: tf.Tensor2D, w?: tf.Tensor2D) => tf.Tensor2D,
  weightGrad?: (dz: tf.Tensor2D, h: tf.Tensor2D) => tf.Tensor2D,
): (...inputs: tf.Tensor2D[]) => tf.Tensor2D {
  const t = temperature === 0 ? 1 : temperature; // greedy scores at 1, as the sampler reports greedy tokens
  const logits = (h: tf.Tensor2D, w?: tf.Tensor2D) => project(h, w).div(t) as tf.Tensor2D;
  const f = tf.customGrad(((...args: unknown[]) => {
    const save = args[args.length - 1] as tf.GradSaveFunc;
    const [h, w] = args.slice(0, -1) as tf.Tensor2D[];
    const { lp, H, value } = scoresOf(logits(h, w), targets, V);
    save([h, ...(w ? [w] : []), ...(keep ? [lp, H] : [])]);
    return {
      value,
      // tfjs runs a custom gradient outside any scope until the whole backward pass ends: the chunk's temporaries are freed here
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const [hs, ...rest] = saved as tf.Tensor2D[];
          const ws = weightGrad ? rest.shift() : undefined;
          const again = keep ? undefined : scoresOf(logits(hs, ws), targets, V);
          const dz = logitGrad(dy, keep ? rest[0] : again!.lp, keep ? rest[1] : again!.H, targets, V, t);
          return weightGrad ? [back(dz, ws), weightGrad(dz, hs)] : [back(dz, ws)];
        }),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return f as unknown as (...inputs: tf.Tensor2D[]) => tf.Tensor2D;
}
