import * as tf from '@tensorflow/tfjs';
import type { Sgemm } from './library.js';
import { withOutput } from '../views.js';

type Info = tf.TensorInfo;
type Args = Parameters<tf.KernelFunc>[0];

/** Fills `out` with copies of `row` (its length divides out's): one row, then doubling copies, a dozen calls instead of one per row. */
export function fillRows(out: Float32Array, row: Float32Array): void {
  if (out.length === 0) return;
  out.set(row);
  for (let filled = row.length; filled < out.length; filled *= 2)
    out.copyWithin(filled, 0, Math.min(filled, out.length - filled));
}

/** Below this many multiply-adds a JS loop beats the call into the library (tfjs's one-token attention products). */
const SMALL = 4096;

/** C (+)= op(A) op(B) in plain JS, for products too small to be worth a native call. */
export function smallGemm(
  ta: boolean,
  tb: boolean,
  M: number,
  N: number,
  K: number,
  A: Float32Array,
  lda: number,
  B: Float32Array,
  ldb: number,
  beta: number,
  C: Float32Array,
  ldc: number,
): void {
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += (ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);
      C[i * ldc + j] = beta === 0 ? s : s + beta * C[i * ldc + j];
    }
  }
}

interface Plan {
  M: number;
  N: number;
  K: number;
  batch: number;
  batchA: number;
  batchB: number;
  outShape: number[];
}

/** Shapes of tfjs's BatchMatMul (batch axes broadcast, one side may have a single batch), or null for a case left to the original kernel. */
function plan(a: Info, b: Info, ta: boolean, tb: boolean): Plan | null {
  if (a.dtype !== 'float32' || b.dtype !== 'float32') return null;
  const ra = a.shape.length,
    rb = b.shape.length;
  const M = ta ? a.shape[ra - 1] : a.shape[ra - 2];
  const K = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  const Kb = tb ? b.shape[rb - 1] : b.shape[rb - 2];
  const N = tb ? b.shape[rb - 2] : b.shape[rb - 1];
  if (K !== Kb) return null; // the original kernel words the error
  const outer = tf.broadcast_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  const size = (s: number[]) => s.reduce((x, y) => x * y, 1);
  const batch = size(outer),
    batchA = size(a.shape.slice(0, -2)),
    batchB = size(b.shape.slice(0, -2));
  if ((batchA !== batch && batchA !== 1) || (batchB !== batch && batchB !== 1)) return null;
  return { M, N, K, batch, batchA, batchB, outShape: [...outer, M, N] };
}

function run(
  sgemm: Sgemm,
  p: Plan,
  ta: boolean,
  tb: boolean,
  A: Float32Array,
  B: Float32Array,
  C: Float32Array,
  beta: number,
): void {
  const { M, N, K } = p;
  const lda = ta ? M : K,
    ldb = tb ? K : N;
  const gemm = M * N * K < SMALL ? smallGemm : sgemm;
  for (let i = 0; i < p.batch; i++) {
    const a = p.batchA === 1 ? A : A.subarray(i * M * K, (i + 1) * M * K);
    const b = p.batchB === 1 ? B : B.subarray(i * K * N, (i + 1) * K * N);
    const c = p.batch === 1 ? C : C.subarray(i * M * N, (i + 1) * M * N);
    gemm(ta, tb, M, N, K, a, lda, b, ldb, beta, c, N);
  }
}

/**
 * BatchMatMul and _FusedMatMul (bias, no activation) on a native sgemm, for the wasm and cpu
 * backends. Every other case (another dtype, an activation, a broadcast the library cannot
 * stride) goes to the kernel that was registered before.
 */
export function nativeMatMulKernels(
  backendName: string,
  sgemm: Sgemm,
  original: Record<string, tf.KernelConfig>,
): tf.KernelConfig[] {
  const batchMatMul: tf.KernelFunc = (args: Args) => {
    const { a, b } = args.inputs as { a: Info; b: Info };
    const { transposeA: ta, transposeB: tb } = args.attrs as { transposeA: boolean; transposeB: boolean };
    const p = plan(a, b, ta, tb);
    if (!p) return original.BatchMatMul.kernelFunc(args);
    const v = withOutput(backendName, args.backend, p.outShape, [a, b]);
    run(sgemm, p, ta, tb, v.ins[0], v.ins[1], v.out, 0);
    return v.info;
  };
  const fused: tf.KernelFunc = (args: Args) => {
    const { a, b, bias, preluActivationWeights } = args.inputs as {
      a: Info;
      b: Info;
      bias?: Info;
      preluActivationWeights?: Info;
    };
    const {
      transposeA: ta,
      transposeB: tb,
      activation,
    } = args.attrs as { transposeA: boolean; transposeB: boolean; activation: string };
    const p = plan(a, b, ta, tb);
    // a bias of one row ([N], or [1, ..., 1, N]) is what the library path adds; others broadcast differently
    const rowBias =
      !bias ||
      (bias.dtype === 'float32' &&
        p !== null &&
        bias.shape[bias.shape.length - 1] === p.N &&
        bias.shape.slice(0, -1).every((d) => d === 1));
    if (!p || (activation && activation !== 'linear') || preluActivationWeights || !rowBias) {
      return original._FusedMatMul.kernelFunc(args);
    }
    const v = withOutput(backendName, args.backend, p.outShape, bias ? [a, b, bias] : [a, b]);
    // the bias fills C first, then C = op(A) op(B) + 1 * C
    if (bias) fillRows(v.out, v.ins[2]);
    run(sgemm, p, ta, tb, v.ins[0], v.ins[1], v.out, bias ? 1 : 0);
    return v.info;
  };
  return [
    { kernelName: 'BatchMatMul', backendName, kernelFunc: batchMatMul },
    { kernelName: '_FusedMatMul', backendName, kernelFunc: fused },
  ];
}
