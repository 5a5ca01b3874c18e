import * as tf from '@tensorflow/tfjs';

/** TRL's `sync_ref_model`: every `steps` updates the reference moves toward the policy. */
export interface RefSync {
  /** updates between syncs (`ref_model_sync_steps`) */
  steps: number;
  /** weight of the policy in the mix (`ref_model_mixup_alpha`); 1 replaces the reference */
  mixupAlpha: number;
}

/** Whether the reference is synced after update `step` (1-based), as TRL's callback does when `global_step % ref_model_sync_steps == 0`. */
export function refSyncDue(s: RefSync | undefined, step: number): boolean {
  return s !== undefined && step > 0 && step % s.steps === 0;
}

/**
 * TRL's `SyncRefModelCallback._sync_target_model`: every reference weight becomes
 * `(1 - alpha) · reference + alpha · policy` (with alpha 1, a copy of the policy: ProRL's
 * reference reset). Both models must have the same weight names and shapes.
 */
export function syncTargetModel(
  reference: Record<string, tf.Variable>,
  policy: Record<string, tf.Variable>,
  alpha: number,
): void {
  if (!(alpha > 0 && alpha <= 1)) throw new Error(`ref sync: mixupAlpha must be in (0, 1], got ${alpha}`);
  // every check comes before the first write, so a mismatch leaves the reference untouched
  if (Object.keys(policy).length !== Object.keys(reference).length)
    throw new Error('ref sync: the policy and the reference have different weights');
  for (const [name, target] of Object.entries(reference)) {
    const source = policy[name];
    if (!source || source.shape.join() !== target.shape.join())
      throw new Error(`ref sync: the policy has no weight ${name} of shape [${target.shape.join(', ')}]`);
  }
  for (const [name, target] of Object.entries(reference)) {
    const source = policy[name];
    tf.tidy(() => target.assign(alpha === 1 ? source.clone() : target.mul(1 - alpha).add(source.mul(alpha))));
  }
}
