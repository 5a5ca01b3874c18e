/**
 * Magnetic mirror descent (Sokota et al. 2022) at one decision point, in behavioural form:
 * `probs`, `logMagnet` and `q` are over the point's legal moves, in one order.
 */

/**
 * The closed-form MMD step with step size `eta` and magnet weight `alpha`:
 *   π'(a) ∝ [π(a) · ρ(a)^(αη) · exp(η q(a))]^(1 / (1 + αη)).
 */
export function mmdStep(
  probs: readonly number[],
  logMagnet: readonly number[],
  q: readonly number[],
  alpha: number,
  eta: number,
): number[] {
  const logits = probs.map(
    (p, i) => (Math.log(Math.max(p, 1e-300)) + alpha * eta * logMagnet[i] + eta * q[i]) / (1 + alpha * eta),
  );
  const top = Math.max(...logits);
  const e = logits.map((l) => Math.exp(l - top));
  const z = e.reduce((t, x) => t + x, 0);
  return e.map((x) => x / z);
}

/**
 * The all-actions policy gradient of MMD's objective at one decision point:
 *   π(a) · (Q'(a) - Σ_b π(b) Q'(b)),   Q'(a) = q(a) - α log(π(a) / ρ(a)),
 * which is the gradient with respect to the logits of Σ_a π(a) q(a) - α KL(π ‖ ρ) (QPG's
 * all-actions form, Srinivasan et al. 2018, with the magnet term moved into the values). As
 * one row per move with this advantage and old log-prob log π(a), a clipped-ratio loss has
 * exactly this gradient at ratio 1. The advantages sum to zero.
 */
export function allActionsAdvantages(
  probs: readonly number[],
  logMagnet: readonly number[],
  q: readonly number[],
  alpha: number,
): number[] {
  const value = probs.map((p, i) => q[i] - alpha * (Math.log(p) - logMagnet[i]));
  const mean = probs.reduce((t, p, i) => t + p * value[i], 0);
  return probs.map((p, i) => p * (value[i] - mean));
}
