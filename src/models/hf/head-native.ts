/**
 * The chunked vocabulary head of head.ts on the native sgemm and SIMD row kernels, for the
 * wasm and cpu backends when a native library serves them. tfjs's kernels spend ten passes
 * over each chunk's [rows, V] logits forward and as many backward (log-softmax, exp, sums,
 * a one-hot, the gradient's products); here a chunk's logits are written by the sgemm into a
 * scratch memory and read three times: each row's maximum, its sums Σ e and Σ e z
 * (e = exp(z/t - m)), and in the backward pass its gradient in place. Each row keeps only its
 * log-sum-exp and entropy; the logits are kept in Node's memory for the backward pass while
 * they fit `keepBytes`, else computed again.
 *
 * Per row, with z the logits over t and lse = log Σ exp z: logp = z[target] - lse, H = lse - Σ p z;
 * d/dz of a logp + b H is a (onehot - p) - b p (z - lse + H), divided by t for the raw logits.
 */
import * as tf from '@tensorflow/tfjs';
import { HostMatrix } from '../../backend/native/host.js';
import type { Sgemm } from '../../backend/native/library.js';
import { simdKernels } from '../../backend/simd/index.js';
import { readView, withOutputs } from '../../backend/views.js';
import { keptBuffer, releaseKept, taping } from './recompute.js';

/** The memory chunks are computed in (the SIMD kernels address it); grown as needed, never shrunk. */
let scratch: WebAssembly.Memory | undefined;

function scratchView(floats: number): { memory: WebAssembly.Memory; z: Float32Array } {
  const bytes = 4 * floats;
  scratch ??= new WebAssembly.Memory({ initial: 1 });
  if (scratch.buffer.byteLength < bytes) scratch.grow(Math.ceil((bytes - scratch.buffer.byteLength) / 65536));
  return { memory: scratch, z: new Float32Array(scratch.buffer, 0, floats) };
}

/** See headScores (head.ts); `sgemm` is the native product serving the backend. */
export function nativeHeadScores(
  hidden: tf.Tensor2D,
  w: tf.Tensor2D | HostMatrix,
  tied: boolean,
  targets: Int32Array,
  temperature: number,
  rows: number,
  trainHead: boolean,
  keepBytes: number,
  sgemm: Sgemm,
): { logProbs: tf.Tensor1D; entropy: tf.Tensor1D } {
  const [N, d] = hidden.shape;
  const host = w instanceof HostMatrix;
  // [V, d] (a host matrix, or tied: the embedding table) or [d, V] (an untied head as a variable)
  const byRow = host || tied;
  const V = host ? w.rows : tied ? w.shape[0] : w.shape[1];
  const k = 1 / (temperature === 0 ? 1 : temperature); // greedy scores at 1, as the sampler reports greedy tokens
  for (const t of targets)
    if (!(t >= 0 && t < V)) throw new Error(`head: target ${t} outside the vocabulary [0, ${V})`);
  const backendName = tf.getBackend();
  const f = tf.customGrad(((...args: unknown[]) => {
    // a frozen head is not an input of the op (no gradient of it is formed): read from the closure
    const wt = host ? undefined : trainHead ? (args[1] as tf.Tensor2D) : w;
    // the inputs are read again in the backward pass: kept, as the forward's scope would free one made in it
    const save = args[args.length - 1] as tf.GradSaveFunc;
    save([args[0] as tf.Tensor2D, ...(trainHead ? [args[1] as tf.Tensor2D] : [])]);
    // views of the backend's memory, valid until it allocates (the tensor of the values, after the loop)
    let h = readView(args[0] as tf.Tensor2D);
    let W = wt ? readView(wt) : (w as HostMatrix).data;
    // logits of rows [r0, r0 + n) into the scratch memory
    const logits = (r0: number, n: number) => {
      const s = scratchView(n * V);
      if (byRow) sgemm(false, true, n, V, d, h.subarray(r0 * d), d, W, d, 0, s.z, V);
      else sgemm(false, false, n, V, d, h.subarray(r0 * d), d, W, V, 0, s.z, V);
      return s;
    };
    const lse = new Float32Array(N);
    const value = new Float32Array(2 * N); // [logp, H] per row
    const kept: (Float32Array | undefined)[] = [];
    // kept only for a backward pass, and only while they fit
    const keep = taping() && 4 * N * V <= keepBytes;
    for (let r0 = 0; r0 < N; r0 += rows) {
      const n = Math.min(rows, N - r0);
      const { memory, z } = logits(r0, n);
      const simd = simdKernels(memory);
      for (let i = 0; i < n; i++) {
        const r = r0 + i;
        const m = k * simd.rowMax(4 * i * V, V);
        const [s, q] = simd.expStats(4 * i * V, V, k, m);
        lse[r] = m + Math.log(s);
        value[2 * r] = k * z[i * V + targets[r]] - lse[r];
        value[2 * r + 1] = lse[r] - (k * q) / s;
      }
      // into a reused buffer: a fresh one for each chunk of each step costs its pages' first touch
      if (keep) kept.push(keptBuffer(n * V));
      if (keep) kept[kept.length - 1]!.set(z);
    }
    return {
      value: tf.tensor2d(value, [N, 2]),
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => {
        const g = dy.dataSync() as Float32Array;
        // the gradients written where the backend keeps them (no fresh arrays to copy in), then views taken again
        const inputs = [saved[0] as tf.Tensor2D, ...(wt ? [trainHead ? (saved[1] as tf.Tensor2D) : wt] : [])];
        const shapes = [[N, d], ...(trainHead ? [tied ? [V, d] : [d, V]] : [])];
        const o = withOutputs(backendName, tf.engine().backend, shapes, inputs);
        const [dh, dW] = o.outs;
        dW?.fill(0);
        h = o.ins[0];
        if (wt) W = o.ins[1];
        for (let r0 = 0, c = 0; r0 < N; r0 += rows, c++) {
          const n = Math.min(rows, N - r0);
          let memory: WebAssembly.Memory, z: Float32Array;
          if (keep) {
            ({ memory, z } = scratchView(n * V));
            z.set(kept[c]!);
            releaseKept(kept[c]!);
            kept[c] = undefined;
          } else ({ memory, z } = logits(r0, n));
          const simd = simdKernels(memory);
          for (let i = 0; i < n; i++) {
            const r = r0 + i;
            const a = g[2 * r],
              b = g[2 * r + 1];
            simd.expGrad(4 * i * V, V, k, lse[r], a + b * (value[2 * r + 1] - lse[r]), b * k, -k);
            z[i * V + targets[r]] += k * a;
          }
          const dz = z;
          if (byRow) sgemm(false, false, n, d, V, dz, V, W, d, 0, dh.subarray(r0 * d), d);
          else sgemm(false, true, n, d, V, dz, V, W, V, 0, dh.subarray(r0 * d), d);
          if (dW && tied) sgemm(true, false, V, d, n, dz, V, h.subarray(r0 * d), d, 1, dW, d);
          else if (dW) sgemm(true, false, d, V, n, h.subarray(r0 * d), d, dz, V, 1, dW, V);
        }
        return o.infos.map((i) => tf.engine().makeTensorFromTensorInfo(i));
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (...x: tf.Tensor[]) => tf.Tensor2D;
  const both = trainHead ? f(hidden, w as tf.Tensor2D) : f(hidden);
  const [lp, H] = tf.split(both, 2, 1);
  return { logProbs: lp.reshape([N]), entropy: H.reshape([N]) };
}
