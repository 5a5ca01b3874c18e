/**
 * Masked statistics over plain `number[][]` rows (batch × tokens) with 0/1
 * masks. These mirror verl's `verl/utils/torch_functional.py` helpers
 * (`masked_mean`, `masked_var`, `masked_whiten`), which every verl advantage
 * estimator that whitens (GAE, REINFORCE++, REINFORCE++-baseline) relies on.
 *
 * One deliberate difference: verl multiplies `values * mask`, so a NaN or
 * Infinity sitting under a 0 in the mask poisons the whole sum. Here entries
 * whose mask is 0 are skipped, so padded positions may hold anything. For
 * finite inputs the results are identical.
 */

/** A batch of rows: `m[i][t]` is token `t` of sequence `i`. */
export type Matrix = number[][];

/** Denominator guard used by verl's `masked_mean` (`mask.sum() + 1e-8`). */
const MEAN_EPS = 1e-8;
/** Variance guard used by verl's `masked_whiten` (`rsqrt(var + 1e-8)`). */
const WHITEN_EPS = 1e-8;

/**
 * Throw unless `a` and `b` have the same row count and row lengths.
 * Shape bugs are the most common silent error in RL code, so we fail loudly.
 */
export function assertSameShape(a: Matrix, b: Matrix, what = 'values/mask'): void {
  if (a.length !== b.length) {
    throw new Error(`${what}: row count ${a.length} != ${b.length}`);
  }
  for (let i = 0; i < a.length; i++) {
    if (a[i].length !== b[i].length) {
      throw new Error(`${what}: row ${i} length ${a[i].length} != ${b[i].length}`);
    }
  }
}

/** Σ values·mask and Σ mask, skipping positions whose mask is 0. */
function maskedSums(values: Matrix, mask: Matrix): { sum: number; count: number } {
  assertSameShape(values, mask);
  let sum = 0;
  let count = 0;
  for (let i = 0; i < values.length; i++) {
    for (let t = 0; t < values[i].length; t++) {
      const m = mask[i][t];
      if (m === 0) continue;
      sum += values[i][t] * m;
      count += m;
    }
  }
  return { sum, count };
}

/**
 * Masked mean over the whole batch, as verl `verl_F.masked_mean` (axis=None):
 * `Σ(values·mask) / (Σ mask + 1e-8)`.
 * An all-zero mask therefore gives 0, not NaN.
 */
export function maskedMean(values: Matrix, mask: Matrix): number {
  const { sum, count } = maskedSums(values, mask);
  return sum / (count + MEAN_EPS);
}

/**
 * Masked variance over the whole batch, as verl `verl_F.masked_var`:
 * `mean = maskedMean(values)`, `var = maskedMean((values − mean)²)`, and when
 * `unbiased` (default, as verl) the Bessel factor `n / (n − 1)` with
 * `n = Σ mask`.
 *
 * @throws like verl, when `unbiased` and `n == 0` ("at least one element in
 *   the mask has to be 1") or `n == 1` (division by zero in the Bessel factor).
 */
export function maskedVar(values: Matrix, mask: Matrix, unbiased = true): number {
  const mean = maskedMean(values, mask);
  const centredSq = values.map((row) => row.map((v) => (v - mean) ** 2));
  let variance = maskedMean(centredSq, mask);
  if (unbiased) {
    const n = maskedSums(values, mask).count;
    if (n === 0) throw new Error('maskedVar: at least one element in the mask has to be 1');
    if (n === 1) throw new Error('maskedVar: mask sums to 1, the unbiased variance divides by zero');
    variance *= n / (n - 1);
  }
  return variance;
}

/**
 * Masked whitening, as verl `verl_F.masked_whiten(values, mask, shift_mean)`:
 * `(values − mean) / sqrt(var + 1e-8)` with `mean`/`var` from
 * {@link maskedMean} and the unbiased {@link maskedVar}; when `shiftMean` is
 * false the mean is added back (`whitened + mean`).
 *
 * Statistics use only masked-in entries, but — as in verl — the affine map is
 * applied to every entry, so padded positions come back non-zero. Callers
 * that need zeros there multiply by the mask (verl's REINFORCE++ does; GAE
 * does not).
 *
 * @throws when fewer than two entries are masked in (see {@link maskedVar}).
 */
export function maskedWhiten(values: Matrix, mask: Matrix, shiftMean = true): Matrix {
  const mean = maskedMean(values, mask);
  const scale = 1 / Math.sqrt(maskedVar(values, mask) + WHITEN_EPS);
  const offset = shiftMean ? 0 : mean;
  return values.map((row) => row.map((v) => (v - mean) * scale + offset));
}
