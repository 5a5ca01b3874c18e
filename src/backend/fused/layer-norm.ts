import * as tf from '@tensorflow/tfjs';
import { simdCall } from '../simd/index.js';

type Args = Parameters<tf.KernelFunc>[0];
type Part = 'x' | 'gain' | 'bias';
const PART_BITS: Record<Part, number> = { x: 1, gain: 2, bias: 4 };

export const LAYER_NORM = 'CoevolveLayerNorm';
export const LAYER_NORM_GRAD = 'CoevolveLayerNormGrad';

/**
 * LayerNorm over the last axis, y = (x - mean) / sqrt(var + eps) g + b, and its three
 * gradients, each one SIMD kernel (the backward recomputes each row's statistics rather
 * than saving them, a pass over 128 floats a row). tfjs composes it from 9 kernels forward and about 20 backward. The
 * last axis must be a multiple of 4 (the op checks; fusedLayerNorm refuses others).
 */
export function layerNormKernels(backendName: string): tf.KernelConfig[] {
  const forward: tf.KernelFunc = ({ inputs, backend, attrs }: Args) => {
    const { x, gain, bias } = inputs as { x: tf.TensorInfo; gain: tf.TensorInfo; bias: tf.TensorInfo };
    const d = x.shape[x.shape.length - 1];
    const rows = tf.util.sizeFromShape(x.shape) / d;
    const eps = (attrs as { epsilon: number }).epsilon;
    return simdCall(backendName, backend, [x, gain, bias], [x.shape], (k, [xp, gp, bp], [yp]) =>
      k.layerNorm(xp, gp, bp, yp, rows, d, eps),
    )[0];
  };
  // one input's gradient per call: tfjs asks for each in its own scope, and skips those it does not need
  const backward: tf.KernelFunc = ({ inputs, backend, attrs }: Args) => {
    const { dy, x, gain } = inputs as { dy: tf.TensorInfo; x: tf.TensorInfo; gain: tf.TensorInfo };
    const d = x.shape[x.shape.length - 1];
    const rows = d === 0 ? 0 : tf.util.sizeFromShape(x.shape) / d;
    const { epsilon, part } = attrs as { epsilon: number; part: Part };
    const shape = part === 'x' ? x.shape : [d];
    return simdCall(backendName, backend, [dy, x, gain], [shape], (k, [dyp, xp, gp], [op]) =>
      k.layerNormGrad(dyp, xp, gp, op, op, op, rows, d, epsilon, PART_BITS[part]),
    )[0];
  };
  return [
    { kernelName: LAYER_NORM, backendName, kernelFunc: forward },
    { kernelName: LAYER_NORM_GRAD, backendName, kernelFunc: backward },
  ];
}

/** The gradients of the fused LayerNorm (once per process: gradients are not per backend). */
export function registerLayerNormGradient(): void {
  if (tf.getGradient(LAYER_NORM)) return;
  tf.registerGradient({
    kernelName: LAYER_NORM,
    inputsToSave: ['x', 'gain'],
    gradFunc: (dy, saved, attrs) => {
      const gradient = (part: Part) => () =>
        tf
          .engine()
          .runKernel(
            LAYER_NORM_GRAD,
            { dy: dy as tf.Tensor, x: saved[0], gain: saved[1] },
            { ...attrs, part },
          ) as tf.Tensor;
      return { x: gradient('x'), gain: gradient('gain'), bias: gradient('bias') };
    },
  });
}

/** Whether fusedLayerNorm can take x with this last axis and these parameters. */
export function fusesLayerNorm(x: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor): boolean {
  const d = x.shape[x.shape.length - 1];
  return x.rank >= 1 && d % 4 === 0 && gain.rank === 1 && bias.rank === 1 && gain.shape[0] === d && bias.shape[0] === d;
}

/** LayerNorm on the fused kernel (see fusesLayerNorm for the shapes it takes). */
export function fusedLayerNorm(x: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor, epsilon: number): tf.Tensor {
  if (!fusesLayerNorm(x, gain, bias))
    throw new Error(
      `fused layer norm: last axis ${x.shape[x.shape.length - 1]} must be a multiple of 4 with gain and bias of that length`,
    );
  return tf
    .engine()
    .runKernel(LAYER_NORM, { x: x.toFloat(), gain: gain.toFloat(), bias: bias.toFloat() }, { epsilon }) as tf.Tensor;
}
