/**
 * Per-token KL estimators between the policy and a reference policy, as verl
 * `kl_penalty(logprob, ref_logprob, kl_penalty)` (core_algos.py; estimators
 * from J. Schulman, "Approximating KL divergence", 2020).
 *
 * The formula is written once, generically over a tiny arithmetic interface,
 * and instantiated twice: with tf ops ({@link klPenalty}, differentiable, for
 * a KL loss term) and with plain numbers ({@link klPenaltyArray}, for reward
 * shaping). That keeps the two paths from drifting apart.
 */
import * as tf from '@tensorflow/tfjs';

/**
 * Estimator names accepted by verl: `'k1'`/`'kl'` (the same), `'abs'`,
 * `'k2'`/`'mse'` (the same), `'k3'`/`'low_var_kl'` (the same).
 */
export type KlKind = 'k1' | 'kl' | 'abs' | 'k2' | 'mse' | 'k3' | 'low_var_kl';

/** The handful of elementwise operations the formula needs. */
interface Arith<T> {
  sub(a: T, b: T): T;
  abs(a: T): T;
  square(a: T): T;
  exp(a: T): T;
  scale(a: T, k: number): T;
  addScalar(a: T, k: number): T;
  clamp(a: T, lo: number, hi: number): T;
}

/** The one shared definition of every estimator (verl `kl_penalty`). */
function klFormula<T>(o: Arith<T>, logp: T, ref: T, kind: KlKind): T {
  switch (kind) {
    case 'k1':
    case 'kl':
      return o.sub(logp, ref);
    case 'abs':
      return o.abs(o.sub(logp, ref));
    case 'k2':
    case 'mse':
      return o.scale(o.square(o.sub(logp, ref)), 0.5);
    case 'k3':
    case 'low_var_kl': {
      // Clamps are verl's numerical-stability guards: exp(±20) stays finite in
      // float32, and the result is bounded to ±10 so one token cannot dominate.
      const kl = o.clamp(o.sub(ref, logp), -20, 20);
      const value = o.sub(o.addScalar(o.exp(kl), -1), kl);
      return o.clamp(value, -10, 10);
    }
    default: {
      const never: never = kind;
      throw new Error(`Unknown KL kind: ${String(never)}`);
    }
  }
}

const tensorArith: Arith<tf.Tensor> = {
  sub: (a, b) => tf.sub(a, b),
  abs: (a) => tf.abs(a),
  square: (a) => tf.square(a),
  exp: (a) => tf.exp(a),
  scale: (a, k) => tf.mul(a, k),
  addScalar: (a, k) => tf.add(a, k),
  clamp: (a, lo, hi) => tf.clipByValue(a, lo, hi),
};

const numberArith: Arith<number> = {
  sub: (a, b) => a - b,
  abs: Math.abs,
  square: (a) => a * a,
  exp: Math.exp,
  scale: (a, k) => a * k,
  addScalar: (a, k) => a + k,
  clamp: (a, lo, hi) => Math.min(Math.max(a, lo), hi),
};

/**
 * Per-token KL estimate on tensors, exactly as verl `kl_penalty`:
 * - `'k1' | 'kl'`: `logp − ref`
 * - `'abs'`: `|logp − ref|`
 * - `'k2' | 'mse'`: `0.5·(logp − ref)²`
 * - `'k3' | 'low_var_kl'`: `kl = clamp(ref − logp, −20, 20)`,
 *   `clamp(exp(kl) − kl − 1, −10, 10)`
 *
 * Elementwise, any shape (same shape for both inputs); differentiable with
 * respect to both inputs (the clamps pass zero gradient outside their range,
 * like `torch.clamp`). Intermediates are disposed; the caller owns the result.
 * Unlike verl, no `'full'` kind (verl raises NotImplementedError for it too).
 */
export function klPenalty<T extends tf.Tensor>(logprob: T, refLogprob: T, kind: KlKind): T {
  tf.util.assertShapesMatch(logprob.shape, refLogprob.shape, 'klPenalty: ');
  return tf.tidy(() => klFormula(tensorArith, logprob, refLogprob, kind)) as T;
}

/**
 * The same estimator as {@link klPenalty} on plain `number[][]` (rows of
 * tokens), e.g. for verl-style reward shaping
 * `reward − β·klPenaltyArray(oldLogp, refLogp, kind)` before computing
 * advantages. No masking is applied: padded positions get a value too.
 */
export function klPenaltyArray(logprob: number[][], refLogprob: number[][], kind: KlKind): number[][] {
  if (logprob.length !== refLogprob.length) throw new Error('klPenaltyArray: row count mismatch');
  return logprob.map((row, i) => {
    const ref = refLogprob[i];
    if (row.length !== ref.length) throw new Error(`klPenaltyArray: row ${i} length mismatch`);
    return row.map((lp, t) => klFormula(numberArith, lp, ref[t], kind));
  });
}
