import * as tf from '@tensorflow/tfjs';
import { simdCall } from '../simd/index.js';

type Args = Parameters<tf.KernelFunc>[0];

export const GELU = 'CoevolveGelu';
export const GELU_GRAD = 'CoevolveGeluGrad';

/**
 * Exact GELU, y = x Φ(x), and its gradient dx = dy (Φ(x) + x φ(x)), each one SIMD pass over
 * the activations. tfjs composes GELU from erf, and erf's gradient from exp: 24 kernel calls
 * and 19% of a reference train step.
 */
export function geluKernels(backendName: string): tf.KernelConfig[] {
  const forward: tf.KernelFunc = ({ inputs, backend }: Args) => {
    const { x } = inputs as { x: tf.TensorInfo };
    return simdCall(backendName, backend, [x], [x.shape], (k, [xp], [yp]) =>
      k.gelu(xp, yp, tf.util.sizeFromShape(x.shape)),
    )[0];
  };
  const backward: tf.KernelFunc = ({ inputs, backend }: Args) => {
    const { dy, x } = inputs as { dy: tf.TensorInfo; x: tf.TensorInfo };
    return simdCall(backendName, backend, [dy, x], [x.shape], (k, [dyp, xp], [dxp]) =>
      k.geluGrad(dyp, xp, dxp, tf.util.sizeFromShape(x.shape)),
    )[0];
  };
  return [
    { kernelName: GELU, backendName, kernelFunc: forward },
    { kernelName: GELU_GRAD, backendName, kernelFunc: backward },
  ];
}

/** The gradient of the fused GELU (once per process: gradients are not per backend). */
export function registerGeluGradient(): void {
  if (tf.getGradient(GELU)) return;
  tf.registerGradient({
    kernelName: GELU,
    inputsToSave: ['x'],
    gradFunc: (dy, saved) => ({
      x: () => tf.engine().runKernel(GELU_GRAD, { dy: dy as tf.Tensor, x: saved[0] }) as tf.Tensor,
    }),
  });
}

/** GELU on the fused kernel: float32 in, float32 out. */
export function fusedGelu(x: tf.Tensor): tf.Tensor {
  return tf.engine().runKernel(GELU, { x: x.toFloat() }) as tf.Tensor;
}
