/**
 * attend() (attention.ts) as one operation on the wasm backend with a native sgemm: per batch
 * row and kv head, the scores' product (scaled by the product itself), one SIMD pass that adds
 * the mask and takes the softmax in place, and the product with the values; the probabilities
 * are kept for the backward pass, which is four products and one SIMD pass (the softmax's
 * gradient). Composed of tfjs operations the same attention took a scaling, a broadcast add and
 * a softmax forward, and six passes over the [rows, S] scores backward, each a tape entry.
 *
 * Shapes as attend's: q [B, H, T, hd], k and v [B, KV, S, hd], bias [B, 1, n T, S] with
 * n = H / KV query heads per kv head, stacked as n T rows (transformers' repeat_kv order).
 */
import * as tf from '@tensorflow/tfjs';
import { fusedKernelsActive } from '../../backend/fused/index.js';
import { activeSgemm } from '../../backend/native/index.js';
import { oneThread } from '../../backend/native/library.js';
import { simdKernels, wasmBackendMemory } from '../../backend/simd/index.js';
import type { WasmBackend } from '../../backend/views.js';
import { releaseKept, type KeptProducts } from './recompute.js';

type Op = Parameters<typeof tf.customGrad>[0];

/** Whether attendNative can run now: the wasm backend with its fused kernels and a native sgemm. */
export const attendsNatively = () => tf.getBackend() === 'wasm' && fusedKernelsActive() && activeSgemm() !== undefined;

/**
 * Where a checkpointed pass keeps a block's attention (its probabilities and output) for the
 * recomputation, under `name`; `again`: this is the recomputation, which takes them back.
 */
export interface KeptAttention {
  kept: KeptProducts;
  name: string;
  again: boolean;
}

/** Rows of the product a row block of the scores takes at once (the last block of a head may be shorter). */
const BLOCK = 64;
/** Rows of a softmax call: the unmasked prefix is taken per group this size, finer than the products' blocks. */
const GROUP = 8;

/**
 * Per batch row and score row of `bias` [B, R, S] (R = n T stacked rows), how many leading
 * keys the softmax must read: up to the row's last unmasked key, rounded up to a multiple of
 * 4 (so that the SIMD kernel's lanes sum what they sum over the whole row), at most S; a row
 * with no unmasked key reads all S (its softmax is then over the mask's values, as before).
 * Past that prefix every entry is masked, its probability exactly 0 (exp of -1e9 is 0 in
 * float32), so the products that skip those keys (a causal mask's upper triangle, about half
 * of each score block) compute what the whole rows did, bit for bit.
 */
function unmaskedEnds(bias: Float32Array, rows: number, S: number): Int32Array {
  const ends = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    const row = r * S;
    let j = S;
    while (j > 0 && !(bias[row + j - 1] > MASKED)) j--;
    ends[r] = j === 0 ? S : Math.min(S, (j + 3) & ~3);
  }
  return ends;
}
/** A bias entry at or below this is a masked key (attention.ts adds -1e9). */
const MASKED = -1e8;

/** unmaskedEnds of a bias tensor, once per tensor (every block of a pass shares one bias). */
const endsOf = new WeakMap<object, Int32Array>();
function keyEnds(be: WasmBackend, bias: tf.Tensor, rows: number, S: number): Int32Array {
  let ends = endsOf.get(bias.dataId);
  if (!ends) {
    const { memoryOffset } = be.dataIdMap.get(bias.dataId);
    const memory = wasmBackendMemory(be);
    ends = unmaskedEnds(new Float32Array(memory.buffer, memoryOffset, rows * S), rows, S);
    endsOf.set(bias.dataId, ends);
  }
  return ends;
}

/** The largest of ends[from, to). */
function maxEnd(ends: Int32Array, from: number, to: number): number {
  let m = 0;
  for (let r = from; r < to; r++) if (ends[r] > m) m = ends[r];
  return m;
}

/**
 * softmax(q k^T / sqrt(hd) + bias) v with heads joined, [B, T, H*hd], as attend(); gradients
 * to q, k and v. With `store`, the forward pass keeps its probabilities and output and the
 * recomputation takes them instead of computing them again (the same q, k and v).
 */
export function attendNative(
  q: tf.Tensor4D,
  k: tf.Tensor4D,
  v: tf.Tensor4D,
  bias: tf.Tensor,
  store?: KeptAttention,
): tf.Tensor3D {
  const sgemm = activeSgemm();
  if (!sgemm || tf.getBackend() !== 'wasm') throw new Error('attendNative: needs the wasm backend and a native sgemm');
  const [B, H, T, hd] = q.shape;
  const [, KV, S] = k.shape;
  const R = (H / KV) * T; // rows of one kv head: its query heads' rows stacked
  if (bias.size !== B * R * S)
    throw new Error(`attendNative: a bias of shape ${bias.shape} for ${B} x ${R} rows of ${S} keys`);
  const scale = 1 / Math.sqrt(hd);
  const be = tf.engine().backend as unknown as WasmBackend & { disposeData(id: unknown): void };
  const memory = wasmBackendMemory(be);
  const kernels = simdKernels(memory);
  const offset = (t: tf.TensorInfo) => be.dataIdMap.get(t.dataId).memoryOffset;
  const view = (t: tf.TensorInfo) => new Float32Array(memory.buffer, offset(t), tf.util.sizeFromShape(t.shape));
  // every input moved onto the heap and every output allocated before any view is taken (growing the heap detaches views)
  const allocate = (inputs: tf.TensorInfo[], shapes: number[][]) => {
    for (const t of inputs) be.dataIdMap.get(t.dataId);
    return shapes.map((s) => be.makeOutput(s, 'float32'));
  };
  const ends = keyEnds(be, bias, B * R, S);
  // row blocks within each of the n stacked heads (a block across two heads would see all keys);
  // rows of a head that fit one block (generation's steps) stay one product over the stack
  const blocks: [number, number][] = [];
  if (T <= BLOCK) blocks.push([0, R]);
  else
    for (let r = 0; r < R; r += T)
      for (let r0 = r; r0 < r + T; r0 += BLOCK) blocks.push([r0, Math.min(r + T, r0 + BLOCK)]);
  const probsName = `${store?.name}.probs`,
    outName = `${store?.name}.out`;
  let reused = store?.again ? store.kept.take(probsName) : undefined;
  const reusedOut = reused && store!.kept.take(outName);
  if (reused && !reusedOut) {
    releaseKept(reused.data);
    reused = undefined;
  }
  const f = tf.customGrad(((qs: tf.Tensor, ks: tf.Tensor, vs: tf.Tensor, save: tf.GradSaveFunc) => {
    const [oInfo, pInfo] = allocate(
      [qs, ks, vs, bias],
      [
        [B, KV, R, hd],
        [B, KV, R, S],
      ],
    );
    const [Q, K, V, O, P] = [qs, ks, vs, oInfo, pInfo].map(view);
    const p0 = offset(pInfo),
      b0 = offset(bias);
    if (reused && reusedOut) {
      P.set(reused.data);
      O.set(reusedOut.data);
      releaseKept(reused.data);
      releaseKept(reusedOut.data);
    } else
      oneThread(() => {
        for (let b = 0; b < B; b++)
          for (let j = 0; j < KV; j++) {
            const h = b * KV + j;
            const Kbj = K.subarray(h * S * hd),
              Vbj = V.subarray(h * S * hd);
            // by row blocks, each over the keys its rows may see: scores, softmax (zeros past them), P V
            for (const [r0, r1] of blocks) {
              const keys = maxEnd(ends, b * R + r0, b * R + r1);
              const at = h * R * S + r0 * S;
              sgemm(
                false,
                true,
                r1 - r0,
                keys,
                hd,
                Q.subarray((h * R + r0) * hd),
                hd,
                Kbj,
                hd,
                0,
                P.subarray(at),
                S,
                scale,
              );
              for (let g = r0; g < r1; g += GROUP) {
                const g1 = Math.min(r1, g + GROUP);
                const n = maxEnd(ends, b * R + g, b * R + g1);
                kernels.biasSoftmax(p0 + 4 * (h * R * S + g * S), b0 + 4 * (b * R + g) * S, g1 - g, n, S);
              }
              sgemm(false, false, r1 - r0, hd, keys, P.subarray(at), S, Vbj, hd, 0, O.subarray((h * R + r0) * hd), hd);
            }
          }
      });
    if (store && !store.again && !reused) {
      store.kept.keepCopy(probsName, P, [B, KV, R, S]);
      store.kept.keepCopy(outName, O, [B, KV, R, hd]);
    }
    const probs = tf.engine().makeTensorFromTensorInfo(pInfo);
    save([qs, ks, vs, probs]);
    return {
      value: tf.engine().makeTensorFromTensorInfo(oInfo),
      gradFunc: (dy: tf.Tensor, [q2, k2, v2, p2]: tf.Tensor[]) => {
        const [dqInfo, dkInfo, dvInfo, dpInfo] = allocate([dy, q2, k2, v2, p2], [q2.shape, k2.shape, v2.shape, [R, S]]);
        const [DY, Q2, K2, V2, P2, DQ, DK, DV, DP] = [dy, q2, k2, v2, p2, dqInfo, dkInfo, dvInfo, dpInfo].map(view);
        const pp = offset(p2),
          dp = offset(dpInfo);
        oneThread(() => {
          for (let h = 0; h < B * KV; h++) {
            const b = Math.floor(h / KV);
            const dO = DY.subarray(h * R * hd);
            const Pbj = P2.subarray(h * R * S);
            // dP = dO V^T, then dS = P (dP - Σ dP P) in place (zeros past the seen keys); dq = s dS K,
            // by row blocks over the keys their rows see; dk = s dS^T q, dv = P^T dO over all rows
            for (const [r0, r1] of blocks) {
              const keys = maxEnd(ends, b * R + r0, b * R + r1);
              const dP = DP.subarray(r0 * S);
              sgemm(false, true, r1 - r0, keys, hd, dO.subarray(r0 * hd), hd, V2.subarray(h * S * hd), hd, 0, dP, S);
              for (let g = r0; g < r1; g += GROUP) {
                const g1 = Math.min(r1, g + GROUP);
                const n = maxEnd(ends, b * R + g, b * R + g1);
                kernels.softmaxGrad(pp + 4 * (h * R * S + g * S), dp + 4 * g * S, g1 - g, n, S);
              }
              const dq = DQ.subarray((h * R + r0) * hd);
              sgemm(false, false, r1 - r0, hd, keys, dP, S, K2.subarray(h * S * hd), hd, 0, dq, hd, scale);
            }
            sgemm(true, false, S, hd, R, DP, S, Q2.subarray(h * R * hd), hd, 0, DK.subarray(h * S * hd), hd, scale);
            sgemm(true, false, S, hd, R, Pbj, S, dO, hd, 0, DV.subarray(h * S * hd), hd);
          }
        });
        be.disposeData(dpInfo.dataId);
        return [dqInfo, dkInfo, dvInfo].map((i) => tf.engine().makeTensorFromTensorInfo(i));
      },
    };
  }) as unknown as Op) as unknown as (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) => tf.Tensor;
  return f(q, k, v)
    .reshape([B, H, T, hd])
    .transpose([0, 2, 1, 3])
    .reshape([B, T, H * hd]) as tf.Tensor3D;
}
