/**
 * The attention pieces of the Hugging Face decoders (src/models/hf/model.ts), on tfjs tensors:
 * the padding and causal mask, rotary positions as transformers lays them out, grouped-query
 * attention, and GPT-2's gelu_new.
 */
import * as tf from '@tensorflow/tfjs';
import { ADDRESSABLE, withOutputs } from '../../backend/views.js';
import { kernelsOver } from '../../backend/simd/index.js';
import { attendNative, attendsNatively, type KeptAttention } from './attention-native.js';

const NEG = -1e9; // added to masked attention scores; finite so a fully masked row stays finite

/**
 * [B, 1, groups*T, S]: pad keys and future keys masked; query t sits at S - T + t. With
 * grouped-query attention the rows repeat once per query head of a kv head (see attend).
 */
export function attentionBias(keyMask: Float32Array, B: number, T: number, past: number, groups: number): tf.Tensor {
  const S = past + T;
  const out = new Float32Array(B * groups * T * S);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++)
      for (let s = 0; s < S; s++) if (s > past + t || keyMask[b * S + s] === 0) out[(b * groups * T + t) * S + s] = NEG;
    for (let g = 1; g < groups; g++)
      out.copyWithin((b * groups + g) * T * S, b * groups * T * S, (b * groups + 1) * T * S);
  }
  return tf.tensor4d(out, [B, 1, groups * T, S]);
}

/** cos and sin of each position's angles, [B, 1, T, hd], the half-size angles repeated (transformers' layout). */
export function rotation(
  invFreq: Float32Array,
  positions: Int32Array,
  B: number,
  T: number,
): { cos: tf.Tensor; sin: tf.Tensor; half: tf.Tensor2D } {
  const half = invFreq.length;
  const cos = new Float32Array(B * T * 2 * half),
    sin = new Float32Array(B * T * 2 * half);
  for (let r = 0; r < B * T; r++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(positions[r] * invFreq[i]);
      cos[r * 2 * half + i] = cos[r * 2 * half + half + i] = Math.cos(angle);
      sin[r * 2 * half + i] = sin[r * 2 * half + half + i] = Math.sin(angle);
    }
  }
  return {
    cos: tf.tensor4d(cos, [B, 1, T, 2 * half]),
    sin: tf.tensor4d(sin, [B, 1, T, 2 * half]),
    half: halfTurn(2 * half),
  };
}

/**
 * x cos + rotate_half(x) sin, rotate_half(x) = [-x2, x1] for the halves x1, x2 of each head.
 * rotate_half is a product with a signed permutation: on wasm, splitting the last axis is a
 * strided copy that cost more than the rest of a decode step.
 */
export function rotate(x: tf.Tensor4D, rot: { cos: tf.Tensor; sin: tf.Tensor; half: tf.Tensor2D }): tf.Tensor4D {
  if (ADDRESSABLE.has(tf.getBackend())) return rotateInPlace(x, rot.cos, rot.sin);
  const [B, H, T, hd] = x.shape;
  const turned = tf.matMul(x.reshape([B * H * T, hd]), rot.half).reshape(x.shape);
  return x.mul(rot.cos).add(turned.mul(rot.sin)) as tf.Tensor4D;
}

/**
 * rotate() as one loop over the tensors' memory (wasm, cpu): y1 = x1 c - x2 s, y2 = x2 c + x1 s
 * on each head's halves. cos and sin repeat their half-size angles (rotation()'s layout), so
 * the backward pass is the same rotation with sin negated (by -angle): dx = dy c + R^T (dy s).
 */
function rotateInPlace(x: tf.Tensor4D, cos: tf.Tensor, sin: tf.Tensor): tf.Tensor4D {
  const backendName = tf.getBackend();
  const turn = (v: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor, sign: number) => {
    const [B, H, T, hd] = v.shape;
    const h2 = hd / 2;
    const o = withOutputs(backendName, tf.engine().backend, [v.shape], [v, cos, sin]);
    const [X, C, S] = o.ins;
    const Y = o.outs[0];
    // on the wasm heap, a SIMD kernel per head (the same bits as the loop below)
    const simd = h2 % 2 === 0 ? kernelsOver(X) : undefined;
    if (simd && [C, S, Y].every((v) => v.buffer === X.buffer)) {
      for (let b = 0; b < B; b++)
        for (let h = 0; h < H; h++) {
          const row = 4 * (b * H + h) * T * hd,
            angle = 4 * b * T * hd;
          simd.kernels.rotateHalves(
            X.byteOffset + row,
            C.byteOffset + angle,
            S.byteOffset + angle,
            Y.byteOffset + row,
            T,
            hd,
            sign,
          );
        }
      return tf.engine().makeTensorFromTensorInfo(o.infos[0]) as tf.Tensor4D;
    }
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let t = 0; t < T; t++) {
          const row = ((b * H + h) * T + t) * hd;
          const angle = (b * T + t) * hd;
          for (let i = 0; i < h2; i++) {
            const x1 = X[row + i],
              x2 = X[row + h2 + i];
            const c = C[angle + i],
              s = sign * S[angle + i];
            Y[row + i] = x1 * c - x2 * s;
            Y[row + h2 + i] = x2 * c + x1 * s;
          }
        }
    return tf.engine().makeTensorFromTensorInfo(o.infos[0]) as tf.Tensor4D;
  };
  // cos and sin are saved: the forward's scope may free them before the backward pass runs
  const f = tf.customGrad(((v: tf.Tensor4D, save: tf.GradSaveFunc) => {
    save([cos, sin]);
    return {
      value: turn(v, cos, sin, 1),
      gradFunc: (dy: tf.Tensor4D, [c, s]: tf.Tensor[]) => turn(dy, c, s, -1),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (v: tf.Tensor4D) => tf.Tensor4D;
  return f(x.dtype === 'float32' ? x : (x.toFloat() as tf.Tensor4D));
}

/** The [hd, hd] matrix R with x R = rotate_half(x). */
function halfTurn(hd: number): tf.Tensor2D {
  const h = hd / 2;
  const r = new Float32Array(hd * hd);
  for (let i = 0; i < h; i++) {
    r[(i + h) * hd + i] = -1; // output i takes -x2[i]
    r[i * hd + i + h] = 1; // output i + h takes x1[i]
  }
  return tf.tensor2d(r, [hd, hd]);
}

export function cat(past: tf.Tensor4D | undefined, now: tf.Tensor4D): tf.Tensor4D {
  return past ? tf.concat([past, now], 2) : now;
}

/**
 * softmax(q k^T / sqrt(hd) + bias) v, heads joined: [B, H, T, hd] -> [B, T, H*hd]. With
 * grouped-query attention (KV < H kv heads, each serving n = H / KV query heads in a row, as
 * transformers' repeat_kv lays them out), the n query heads of a kv head are stacked as n*T
 * rows against its keys, [B, KV, n*T, hd], instead of copying the keys n times.
 */
export function attend(
  q: tf.Tensor4D,
  k: tf.Tensor4D,
  v: tf.Tensor4D,
  bias: tf.Tensor,
  store?: KeptAttention,
): tf.Tensor3D {
  return attendsNatively() ? attendNative(q, k, v, bias, store) : attendComposed(q, k, v, bias);
}

/** attend() of tfjs operations (any backend). */
export function attendComposed(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor): tf.Tensor3D {
  const [B, H, T, hd] = q.shape;
  const KV = k.shape[1];
  const grouped = q.reshape([B, KV, (H / KV) * T, hd]);
  const att = tf.softmax(tf.matMul(grouped.mul(1 / Math.sqrt(hd)), k, false, true).add(bias));
  return tf
    .matMul(att, v)
    .reshape([B, H, T, hd])
    .transpose([0, 2, 1, 3])
    .reshape([B, T, H * hd]);
}

/** GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
export function geluNew(x: tf.Tensor): tf.Tensor {
  return x.mul(0.5).mul(tf.tanh(x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI))).add(1));
}
