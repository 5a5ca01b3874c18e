import * as tf from '@tensorflow/tfjs';
import { simdCall } from '../simd/index.js';

type Args = Parameters<tf.KernelFunc>[0];

/**
 * Sum over leading axes (a bias's or a gain's gradient: [B, T, d] -> [d]) as one SIMD pass
 * of row additions. tfjs-wasm transposes the reduced axes to the end first, which made
 * these sums 1.6 ms each for [64, 47, 128] (0.2 now). Every other reduction goes to the
 * backend's own kernel.
 */
export function leadingSumKernel(backendName: string, own: () => tf.KernelConfig): tf.KernelConfig {
  return {
    kernelName: 'Sum',
    backendName,
    kernelFunc: (args: Args) => {
      const x = (args.inputs as { x: tf.TensorInfo }).x;
      const { axis, keepDims } = args.attrs as { axis: number | number[]; keepDims: boolean };
      const axes = tf.util.parseAxisParam(axis, x.shape).sort((a, b) => a - b);
      const k = axes.length;
      if (x.dtype !== 'float32' || k === 0 || k >= x.shape.length || axes.some((a, i) => a !== i))
        return own().kernelFunc(args);
      const rest = x.shape.slice(k);
      const rows = tf.util.sizeFromShape(x.shape.slice(0, k));
      const shape = keepDims ? [...axes.map(() => 1), ...rest] : rest;
      return simdCall(backendName, args.backend, [x], [shape], (s, [xp], [op]) =>
        s.sumRows(xp, op, rows, tf.util.sizeFromShape(rest)),
      )[0];
    },
  };
}
