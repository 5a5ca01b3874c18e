/** Plain-JSON state of a {@link StateBaseline}. */
export type StateBaselineState = [string, number][];

/**
 * The `infostate` advantage: a moving baseline per decision point (a game's information
 * state), a tabular critic of the state's value. Still action-independent, so the policy
 * gradient stays unbiased, and far less noisy than one baseline per role (SPIRAL's RAE,
 * `RoleBaseline`), since a state's returns vary far less than a seat's over all states.
 * Per batch: every turn's advantage is its reward minus its state's baseline before the
 * batch (0 for a state never seen); then each state seen takes its batch mean,
 * b ← decay·b + (1 − decay)·mean.
 */
export class StateBaseline {
  private readonly values: Map<string, number>;

  constructor(
    readonly decay: number,
    saved: StateBaselineState = [],
  ) {
    if (!(decay >= 0 && decay < 1)) throw new Error(`StateBaseline: decay must be in [0, 1), got ${decay}`);
    this.values = new Map(saved);
  }

  baseline(key: string): number {
    return this.values.get(key) ?? 0;
  }

  /** Each reward minus its state's baseline, then the batch folded in. */
  advantages(keys: readonly string[], rewards: readonly number[]): number[] {
    if (keys.length !== rewards.length)
      throw new Error(`StateBaseline: ${keys.length} keys for ${rewards.length} rewards`);
    const out = keys.map((k, i) => rewards[i] - this.baseline(k));
    const seen = new Map<string, { sum: number; n: number }>();
    keys.forEach((k, i) => {
      const e = seen.get(k) ?? { sum: 0, n: 0 };
      e.sum += rewards[i];
      e.n++;
      seen.set(k, e);
    });
    for (const [k, { sum, n }] of seen)
      this.values.set(k, this.decay * this.baseline(k) + (1 - this.decay) * (sum / n));
    return out;
  }

  toJSON(): StateBaselineState {
    return [...this.values];
  }
}
