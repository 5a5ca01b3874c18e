/**
 * Adam with its moments outside the backend's heap. tfjs-wasm's heap addresses about 2 GB;
 * fully fine-tuning a 135M-parameter model needs 0.5 GB of weights, 0.5 GB of gradients and
 * 1 GB of moments, which together do not fit. Here the moments live in a WebAssembly memory of
 * their own (up to 4 GB), and each variable is updated by the same SIMD kernel FusedAdam uses,
 * in chunks: a chunk of the gradient and of the value are copied beside the moments, updated
 * in place there, and the value copied out into the new tensor. The heap holds only the
 * weights, the gradients and one new value at once. (A plain JS loop took 3.9 s a step for
 * 135M values; this takes a fraction of a second.)
 *
 * The arithmetic is tfjs's AdamOptimizer's, operation for operation in float32:
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p = (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) * -lr + p
 * with b^t kept as tfjs keeps it (b, then multiplied by b after each step), so it matches
 * tf.train.adam bit for bit (tested). The moments are kept by the position of a variable in
 * the gradient list, as tfjs keeps them; the state reads and writes as tfjs names it (`iter`,
 * `<variable>/m`, `<variable>/v`), so a checkpoint moves between the two.
 */
import * as tf from '@tensorflow/tfjs';
import { simdKernels } from '../backend/simd/index.js';
import { withOutput } from '../backend/views.js';

/** Values per chunk of a gradient and a value copied next to the moments (4 MB each). */
const CHUNK = 1 << 20;

type Gradients = Parameters<tf.Optimizer['applyGradients']>[0];
type NamedTensor = { name: string; tensor: tf.Tensor };

/** One tensor of an optimizer's state, in Node's memory. */
export interface HostWeight {
  name: string;
  shape: number[];
  dtype: 'float32' | 'int32';
  data: Float32Array | Int32Array;
}

/** Whether `o` is a HostAdam (tfjs's Optimizer makes `instanceof` true of every optimizer). */
export const isHostAdam = (o: tf.Optimizer): o is HostAdam =>
  typeof (o as Partial<HostAdam>).hostWeights === 'function';

export class HostAdam extends tf.Optimizer {
  static className = 'HostAdam';

  private accBeta1: number;
  private accBeta2: number;
  /** each variable's moments, by its position in the gradient list: float offsets of m and v in `memory` */
  private readonly slots: { name: string; shape: number[]; m: number; v: number; n: number }[] = [];
  /** one chunk of a gradient and of a value, then the moments: a memory of its own, up to 4 GB, addressed by the SIMD kernel */
  private memory = new WebAssembly.Memory({ initial: 1 });
  private used = 2 * CHUNK;

  constructor(
    public learningRate: number,
    public beta1 = 0.9,
    public beta2 = 0.999,
    public epsilon = tf.backend().epsilon(),
  ) {
    super();
    this.accBeta1 = Math.fround(beta1);
    this.accBeta2 = Math.fround(beta2);
  }

  /** Float offsets of a new slot of `n` values (zeros), growing the memory. */
  private reserve(n: number): number {
    const at = this.used;
    this.used += Math.ceil(n / 4) * 4; // 16-byte aligned for the SIMD loads
    const bytes = 4 * this.used;
    if (bytes > 2 ** 32 - 2 ** 16) throw new Error(`host adam: moments of ${this.used} values pass 4 GB`);
    if (bytes > this.memory.buffer.byteLength)
      this.memory.grow(Math.ceil((bytes - this.memory.buffer.byteLength) / 65536));
    return at;
  }

  private slot(
    i: number,
    name: string,
    shape: number[],
  ): { name: string; shape: number[]; m: number; v: number; n: number } {
    const n = shape.reduce((a, b) => a * b, 1);
    const s = (this.slots[i] ??= { name, shape, n, m: this.reserve(n), v: this.reserve(n) });
    if (s.n !== n) throw new Error(`host adam: variable ${i} (${name}) has ${n} values; its moments ${s.n}`);
    return s;
  }

  override applyGradients(variableGradients: Gradients): void {
    const f = Math.fround;
    const names = Array.isArray(variableGradients)
      ? variableGradients.map((v) => v.name)
      : Object.keys(variableGradients);
    const c1 = f(1 - this.accBeta1),
      c2 = f(1 - this.accBeta2);
    const backendName = tf.getBackend();
    names.forEach((name, i) => {
      const variable = tf.engine().registeredVariables[name];
      if (!variable) throw new Error(`host adam: no variable ${name}`);
      const s = this.slot(i, name, variable.shape);
      const gradient: tf.Tensor | undefined = Array.isArray(variableGradients)
        ? variableGradients[i].tensor
        : variableGradients[name];
      if (gradient == null) return;
      const g32 = gradient.dtype === 'float32' ? gradient : gradient.toFloat();
      // the new value is written into a new tensor of the backend, read in place with the gradient
      const views = withOutput(backendName, tf.engine().backend, variable.shape, [g32, variable]);
      const k = simdKernels(this.memory);
      const heap = new Float32Array(this.memory.buffer);
      const [g, p] = views.ins;
      for (let start = 0; start < s.n; start += CHUNK) {
        const n = Math.min(CHUNK, s.n - start);
        heap.set(g.subarray(start, start + n), 0);
        heap.set(p.subarray(start, start + n), CHUNK);
        const m = 4 * (s.m + start),
          v = 4 * (s.v + start),
          pv = 4 * CHUNK;
        // in place: the kernel reads each lane's value, moments and gradient before it writes them
        k.adam(
          pv,
          m,
          v,
          0,
          pv,
          m,
          v,
          n,
          f(this.beta1),
          f(1 - this.beta1),
          f(this.beta2),
          f(1 - this.beta2),
          c1,
          c2,
          f(this.epsilon),
          f(-this.learningRate),
        );
        views.out.set(heap.subarray(CHUNK, CHUNK + n), start);
      }
      if (g32 !== gradient) g32.dispose();
      const next = tf.engine().makeTensorFromTensorInfo(views.info);
      variable.assign(next);
      next.dispose();
    });
    this.accBeta1 = f(this.accBeta1 * f(this.beta1));
    this.accBeta2 = f(this.accBeta2 * f(this.beta2));
    this.incrementIterations();
  }

  /** The state as tfjs's Adam names it, in Node's memory: `iter`, then every `/m`, then every `/v` (views of the moments; read, do not keep). */
  hostWeights(): HostWeight[] {
    const view = (at: number, n: number) => new Float32Array(this.memory.buffer, 4 * at, n);
    return [
      { name: 'iter', shape: [], dtype: 'int32', data: Int32Array.of(this.iterations) },
      ...this.slots.map((s) => ({
        name: `${s.name}/m`,
        shape: s.shape,
        dtype: 'float32' as const,
        data: view(s.m, s.n),
      })),
      ...this.slots.map((s) => ({
        name: `${s.name}/v`,
        shape: s.shape,
        dtype: 'float32' as const,
        data: view(s.v, s.n),
      })),
    ];
  }

  /** Restores what hostWeights (or tfjs's Adam) wrote; b^t is replayed to the step count, as the uninterrupted run has it. */
  setHostWeights(weights: HostWeight[]): void {
    const [iter, ...rest] = weights;
    if (iter?.name !== 'iter') throw new Error('host adam: the state does not start with iter');
    if (rest.length % 2) throw new Error(`host adam: ${rest.length} moments, not pairs`);
    const half = rest.length / 2;
    this.slots.length = 0;
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.used = 2 * CHUNK;
    for (let i = 0; i < half; i++) {
      const m = rest[i],
        v = rest[half + i];
      if (!m.name.endsWith('/m') || v.name !== `${m.name.slice(0, -2)}/v`)
        throw new Error(`host adam: moments ${m.name} and ${v.name} do not pair`);
      const s = this.slot(i, m.name.slice(0, -2), m.shape);
      if (m.data.length !== s.n || v.data.length !== s.n)
        throw new Error(
          `host adam: moments of ${m.name} have ${m.data.length} and ${v.data.length} values, its shape ${s.n}`,
        );
      new Float32Array(this.memory.buffer, 4 * s.m, s.n).set(m.data);
      new Float32Array(this.memory.buffer, 4 * s.v, s.n).set(v.data);
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
    this.setHostWeights(
      weightValues.map((w) => ({
        name: w.name,
        shape: w.tensor.shape,
        dtype: w.tensor.dtype === 'int32' ? 'int32' : 'float32',
        data: w.tensor.dataSync() as Float32Array,
      })),
    );
  }

  override getConfig(): tf.serialization.ConfigDict {
    return { learningRate: this.learningRate, beta1: this.beta1, beta2: this.beta2, epsilon: this.epsilon };
  }

  override dispose(): void {
    this.slots.length = 0;
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.used = 2 * CHUNK;
    super.dispose();
  }
}
