/**
 * RMSNorm and SwiGLU's product as single operations on the SIMD kernels (src/backend/simd),
 * forward and backward, for the wasm and cpu backends with the fused kernels on. tfjs composes
 * RMSNorm from six kernels forward (square, mean, add, rsqrt, two products) and about a dozen
 * backward, and silu(g) u from four and eight, each a pass over the tensor and a tape entry;
 * here each direction is one pass (two for RMSNorm's rows). They compute what the composed
 * operations compute, to float32 rounding (test/models/hf-fused.test.ts).
 */
import * as tf from '@tensorflow/tfjs';
import { fusedKernelsActive } from '../../backend/fused/index.js';
import { simdCall } from '../../backend/simd/index.js';

type Op = Parameters<typeof tf.customGrad>[0];
const make = (info: tf.TensorInfo) => tf.engine().makeTensorFromTensorInfo(info);

/** Whether fusedRmsNorm can take x and this gain (fused kernels on; last axis a multiple of 4, the gain's length). */
export function fusesRmsNorm(x: tf.Tensor, gain: tf.Tensor): boolean {
  const d = x.shape[x.shape.length - 1];
  return fusedKernelsActive() && d % 4 === 0 && gain.rank === 1 && gain.shape[0] === d && x.dtype === 'float32';
}

/** x g / sqrt(mean(x^2) + eps) over the last axis, as transformers' LlamaRMSNorm; gradients to x and g. */
export function fusedRmsNorm(x: tf.Tensor, gain: tf.Tensor, eps: number): tf.Tensor {
  const d = x.shape[x.shape.length - 1];
  const rows = x.size / d;
  const backendName = tf.getBackend();
  const backend = tf.engine().backend;
  const f = tf.customGrad(((xs: tf.Tensor, g: tf.Tensor, save: tf.GradSaveFunc) => {
    save([xs, g]);
    const [y] = simdCall(backendName, backend, [xs, g], [xs.shape], (k, [xp, gp], [yp]) =>
      k.rmsNorm(xp, gp, yp, rows, d, eps),
    );
    return {
      value: make(y),
      // both gradients in one pass (the gain's is a running sum over rows, cheap when unused)
      gradFunc: (dy: tf.Tensor, [xs2, g2]: tf.Tensor[]) =>
        simdCall(backendName, backend, [dy, xs2, g2], [xs2.shape, [d]], (k, [dyp, xp, gp], [dxp, dgp]) =>
          k.rmsNormGrad(dyp, xp, gp, dxp, dgp, rows, d, eps, 3),
        ).map(make),
    };
  }) as unknown as Op) as unknown as (x: tf.Tensor, g: tf.Tensor) => tf.Tensor;
  return f(x, gain);
}

/** Whether fusedSwiglu can take g and u (fused kernels on, float32, the same shape). */
export function fusesSwiglu(g: tf.Tensor, u: tf.Tensor): boolean {
  return (
    fusedKernelsActive() && g.dtype === 'float32' && u.dtype === 'float32' && tf.util.arraysEqual(g.shape, u.shape)
  );
}

/** silu(g) u = g σ(g) u, the product inside a SwiGLU MLP; gradients to g and u. */
export function fusedSwiglu(g: tf.Tensor, u: tf.Tensor): tf.Tensor {
  const backendName = tf.getBackend();
  const backend = tf.engine().backend;
  const n = g.size;
  const f = tf.customGrad(((gs: tf.Tensor, us: tf.Tensor, save: tf.GradSaveFunc) => {
    save([gs, us]);
    const [y] = simdCall(backendName, backend, [gs, us], [gs.shape], (k, [gp, up], [yp]) => k.swiglu(gp, up, yp, n));
    return {
      value: make(y),
      gradFunc: (dy: tf.Tensor, [g2, u2]: tf.Tensor[]) =>
        simdCall(backendName, backend, [dy, g2, u2], [g2.shape, u2.shape], (k, [dyp, gp, up], [dgp, dup]) =>
          k.swigluGrad(dyp, gp, up, dgp, dup, n),
        ).map(make),
    };
  }) as unknown as Op) as unknown as (g: tf.Tensor, u: tf.Tensor) => tf.Tensor;
  return f(g, u);
}
