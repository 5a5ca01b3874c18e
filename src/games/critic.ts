/**
 * A tabular critic of moves: for each information state and move, an estimate of the mover's
 * return after it, from the returns of the games played. `sampled` is an EMA of each
 * iteration's mean, set by the first one seen; `counts` keeps sums and counts that forget at
 * the same rate, so every return counts alike and a rarely taken move is not judged by its
 * first sample. Only the states visited in an iteration are updated (and forget).
 */
export type CriticKind = 'sampled' | 'counts';
export const CRITIC_KINDS: readonly CriticKind[] = ['sampled', 'counts'];

/** What a checkpoint keeps of a critic. */
export interface CriticState {
  actionValue: [string, (number | null)[]][];
  actionStats: [string, { sum: number[]; count: number[] }][];
}

export class MoveCritic {
  private readonly values: Map<string, (number | null)[]>;
  private readonly stats: Map<string, { sum: number[]; count: number[] }>;

  constructor(
    readonly kind: CriticKind,
    readonly numActions: number,
    readonly decay: number,
    saved: Partial<CriticState> = {},
  ) {
    if (!CRITIC_KINDS.includes(kind))
      throw new Error(`critic: kind must be one of ${CRITIC_KINDS.join(', ')}, got '${String(kind)}'`);
    if (!(decay >= 0 && decay < 1)) throw new Error(`critic: decay must be in [0, 1), got ${decay}`);
    this.values = new Map(saved.actionValue ?? []);
    this.stats = new Map(saved.actionStats ?? []);
  }

  /**
   * Folds one iteration's moves (state key, move, the mover's return) into the critic and
   * returns each visited state's values, null for a move never seen, in first-visit order.
   */
  update(moves: readonly { key: string; action: number; value: number }[]): Map<string, (number | null)[]> {
    const seen = new Map<string, { sum: number[]; n: number[] }>();
    for (const m of moves) {
      if (!(Number.isInteger(m.action) && m.action >= 0 && m.action < this.numActions))
        throw new Error(`critic: move ${m.action} outside 0..${this.numActions - 1}`);
      const e = seen.get(m.key) ?? { sum: new Array(this.numActions).fill(0), n: new Array(this.numActions).fill(0) };
      e.sum[m.action] += m.value;
      e.n[m.action]++;
      seen.set(m.key, e);
    }
    const out = new Map<string, (number | null)[]>();
    for (const [key, { sum, n }] of seen) {
      if (this.kind === 'counts') {
        const st = this.stats.get(key) ?? {
          sum: new Array(this.numActions).fill(0),
          count: new Array(this.numActions).fill(0),
        };
        for (let a = 0; a < this.numActions; a++) {
          st.sum[a] = this.decay * st.sum[a] + sum[a];
          st.count[a] = this.decay * st.count[a] + n[a];
        }
        this.stats.set(key, st);
        out.set(
          key,
          st.count.map((c, a) => (c > 0 ? st.sum[a] / c : null)),
        );
      } else {
        const q = this.values.get(key) ?? new Array<number | null>(this.numActions).fill(null);
        n.forEach((count, a) => {
          if (count > 0)
            q[a] = q[a] === null ? sum[a] / count : this.decay * q[a]! + (1 - this.decay) * (sum[a] / count);
        });
        this.values.set(key, q);
        out.set(key, [...q]);
      }
    }
    return out;
  }

  state(): CriticState {
    return { actionValue: [...this.values], actionStats: [...this.stats] };
  }
}
