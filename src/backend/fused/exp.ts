import * as tf from '@tensorflow/tfjs';
import { simdCall } from '../simd/index.js';

type Args = Parameters<tf.KernelFunc>[0];

/**
 * Exp on float32 as one SIMD pass. tfjs-wasm's calls the C library's expf one value at a
 * time: 2.8 ms for the [64, 47, 64] logits of a reference train step, of which a step takes
 * four (log-softmax forward and backward, entropy). Other dtypes go to the backend's own.
 */
export function expKernel(backendName: string, own: () => tf.KernelConfig): tf.KernelConfig {
  return {
    kernelName: 'Exp',
    backendName,
    kernelFunc: (args: Args) => {
      const x = (args.inputs as { x: tf.TensorInfo }).x;
      if (x.dtype !== 'float32') return own().kernelFunc(args);
      return simdCall(backendName, args.backend, [x], [x.shape], (k, [xp], [yp]) =>
        k.exp(xp, yp, tf.util.sizeFromShape(x.shape)),
      )[0];
    },
  };
}
