import * as tf from '@tensorflow/tfjs';
import { simdCall } from '../simd/index.js';
import { fusedKernelsActive } from './active.js';

type Args = Parameters<tf.KernelFunc>[0];
type Gradients = Parameters<tf.AdamOptimizer['applyGradients']>[0];

export const ADAM = 'CoevolveAdam';

interface AdamAttrs {
  beta1: number;
  beta2: number;
  oneMinusAccBeta1: number;
  oneMinusAccBeta2: number;
  epsilon: number;
  learningRate: number;
}

/** One Adam update of a variable in one SIMD pass: [value, m, v] in, their new values out. */
export function adamKernel(backendName: string): tf.KernelConfig {
  const kernelFunc: tf.KernelFunc = ({ inputs, backend, attrs }: Args) => {
    const { value, m, v, g } = inputs as Record<'value' | 'm' | 'v' | 'g', tf.TensorInfo>;
    const a = attrs as unknown as AdamAttrs;
    const n = tf.util.sizeFromShape(value.shape);
    const f = Math.fround;
    // the scalars tfjs makes: float32 tensors of beta, 1 - beta (computed in double), -lr, eps
    return simdCall(
      backendName,
      backend,
      [value, m, v, g],
      [value.shape, value.shape, value.shape],
      (k, [p, mp, vp, gp], [po, mo, vo]) =>
        k.adam(
          p,
          mp,
          vp,
          gp,
          po,
          mo,
          vo,
          n,
          f(a.beta1),
          f(1 - a.beta1),
          f(a.beta2),
          f(1 - a.beta2),
          f(a.oneMinusAccBeta1),
          f(a.oneMinusAccBeta2),
          f(a.epsilon),
          f(-a.learningRate),
        ),
    );
  };
  return { kernelName: ADAM, backendName, kernelFunc };
}

/** What AdamOptimizer keeps privately, read here to step it the same way. */
interface AdamState {
  accBeta1: tf.Variable;
  accBeta2: tf.Variable;
  accumulatedFirstMoment: { originalName: string; variable: tf.Variable }[];
  accumulatedSecondMoment: { originalName: string; variable: tf.Variable }[];
  learningRate: number;
  beta1: number;
  beta2: number;
  epsilon: number;
}

/**
 * tf.train.adam with each variable's update as one fused kernel when the fused kernels serve
 * the backend in use (else tfjs's own). It is tfjs's AdamOptimizer in everything else (state,
 * getWeights / setWeights, the moments kept by the position of a variable in the list), and
 * its update is tfjs's float32 operations in tfjs's order, so results are bit for bit the
 * same (tested): about 12 kernels a variable become one, 33 ms of a reference step become 3.
 */
export class FusedAdam extends tf.AdamOptimizer {
  override applyGradients(variableGradients: Gradients): void {
    if (!fusedKernelsActive()) return super.applyGradients(variableGradients);
    const s = this as unknown as AdamState;
    const names = Array.isArray(variableGradients)
      ? variableGradients.map((v) => v.name)
      : Object.keys(variableGradients);
    tf.tidy(() => {
      const oneMinusAccBeta1 = tf.sub(1, s.accBeta1).dataSync()[0];
      const oneMinusAccBeta2 = tf.sub(1, s.accBeta2).dataSync()[0];
      names.forEach((name, i) => {
        const value = tf.engine().registeredVariables[name];
        s.accumulatedFirstMoment[i] ??= {
          originalName: `${name}/m`,
          variable: tf.tidy(() => tf.zerosLike(value).variable(false)),
        };
        s.accumulatedSecondMoment[i] ??= {
          originalName: `${name}/v`,
          variable: tf.tidy(() => tf.zerosLike(value).variable(false)),
        };
        const gradient: tf.Tensor | undefined = Array.isArray(variableGradients)
          ? variableGradients[i].tensor
          : variableGradients[name];
        if (gradient == null) return;
        const m = s.accumulatedFirstMoment[i].variable,
          v = s.accumulatedSecondMoment[i].variable;
        const attrs = {
          beta1: s.beta1,
          beta2: s.beta2,
          oneMinusAccBeta1,
          oneMinusAccBeta2,
          epsilon: s.epsilon,
          learningRate: s.learningRate,
        };
        const [nextValue, nextM, nextV] = tf
          .engine()
          .runKernel(ADAM, { value, m, v, g: gradient.toFloat() }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor[];
        m.assign(nextM);
        v.assign(nextV);
        value.assign(nextValue);
      });
      s.accBeta1.assign(tf.mul(s.accBeta1, s.beta1));
      s.accBeta2.assign(tf.mul(s.accBeta2, s.beta2));
    });
    (this as unknown as { incrementIterations(): void }).incrementIterations();
  }
}

/** tf.train.adam's signature, on FusedAdam. */
export function adam(learningRate = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon?: number): FusedAdam {
  return new FusedAdam(learningRate, beta1, beta2, epsilon);
}
