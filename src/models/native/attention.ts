import type { PassOps } from './ops.js';

/** The layout of one batch: B rows of L positions, width d in H heads; row b's first leftPad[b] positions are padding. */
export interface AttentionShape {
  B: number;
  L: number;
  d: number;
  H: number;
  leftPad: readonly number[];
}

/**
 * Calls `f` for each row and head that has real positions: `at` is the offset of its first
 * real position's slice of the head in a [B * L, d] array, n its number of real positions,
 * p its [n, n] block of attention probabilities in `probs` (at (b H + h) L²).
 */
function eachHead(s: AttentionShape, probs: Float32Array, f: (at: number, n: number, p: Float32Array) => void): void {
  const { B, L, d, H, leftPad } = s;
  for (let b = 0; b < B; b++) {
    const n = L - leftPad[b];
    for (let h = 0; h < H && n > 0; h++) {
      const start = (b * H + h) * L * L;
      f((b * L + leftPad[b]) * d + h * (d / H), n, probs.subarray(start, start + n * n));
    }
  }
}

/**
 * Causal self-attention of queries q over keys k and values v, all [B * L, d], scores scaled
 * by `scale` (1/√hd): per row and head, scores and the weighted sum are library products on
 * strided views, the masked softmax a SIMD kernel. Padding positions are neither keys nor
 * queries (their outputs stay as they are, 0 from the caller): TinyLM masks them as keys, so
 * nothing real depends on them. The probabilities are kept in `probs` for the backward pass.
 */
export function attend(
  ops: PassOps,
  s: AttentionShape,
  scale: number,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  y: Float32Array,
  probs: Float32Array,
): void {
  const { d } = s,
    hd = d / s.H;
  eachHead(s, probs, (at, n, p) => {
    ops.sgemm(false, true, n, n, hd, q.subarray(at), d, k.subarray(at), d, 0, p, n, scale);
    ops.causalSoftmax(p, n);
    ops.sgemm(false, false, n, hd, n, p, n, v.subarray(at), d, 0, y.subarray(at), d);
  });
}

/**
 * The gradients of `attend` given dy [B * L, d]: dv = Pᵀ dy, dS = P ⊙ (dP - Σ_s dP P) with
 * dP = dy vᵀ (the softmax's Jacobian), dq = scale dS k and dk = scale dSᵀ q. dq, dk and dv
 * are overwritten on real positions and must be 0 on padding; `dp` is scratch of L² floats.
 */
export function attendBackward(
  ops: PassOps,
  s: AttentionShape,
  scale: number,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  probs: Float32Array,
  dy: Float32Array,
  dq: Float32Array,
  dk: Float32Array,
  dv: Float32Array,
  dp: Float32Array,
): void {
  const { d } = s,
    hd = d / s.H;
  eachHead(s, probs, (at, n, p) => {
    ops.sgemm(false, true, n, n, hd, dy.subarray(at), d, v.subarray(at), d, 0, dp, n);
    ops.sgemm(true, false, n, hd, n, p, n, dy.subarray(at), d, 0, dv.subarray(at), d);
    ops.causalSoftmaxGrad(p, dp, n);
    ops.sgemm(false, false, n, hd, n, dp, n, k.subarray(at), d, 0, dq.subarray(at), d, scale);
    ops.sgemm(true, false, n, hd, n, dp, n, q.subarray(at), d, 0, dk.subarray(at), d, scale);
  });
}
