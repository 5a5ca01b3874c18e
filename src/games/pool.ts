import { Rng } from '../util/rng.js';

/** How the next opponent is drawn from the pool. */
export type PoolSampling = 'latest' | 'uniform' | 'prioritised';
export const POOL_SAMPLINGS: readonly PoolSampling[] = ['latest', 'uniform', 'prioritised'];

/** One frozen snapshot and the learner's record against it. */
interface Member<P> {
  name: string;
  snapshot: P;
  games: number;
  score: number;
}

/** What a pool saves (its snapshots are saved by the caller, by name). */
export interface PoolState {
  names: string[];
  games: number[];
  scores: number[];
  rngState: number;
}

/**
 * Frozen snapshots of a learner, for self-play that does not chase its own tail (RLlib
 * leagues, PSRO's population). Opponents are drawn:
 * - `latest`: the newest snapshot;
 * - `uniform`: any snapshot with equal probability (fictitious self-play);
 * - `prioritised`: AlphaStar's prioritised fictitious self-play with its "hard" weighting,
 *   P(opponent) proportional to (1 - w)^exponent, where w is the learner's score against it
 *   (a win 1, a draw 1/2), estimated as (score + 1/2) / (games + 1) so an unplayed snapshot
 *   counts as even.
 * The oldest snapshot leaves when a new one would exceed `capacity`.
 */
export class OpponentPool<P> {
  private members: Member<P>[] = [];
  private readonly rng: Rng;

  constructor(readonly o: { capacity: number; sampling: PoolSampling; seed: number; exponent?: number }) {
    if (!(Number.isSafeInteger(o.capacity) && o.capacity > 0))
      throw new Error(`pool: capacity must be a positive integer, got ${o.capacity}`);
    if (!POOL_SAMPLINGS.includes(o.sampling))
      throw new Error(`pool: sampling must be one of ${POOL_SAMPLINGS.join(', ')}, got '${String(o.sampling)}'`);
    if (o.exponent !== undefined && !(o.exponent >= 0))
      throw new Error(`pool: exponent must be >= 0, got ${o.exponent}`);
    this.rng = new Rng(o.seed);
  }

  get size(): number {
    return this.members.length;
  }

  names(): string[] {
    return this.members.map((m) => m.name);
  }

  snapshot(name: string): P {
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new Error(`pool: no snapshot '${name}'; held: ${this.names().join(', ') || 'none'}`);
    return m.snapshot;
  }

  /** Adds a snapshot; returns the one it pushed out (for the caller to free), if any. */
  add(name: string, snapshot: P): P | undefined {
    if (this.members.some((m) => m.name === name)) throw new Error(`pool: a snapshot named '${name}' is already held`);
    this.members.push({ name, snapshot, games: 0, score: 0 });
    return this.members.length > this.o.capacity ? this.members.shift()!.snapshot : undefined;
  }

  /** The learner's estimated score against each snapshot, in pool order. */
  winRates(): number[] {
    return this.members.map((m) => (m.score + 0.5) / (m.games + 1));
  }

  /** Each snapshot's probability of being drawn next, in pool order. */
  probabilities(): number[] {
    const n = this.members.length;
    if (n === 0) return [];
    if (this.o.sampling === 'latest') return this.members.map((_, i) => (i === n - 1 ? 1 : 0));
    if (this.o.sampling === 'uniform') return this.members.map(() => 1 / n);
    const w = this.winRates().map((x) => (1 - x) ** (this.o.exponent ?? 2));
    const total = w.reduce((a, b) => a + b, 0);
    // every snapshot beaten every time: fall back to uniform rather than divide by zero
    return total > 0 ? w.map((x) => x / total) : w.map(() => 1 / n);
  }

  /** Draws an opponent's name. */
  sample(): string {
    if (this.members.length === 0) throw new Error('pool: empty; add a snapshot first');
    const p = this.probabilities();
    let u = this.rng.next();
    for (let i = 0; i < p.length; i++) if ((u -= p[i]) < 0) return this.members[i].name;
    return this.members[this.members.length - 1].name;
  }

  /** Records a game of the learner against `name`: its score 1 (win), 1/2 (draw) or 0 (loss). */
  record(name: string, score: number): void {
    if (!(score >= 0 && score <= 1)) throw new Error(`pool: a score is in [0, 1], got ${score}`);
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new Error(`pool: no snapshot '${name}'`);
    m.games++;
    m.score += score;
  }

  state(): PoolState {
    return {
      names: this.names(),
      games: this.members.map((m) => m.games),
      scores: this.members.map((m) => m.score),
      rngState: this.rng.seedState,
    };
  }

  /** A pool as `state` left it, with each named snapshot from `load`. */
  static restore<P>(o: Omit<OpponentPool<P>['o'], 'seed'>, s: PoolState, load: (name: string) => P): OpponentPool<P> {
    // an Rng seeded with another's state continues its draws
    const pool = new OpponentPool<P>({ ...o, seed: s.rngState });
    s.names.forEach((name, i) =>
      pool.members.push({ name, snapshot: load(name), games: s.games[i], score: s.scores[i] }),
    );
    return pool;
  }
}

/**
 * Elo ratings from game results by the Bradley-Terry maximum-likelihood fit (Hunter's MM
 * iteration; a draw counts half a win to each side), on the Elo scale: a 400-point gap is
 * 10:1 odds. `anchor` is rated `anchorRating`. Every player needs at least one game, and the
 * results graph must be connected, or a rating is undefined.
 */
export function eloRatings(
  results: readonly { a: string; b: string; scoreA: number }[],
  anchor: string,
  anchorRating = 1000,
  iterations = 2000,
): Record<string, number> {
  const players = [...new Set(results.flatMap((r) => [r.a, r.b]))];
  if (!players.includes(anchor)) throw new Error(`elo: the anchor '${anchor}' played no game`);
  const index = new Map(players.map((p, i) => [p, i]));
  const n = players.length;
  const wins = new Array(n).fill(0);
  const games = Array.from({ length: n }, () => new Array(n).fill(0));
  for (const r of results) {
    if (!(r.scoreA >= 0 && r.scoreA <= 1)) throw new Error(`elo: a score is in [0, 1], got ${r.scoreA}`);
    const [i, j] = [index.get(r.a)!, index.get(r.b)!];
    wins[i] += r.scoreA;
    wins[j] += 1 - r.scoreA;
    games[i][j]++;
    games[j][i]++;
  }
  // a tiny prior (half a draw against a virtual even player each) keeps an unbeaten or winless player finite
  const prior = 0.5;
  let strength = new Array(n).fill(1);
  for (let it = 0; it < iterations; it++) {
    const next = strength.map((s, i) => {
      let denominator = prior / (s + 1);
      for (let j = 0; j < n; j++) if (games[i][j]) denominator += games[i][j] / (s + strength[j]);
      return (wins[i] + prior / 2) / denominator;
    });
    strength = next;
  }
  const base = Math.log10(strength[index.get(anchor)!]);
  return Object.fromEntries(players.map((p, i) => [p, anchorRating + 400 * (Math.log10(strength[i]) - base)]));
}
