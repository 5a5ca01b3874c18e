/**
 * Frozen matrices kept outside the backend's heap. tfjs-wasm's heap addresses only about 2 GB
 * (its offsets are signed 32-bit numbers in JS), which a 0.5B model's float32 weights fill
 * alone. A frozen weight (a base under LoRA, a model that only generates) needs no gradient,
 * so it can stay in a plain Float32Array in Node's memory: the products read it there, through
 * the native sgemm (which takes any float32 array) or, without one, a JS loop.
 *
 * `hostMatMul(x, m, transpose)` is x @ m (or x @ m^T), [.., K] -> [.., N], with the gradient
 * of x (dy @ m^T, or dy @ m); the matrix itself never gets one.
 */
import * as tf from '@tensorflow/tfjs';
import { withOutput, ADDRESSABLE } from '../views.js';
import { activeSgemm } from './index.js';
import { smallGemm } from './matmul.js';

/** A row-major [rows, cols] float32 matrix in Node's memory (read only once built). */
export class HostMatrix {
  constructor(
    readonly data: Float32Array,
    readonly rows: number,
    readonly cols: number,
  ) {
    if (data.length !== rows * cols) throw new Error(`host matrix: ${data.length} values for [${rows}, ${cols}]`);
  }

  /** Rows `ids` [n] gathered into an [n, cols] tensor (an embedding lookup). */
  gather(ids: Int32Array | number[]): tf.Tensor2D {
    const out = new Float32Array(ids.length * this.cols);
    for (let i = 0; i < ids.length; i++) {
      const r = ids[i];
      if (!(r >= 0 && r < this.rows)) throw new Error(`host matrix: row ${r} outside [0, ${this.rows})`);
      out.set(this.data.subarray(r * this.cols, (r + 1) * this.cols), i * this.cols);
    }
    return tf.tensor2d(out, [ids.length, this.cols]);
  }
}

/**
 * `data` copied into shared memory (a SharedArrayBuffer): worker threads that receive it adopt
 * the same memory instead of a copy, so a frozen matrix is held once per process.
 */
export function sharedCopy(data: Float32Array | Float64Array): Float32Array {
  const out = new Float32Array(new SharedArrayBuffer(4 * data.length));
  out.set(data);
  return out;
}

/** x [N, K] @ op(m) -> [N, cols or rows], no gradient: on the backend's memory in place (wasm, cpu). */
export function hostProduct(x: tf.Tensor2D, m: HostMatrix, transpose: boolean): tf.Tensor2D {
  const backendName = tf.getBackend();
  if (!ADDRESSABLE.has(backendName))
    throw new Error(`host matrices work on the wasm and cpu backends, not '${backendName}'`);
  const [N, K] = x.shape;
  const inner = transpose ? m.cols : m.rows;
  const outer = transpose ? m.rows : m.cols;
  if (K !== inner)
    throw new Error(`host matrix: [${N}, ${K}] @ [${m.rows}, ${m.cols}]${transpose ? '^T' : ''} do not fit`);
  const input = x.dtype === 'float32' ? x : x.toFloat();
  const v = withOutput(backendName, tf.engine().backend, [N, outer], [input]);
  // below a few thousand multiply-adds, or with no library, the JS loop
  const gemm = N * outer * K < 4096 ? smallGemm : (activeSgemm() ?? smallGemm);
  gemm(false, transpose, N, outer, K, v.ins[0], K, m.data, m.cols, 0, v.out, outer);
  if (input !== x) input.dispose();
  return tf.engine().makeTensorFromTensorInfo(v.info) as tf.Tensor2D;
}

/** x [.., K] @ op(m), with x's gradient. */
export function hostMatMul(x: tf.Tensor, m: HostMatrix, transpose: boolean): tf.Tensor {
  const lead = x.shape.slice(0, -1);
  const K = x.shape[x.shape.length - 1];
  const f = tf.customGrad(((input: tf.Tensor) => ({
    value: hostProduct(input.reshape([-1, K]) as tf.Tensor2D, m, transpose).reshape([
      ...lead,
      transpose ? m.rows : m.cols,
    ]),
    // a custom gradient runs outside any scope (tfjs): its temporaries are freed here
    gradFunc: (dy: tf.Tensor) =>
      tf.tidy(() =>
        hostProduct(dy.reshape([-1, dy.shape[dy.shape.length - 1]]) as tf.Tensor2D, m, !transpose).reshape(input.shape),
      ),
  })) as unknown as Parameters<typeof tf.customGrad>[0]);
  return (f as unknown as (x: tf.Tensor) => tf.Tensor)(x);
}
