import * as tf from '@tensorflow/tfjs';
import { fusedKernelsActive } from '../backend/fused/index.js';
import { fusedGelu } from '../backend/fused/gelu.js';
import { fusedLayerNorm, fusesLayerNorm } from '../backend/fused/layer-norm.js';
import { activeSgemm } from '../backend/native/index.js';

/** Pre-LayerNorm over the last axis, epsilon 1e-5 as in PyTorch's nn.LayerNorm. */
export function layerNorm(x: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor): tf.Tensor {
  if (fusedKernelsActive() && fusesLayerNorm(x, gain, bias)) return fusedLayerNorm(x, gain, bias, 1e-5);
  const mean = x.mean(-1, true);
  const centred = x.sub(mean);
  const variance = centred.square().mean(-1, true);
  return centred.mul(variance.add(1e-5).rsqrt()).mul(gain).add(bias);
}

/** Exact GELU, x * Phi(x), as PyTorch's default F.gelu (not the tanh approximation). */
export function gelu(x: tf.Tensor): tf.Tensor {
  if (fusedKernelsActive()) return fusedGelu(x);
  return x.mul(tf.erf(x.mul(Math.SQRT1_2)).add(1)).mul(0.5);
}

/**
 * The backward products dy w^T and x^T dy. On tfjs's wasm kernels they transpose explicitly
 * and then multiply untransposed, because there a product with a transpose flag skips XNNPACK
 * and runs about 25 times slower (measured: 1.3 against 34 GFLOP/s for [3072,128] x
 * [128,512]); a native sgemm takes the flags for free, so the copies are skipped.
 */
export function backProducts(dy: tf.Tensor2D, x: tf.Tensor2D, w: tf.Tensor2D): [tf.Tensor2D, tf.Tensor2D] {
  if (activeSgemm()) return [tf.matMul(dy, w, false, true), tf.matMul(x, dy, true, false)];
  return [tf.matMul(dy, w.transpose()), tf.matMul(x.transpose(), dy)];
}

/** y = x @ w + b with a hand-written gradient (see backProducts). */
const affine = tf.customGrad(((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, w, b] = args as tf.Tensor[];
  (args[3] as tf.GradSaveFunc)([x, w]);
  const value = tf.fused.matMul({ a: x as tf.Tensor2D, b: w as tf.Tensor2D, bias: b });
  // tfjs calls a custom gradient outside any scope until the backward pass ends: the transposes are freed here
  const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) =>
    tf.tidy(() => {
      const [xs, ws] = saved as tf.Tensor2D[];
      return [...backProducts(dy as tf.Tensor2D, xs, ws), dy.sum(0)];
    });
  return { value, gradFunc };
}) as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor) => tf.Tensor2D;

/** x @ w without a bias, with the same explicit-transpose gradient as `affine`. */
const product = tf.customGrad(((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, w] = args as tf.Tensor2D[];
  (args[2] as tf.GradSaveFunc)([x, w]);
  const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) =>
    tf.tidy(() => {
      const [xs, ws] = saved as tf.Tensor2D[];
      return backProducts(dy as tf.Tensor2D, xs, ws);
    });
  return { value: tf.matMul(x, w), gradFunc };
}) as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** x [..., in] @ w [in, out] + b, flattening the leading axes into one matrix product. */
export function linear(x: tf.Tensor, w: tf.Tensor2D, b?: tf.Tensor): tf.Tensor {
  const lead = x.shape.slice(0, -1);
  const y = b
    ? affine(x.reshape([-1, w.shape[0]]) as tf.Tensor2D, w, b)
    : product(x.reshape([-1, w.shape[0]]) as tf.Tensor2D, w);
  return y.reshape([...lead, w.shape[1]]);
}

/** log p(target) at each position: logits [B, T, V], targets [B, T] int32 -> [B, T]. */
export function tokenLogProbs(logits: tf.Tensor3D, targets: tf.Tensor2D): tf.Tensor2D {
  // A one-hot product instead of a gather keeps the backward pass free of scatter kernels.
  const logp = tf.logSoftmax(logits);
  return logp.mul(tf.oneHot(targets, logits.shape[2])).sum(-1) as tf.Tensor2D;
}

/** Entropy -sum p log p of each next-token distribution: [B, T, V] -> [B, T]. */
export function tokenEntropy(logits: tf.Tensor3D): tf.Tensor2D {
  const logp = tf.logSoftmax(logits);
  return logp.exp().mul(logp).sum(-1).neg() as tf.Tensor2D;
}

/**
 * Self-certainty of each next-token distribution, as Intuitor defines it: KL(U || p) =
 * logsumexp(z) - mean(z) - log V for logits z over V tokens. We report the true KL (with
 * the - log V term, so it is 0 for a uniform distribution and never negative); Intuitor's
 * code drops that constant, which shifts every value by log V and changes no ranking.
 */
export function tokenSelfCertainty(logits: tf.Tensor3D): tf.Tensor2D {
  const v = logits.shape[2];
  return tf.logSumExp(logits, -1).sub(logits.mean(-1)).sub(Math.log(v)) as tf.Tensor2D;
}

/** Fills a Float32Array from a seeded normal draw, so weights are identical on every backend. */
export function seededNormal(size: number, std: number, draw: () => number): Float32Array {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = draw() * std;
  return out;
}

/** tf.tidy for results that hold tensors in plain objects and arrays (tf.tidy keeps them; its type does not say so). */
export function tidyKeep<T>(f: () => T): T {
  return tf.tidy(f as unknown as () => tf.TensorContainer) as unknown as T;
}
