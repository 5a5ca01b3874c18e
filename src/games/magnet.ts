import type { TabularPolicy } from './exploitability.js';

/** What a checkpoint keeps of a magnet: its table (absent while it is still uniform). */
export interface MagnetState {
  table?: TabularPolicy;
}

/**
 * The KL term's reference of a game policy as a table (the magnet of magnetic mirror
 * descent, Sokota et al. 2022): uniform over each information state's legal moves, or, with
 * `rate`, moving: after every update it takes that share of the policy's table, so the
 * regularisation follows the learner and its fixed point is a Nash equilibrium rather than
 * the regularised one. A uniform magnet keeps no table (tic-tac-toe has 4,520 states).
 */
export class Magnet {
  private table?: TabularPolicy;

  constructor(
    readonly rate: number | undefined,
    saved: MagnetState = {},
  ) {
    if (rate !== undefined && !(rate > 0 && rate <= 1)) throw new Error(`magnet: rate must be in (0, 1], got ${rate}`);
    this.table = saved.table;
  }

  get moving(): boolean {
    return this.rate !== undefined;
  }

  /** log ρ(action) at state `key`; a state the table has not met yet is uniform over its legal moves. */
  logProb(key: string, action: number, legal: readonly boolean[]): number {
    const p = this.table?.[key]?.[String(action)];
    if (p !== undefined) return Math.log(Math.max(p, 1e-8));
    return -Math.log(legal.filter(Boolean).length);
  }

  /** A moving magnet's step toward the policy's table `policy` (key -> move -> probability); a uniform one ignores it. */
  follow(policy: TabularPolicy): void {
    if (this.rate === undefined) return;
    const r = this.rate;
    if (!this.table) {
      // it was uniform until now: start from uniform rows over the policy's states
      this.table = {};
      for (const [key, row] of Object.entries(policy)) {
        const n = Object.keys(row).length;
        this.table[key] = Object.fromEntries(Object.keys(row).map((a) => [a, 1 / n]));
      }
    }
    for (const [key, row] of Object.entries(policy)) {
      const m = this.table[key];
      if (!m) throw new Error(`magnet: the policy's table has state '${key}', which the magnet has not`);
      for (const a of Object.keys(row)) m[a] = (1 - r) * m[a] + r * row[a];
    }
  }

  state(): MagnetState {
    return this.table ? { table: this.table } : {};
  }
}
