import type { TabularPolicy } from './exploitability.js';
import { CHANCE, type Game, type GameState } from './types.js';

/**
 * Each information state's own-reach probability under `table`: the product of the acting
 * player's own move probabilities on the way there (chance and the other players left out,
 * as in fictitious play's and CFR's average policies). With perfect recall every history of
 * an information state has the same own reach.
 */
export function ownReach(game: Game, table: TabularPolicy): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (s: GameState, reach: number[]) => {
    if (s.isTerminal()) return;
    const p = s.currentPlayer();
    const key = p === CHANCE ? '' : s.informationStateKey(p);
    if (p !== CHANCE && !out.has(key)) out.set(key, reach[p]);
    for (const a of s.legalActions()) {
      const next = reach.slice();
      if (p !== CHANCE) next[p] *= table[key]?.[String(a)] ?? 0;
      const c = s.clone();
      c.apply(a);
      walk(c, next);
    }
  };
  walk(game.newInitialState(), new Array(game.numPlayers).fill(1));
  return out;
}

/**
 * The average policy of fictitious play over a sequence of policies (tables): at each
 * information state, the policies' move probabilities weighted by the state's own reach
 * under each and by the policy's weight (1 for the plain average, t for linear averaging).
 * This is the policy whose exploitability fictitious play and CFR drive to zero, which a
 * learner's last policy need not do. A state no policy reaches gets the last policy's row.
 */
export class AveragePolicy {
  private readonly sums = new Map<string, Map<string, number>>();
  private readonly totals = new Map<string, number>();
  private last: TabularPolicy = {};

  constructor(private readonly game: Game) {}

  add(table: TabularPolicy, weight = 1): void {
    if (!(weight >= 0)) throw new Error(`average policy: weight must be >= 0, got ${weight}`);
    for (const [key, reach] of ownReach(this.game, table)) {
      const row = table[key];
      if (!row) throw new Error(`average policy: the table has no entry for information state '${key}'`);
      const w = weight * reach;
      const sum = this.sums.get(key) ?? new Map<string, number>();
      for (const [a, p] of Object.entries(row)) sum.set(a, (sum.get(a) ?? 0) + w * p);
      this.sums.set(key, sum);
      this.totals.set(key, (this.totals.get(key) ?? 0) + w);
    }
    this.last = table;
  }

  /** The sums as plain JSON (see restore). */
  state(): AverageState {
    return { sums: [...this.sums].map(([k, m]) => [k, [...m]]), totals: [...this.totals], last: this.last };
  }

  /** An average continuing from a saved state. */
  static restore(game: Game, s: AverageState): AveragePolicy {
    const a = new AveragePolicy(game);
    for (const [k, entries] of s.sums) a.sums.set(k, new Map(entries));
    for (const [k, t] of s.totals) a.totals.set(k, t);
    a.last = s.last;
    return a;
  }

  table(): TabularPolicy {
    const out: TabularPolicy = {};
    for (const [key, row] of Object.entries(this.last)) {
      const total = this.totals.get(key) ?? 0;
      const sum = this.sums.get(key);
      out[key] =
        total > 0 && sum ? Object.fromEntries(Object.keys(row).map((a) => [a, (sum.get(a) ?? 0) / total])) : { ...row };
    }
    return out;
  }
}

/** An AveragePolicy's sums as plain JSON, to save with a run. */
export interface AverageState {
  sums: [string, [string, number][]][];
  totals: [string, number][];
  last: TabularPolicy;
}
