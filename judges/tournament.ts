/**
 * Ranking a group of candidates by pairwise verdicts, for group advantages from a judge that
 * compares (ArenaRL's tournaments): a seeded single-elimination bracket takes N - 1
 * verdicts for N candidates, a full round robin N (N - 1) / 2. `verdict(a, b)` is true when
 * candidate a wins against b (a shown first); it is the judge, and may be inconsistent.
 */
import { Rng } from '../src/util/rng.js';

export type Verdict = (a: number, b: number) => boolean;

/** A ranking: each candidate's score (higher is better; equal scores tie) and the verdicts it took. */
export interface Ranking {
  scores: number[];
  comparisons: number;
}

/**
 * The standard bracket order of `n` seeds (n a power of two): seed 0 meets seed n - 1 in the
 * first round, and the top two seeds can meet only in the final.
 */
export function bracketOrder(n: number): number[] {
  if (n === 1) return [0];
  return bracketOrder(n / 2).flatMap((s) => [s, n - 1 - s]);
}

/**
 * A single-elimination tournament. Candidates are seeded by `prior` (higher is the better
 * seed; a prior from a cheap signal, or none: a seeded shuffle) and placed in the standard
 * bracket; with N not a power of two the top seeds get byes. Each match is one verdict, the
 * first-listed candidate shown first, so N - 1 verdicts in all. Candidates are ordered by the
 * round they reached (the champion one more); within a round by their seed and then by how
 * far their conqueror went when there is a prior, and the other way round without one
 * (losing to the champion says more than losing to a first-round winner, and a shuffled seed
 * says nothing). The score is the place in that order, 1 for the last to N for the champion.
 */
export function singleElimination(
  n: number,
  verdict: Verdict,
  o: { seed: number; prior?: readonly number[] },
): Ranking {
  if (!(Number.isSafeInteger(n) && n >= 1))
    throw new Error(`singleElimination: n must be a positive integer, got ${n}`);
  if (o.prior && o.prior.length !== n)
    throw new Error(`singleElimination: ${o.prior.length} priors for ${n} candidates`);
  const rng = new Rng(o.seed);
  const noise = Array.from({ length: n }, () => rng.next());
  const order = [...Array(n).keys()].sort((a, b) => (o.prior ? o.prior[b] - o.prior[a] : 0) || noise[b] - noise[a]);
  const seedRank = new Array<number>(n);
  order.forEach((c, k) => {
    seedRank[c] = k;
  });
  let size = 1;
  while (size < n) size *= 2;
  // slots beyond n are byes: the seed they would face walks over
  let alive: (number | null)[] = bracketOrder(size).map((s) => (s < n ? order[s] : null));
  const reached = new Array<number>(n).fill(0);
  const beatenBy = new Array<number>(n).fill(-1);
  let comparisons = 0;
  let round = 0;
  while (alive.length > 1) {
    round++;
    const next: (number | null)[] = [];
    for (let k = 0; k < alive.length; k += 2) {
      const [a, b] = [alive[k], alive[k + 1]];
      if (a === null || b === null) {
        next.push(a ?? b);
        continue;
      }
      comparisons++;
      const [w, l] = verdict(a, b) ? [a, b] : [b, a];
      reached[l] = round;
      beatenBy[l] = w;
      next.push(w);
    }
    alive = next;
  }
  const champion = alive[0]!;
  reached[champion] = round + 1;
  const conqueror = (c: number) => (beatenBy[c] >= 0 ? reached[beatenBy[c]] : round + 2);
  const seedKey = (c: number) => n - seedRank[c];
  // within a round, a prior's seed says more than the conqueror; without one the seed is a shuffle and the conqueror says more
  const keys = o.prior ? [seedKey, conqueror] : [conqueror, seedKey];
  const ranked = [...Array(n).keys()].sort(
    (a, b) => reached[a] - reached[b] || keys[0](a) - keys[0](b) || keys[1](a) - keys[1](b),
  );
  const scores = new Array<number>(n);
  ranked.forEach((c, k) => {
    scores[c] = k + 1;
  });
  return { scores, comparisons };
}

/** A full round robin: every pair once, in a seeded random order of who is shown first; score = wins (Copeland). */
export function fullRoundRobin(n: number, verdict: Verdict, o: { seed: number }): Ranking {
  const rng = new Rng(o.seed);
  const wins = new Array<number>(n).fill(0);
  let comparisons = 0;
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      const [x, y] = rng.next() < 0.5 ? [a, b] : [b, a];
      comparisons++;
      wins[verdict(x, y) ? x : y]++;
    }
  }
  return { scores: wins, comparisons };
}

/** Ranks of `xs`, 1 for the smallest, ties given their mean rank (as Spearman's coefficient wants). */
export function averageRanks(xs: readonly number[]): number[] {
  const idx = xs.map((v, i) => [v, i] as const).sort((p, q) => p[0] - q[0]);
  const out = new Array<number>(xs.length);
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j + 1 < idx.length && idx[j + 1][0] === idx[i][0]) j++;
    for (let k = i; k <= j; k++) out[idx[k][1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

/** Spearman's rank correlation (Pearson's on average ranks, so ties count as ties); NaN when either side is constant. */
export function spearman(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new Error(`spearman: ${a.length} against ${b.length} values`);
  const [ra, rb] = [averageRanks(a), averageRanks(b)];
  const mean = (r: number[]) => r.reduce((s, v) => s + v, 0) / r.length;
  const [ma, mb] = [mean(ra), mean(rb)];
  let c = 0,
    va = 0,
    vb = 0;
  for (let i = 0; i < ra.length; i++) {
    c += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) ** 2;
    vb += (rb[i] - mb) ** 2;
  }
  return c / Math.sqrt(va * vb);
}

/**
 * Group advantages from a ranking: each candidate's reward is its normalised rank in the
 * group, (rank - 1) / (N - 1) from 0 for the last to 1 for the first (ties share their mean
 * rank), then centred and scaled by the group's std (GRPO's step, unbiased std, epsilon 1e-6
 * as verl's); a group of one, or of equal ranks, gets 0.
 */
export function rankAdvantages(r: Ranking): number[] {
  const n = r.scores.length;
  if (n < 2) return r.scores.map(() => 0);
  const rewards = averageRanks(r.scores).map((k) => (k - 1) / (n - 1));
  const mean = rewards.reduce((s, v) => s + v, 0) / n;
  const std = Math.sqrt(rewards.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  return rewards.map((v) => (v - mean) / (std + 1e-6));
}
