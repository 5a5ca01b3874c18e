/**
 * Truncated importance sampling for rollouts played by another policy (stale weights on a
 * rollout worker): verl's `compute_rollout_importance_weights` at `rollout_is_level: token`,
 * `rollout_is_mode: truncate` (TIS). Per completion token,
 * `w_t = min(exp(clamp(old_t − rollout_t, −20, 20)), threshold)`, where `old` is the
 * log-prob under the policy the update starts from (recomputed by the learner) and `rollout`
 * the log-prob the worker recorded when it sampled. The weights carry no gradient; the
 * policy loss multiplies each token's clipped loss by its weight before aggregation, as
 * verl's `compute_policy_loss_vanilla` does with `rollout_is_weights`. No lower bound and no
 * veto (verl's truncate mode with `rollout_is_veto_threshold: null`).
 */

/** verl's SAFETY_BOUND on the log-ratio before exponentiating. */
export const IS_SAFETY_BOUND = 20;

export function rolloutIsWeights(old: readonly number[], rollout: readonly number[], threshold: number): number[] {
  if (old.length !== rollout.length)
    throw new Error(`rolloutIsWeights: ${old.length} old log-probs for ${rollout.length} rollout log-probs`);
  if (!(threshold > 0) || !Number.isFinite(threshold))
    throw new Error(`rolloutIsWeights: threshold must be a positive number, got ${threshold}`);
  return old.map((o, t) =>
    Math.min(Math.exp(Math.min(IS_SAFETY_BOUND, Math.max(-IS_SAFETY_BOUND, o - rollout[t]))), threshold),
  );
}
