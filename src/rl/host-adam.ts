/**
 * Adam with its moments in Node's memory instead of the backend's heap. tfjs-wasm's heap
 * addresses about 2 GB; fully fine-tuning a 135M-parameter model needs 0.5 GB of weights,
 * 0.5 GB of gradients and 1 GB of moments, which together do not fit. Here the moments are
 * plain Float32Arrays and each variable's update runs in JS, one variable at a time, so the
 * heap holds only the weights, the gradients and one new value at once.
 *
 * The arithmetic is tfjs's AdamOptimizer's, operation for operation in float32 (each result
 * rounded with Math.fround, which gives float32's correctly rounded +, *, / and sqrt):
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p = (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) * -lr + p
 * with b^t kept as tfjs keeps it (b, then multiplied by b after each step), so it matches
 * tf.train.adam bit for bit (tested). The moments are kept by the position of a variable in
 * the gradient list, as tfjs keeps them; the state reads and writes as tfjs names it (`iter`,
 * `<variable>/m`, `<variable>/v`), so a checkpoint moves between the two.
 */
import * as tf from '@tensorflow/tfjs';

type Gradients = Parameters<tf.Optimizer['applyGradients']>[0];
type NamedTensor = { name: string; tensor: tf.Tensor };

/** One tensor of an optimizer's state, in Node's memory. */
export interface HostWeight { name: string; shape: number[]; dtype: 'float32' | 'int32'; data: Float32Array | Int32Array }

/** Whether `o` is a HostAdam (tfjs's Optimizer makes `instanceof` true of every optimizer). */
export const isHostAdam = (o: tf.Optimizer): o is HostAdam => typeof (o as Partial<HostAdam>).hostWeights === 'function';

export class HostAdam extends tf.Optimizer {
  static className = 'HostAdam';

  private accBeta1: number;
  private accBeta2: number;
  private readonly moments: { name: string; shape: number[]; m: Float32Array; v: Float32Array }[] = [];

  constructor(public learningRate: number, public beta1 = 0.9, public beta2 = 0.999, public epsilon = tf.backend().epsilon()) {
    super();
    this.accBeta1 = Math.fround(beta1);
    this.accBeta2 = Math.fround(beta2);
  }

  override applyGradients(variableGradients: Gradients): void {
    const f = Math.fround;
    const names = Array.isArray(variableGradients) ? variableGradients.map((v) => v.name) : Object.keys(variableGradients);
    const c1 = f(1 - this.accBeta1), c2 = f(1 - this.accBeta2);
    const b1 = f(this.beta1), omb1 = f(1 - this.beta1), b2 = f(this.beta2), omb2 = f(1 - this.beta2);
    const eps = f(this.epsilon), neglr = f(-this.learningRate);
    names.forEach((name, i) => {
      const variable = tf.engine().registeredVariables[name];
      if (!variable) throw new Error(`host adam: no variable ${name}`);
      const n = variable.size;
      const state = (this.moments[i] ??= { name, shape: variable.shape, m: new Float32Array(n), v: new Float32Array(n) });
      const gradient: tf.Tensor | undefined = Array.isArray(variableGradients) ? variableGradients[i].tensor : variableGradients[name];
      if (gradient == null) return;
      const g = gradient.dataSync() as Float32Array;
      const p = variable.dataSync() as Float32Array; // a copy, written with the new values
      const { m, v } = state;
      for (let j = 0; j < n; j++) {
        const gj = g[j];
        const mj = f(f(m[j] * b1) + f(gj * omb1));
        const vj = f(f(v[j] * b2) + f(f(gj * gj) * omb2));
        m[j] = mj;
        v[j] = vj;
        const step = f(f(mj / c1) / f(f(Math.sqrt(f(vj / c2))) + eps));
        p[j] = f(f(step * neglr) + p[j]);
      }
      const next = tf.tensor(p, variable.shape, 'float32');
      variable.assign(next);
      next.dispose();
    });
    this.accBeta1 = f(this.accBeta1 * f(this.beta1));
    this.accBeta2 = f(this.accBeta2 * f(this.beta2));
    this.incrementIterations();
  }

  /** The state as tfjs's Adam names it, in Node's memory: `iter`, then every `/m`, then every `/v`. */
  hostWeights(): HostWeight[] {
    return [
      { name: 'iter', shape: [], dtype: 'int32', data: Int32Array.of(this.iterations) },
      ...this.moments.map((s) => ({ name: `${s.name}/m`, shape: s.shape, dtype: 'float32' as const, data: s.m })),
      ...this.moments.map((s) => ({ name: `${s.name}/v`, shape: s.shape, dtype: 'float32' as const, data: s.v })),
    ];
  }

  /** Restores what hostWeights (or tfjs's Adam) wrote; b^t is replayed to the step count, as the uninterrupted run has it. */
  setHostWeights(weights: HostWeight[]): void {
    const [iter, ...rest] = weights;
    if (iter?.name !== 'iter') throw new Error('host adam: the state does not start with iter');
    if (rest.length % 2) throw new Error(`host adam: ${rest.length} moments, not pairs`);
    const half = rest.length / 2;
    this.moments.length = 0;
    for (let i = 0; i < half; i++) {
      const m = rest[i], v = rest[half + i];
      if (!m.name.endsWith('/m') || v.name !== `${m.name.slice(0, -2)}/v`) throw new Error(`host adam: moments ${m.name} and ${v.name} do not pair`);
      this.moments.push({ name: m.name.slice(0, -2), shape: m.shape, m: Float32Array.from(m.data), v: Float32Array.from(v.data) });
    }
    const t = iter.data[0];
    this.iterations_ = t;
    this.accBeta1 = Math.fround(this.beta1);
    this.accBeta2 = Math.fround(this.beta2);
    for (let k = 0; k < t; k++) {
      this.accBeta1 = Math.fround(this.accBeta1 * Math.fround(this.beta1));
      this.accBeta2 = Math.fround(this.accBeta2 * Math.fround(this.beta2));
    }
  }

  override async getWeights(): Promise<NamedTensor[]> {
    return this.hostWeights().map((w) => ({ name: w.name, tensor: tf.tensor(w.data, w.shape, w.dtype) }));
  }

  override async setWeights(weightValues: NamedTensor[]): Promise<void> {
    this.setHostWeights(weightValues.map((w) => ({ name: w.name, shape: w.tensor.shape, dtype: w.tensor.dtype === 'int32' ? 'int32' : 'float32', data: w.tensor.dataSync() as Float32Array })));
  }

  override getConfig(): tf.serialization.ConfigDict {
    return { learningRate: this.learningRate, beta1: this.beta1, beta2: this.beta2, epsilon: this.epsilon };
  }

  override dispose(): void {
    this.moments.length = 0;
    super.dispose();
  }
}
