/** Plain-JSON state of a {@link RoleBaseline}, safe to checkpoint. */
export interface RoleBaselineState {
  decay: number;
  baselines: Record<string, number>;
}

/**
 * SPIRAL's role-conditioned advantage estimation (RAE): one exponential
 * moving average of the outcome reward per key, e.g. `${game}:${role}`.
 *
 * Semantics (SPIRAL `train_spiral.py` `prepare_trajectories` + `utils.EMA`):
 * every baseline starts at 0; `advantage(key, r)` reads the current baseline
 * `b`, THEN updates `b ← decay·b + (1 − decay)·r`, and returns `r − b_old`
 * (the pre-update baseline, so a reward never baselines itself). SPIRAL keys
 * the EMA by (env id, player id), uses decay 0.95 by default
 * (`role_baseline_ema_gamma`) and requires 0 < decay < 1. SPIRAL applies its
 * `reward_scaling` before this call and spreads the result over turns itself.
 */
export class RoleBaseline {
  private readonly baselines = new Map<string, number>();

  constructor(readonly decay = 0.95) {
    if (!(decay > 0 && decay < 1)) throw new Error(`RoleBaseline: decay must be in (0, 1), got ${decay}`);
  }

  /** Current baseline for `key` (0 if never seen). */
  baseline(key: string): number {
    return this.baselines.get(key) ?? 0;
  }

  /** `reward − baseline(key)`, then folds `reward` into the key's EMA. */
  advantage(key: string, reward: number): number {
    const old = this.baseline(key);
    this.baselines.set(key, this.decay * old + (1 - this.decay) * reward);
    return reward - old;
  }

  /** Snapshot as plain JSON (a Map would not survive `JSON.stringify`). */
  toJSON(): RoleBaselineState {
    return { decay: this.decay, baselines: Object.fromEntries(this.baselines) };
  }

  /** Rebuild from {@link toJSON} output. */
  static fromJSON(state: RoleBaselineState): RoleBaseline {
    const rb = new RoleBaseline(state.decay);
    for (const [key, value] of Object.entries(state.baselines)) rb.baselines.set(key, value);
    return rb;
  }
}
