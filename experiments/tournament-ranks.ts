/**
 * How well a seeded single-elimination bracket (N - 1 verdicts) ranks a group against a full
 * round robin on the same verdicts (N (N - 1) / 2), by Spearman's correlation, for judges of
 * four kinds: exact on a latent quality, noisy (each verdict wrong with probability 0.1),
 * one that also favours the answer shown first, and right-or-wrong answers (a coin between
 * two of a kind). Verdicts are
 * fixed per ordered pair, so both formats read the same ones. Priors: none (a seeded
 * shuffle), or the latent quality plus noise of weight `--prior-noise` (a cheap signal such
 * as a pointwise score), or an anchor (ArenaRL's seeding: each candidate judged once against
 * an extra answer of the same kind, such as a greedy one, and seeded by whether it won; N more
 * verdicts, 2N - 1 in all).
 *
 *   npx tsx experiments/tournament-ranks.ts [--groups 2000] [--seed 1]
 */
import { fullRoundRobin, singleElimination, spearman } from '../judges/tournament.js';
import { Rng } from '../src/util/rng.js';
import { arg } from './script.js';

const groups = Number(arg('groups', '2000'));
const rng = new Rng(Number(arg('seed', '1')));

interface Judge {
  name: string;
  noise: number;
  positionBias: number;
  binary?: boolean;
}
const judges: Judge[] = [
  { name: 'exact', noise: 0, positionBias: 0 },
  { name: 'noisy 10%', noise: 0.1, positionBias: 0 },
  { name: 'first-shown +10%', noise: 0.1, positionBias: 0.1 },
  // verifiable answers: right or wrong (half of them), the judge told apart only across the two
  { name: 'right/wrong, noisy 10%', noise: 0.1, positionBias: 0, binary: true },
];

for (const judge of judges) {
  for (const n of [4, 8, 16]) {
    for (const prior of ['none', 'signal 0.5', 'anchor']) {
      let total = 0,
        counted = 0,
        comparisons = 0;
      for (let g = 0; g < groups; g++) {
        const quality = Array.from({ length: n }, () => (judge.binary ? (rng.next() < 0.5 ? 1 : 0) : rng.next()));
        const fixed = new Map<string, boolean>();
        const draw = (qa: number, qb: number) =>
          rng.next() < (qa === qb ? 0.5 : qa > qb ? 1 - judge.noise : judge.noise) + judge.positionBias;
        const verdict = (a: number, b: number) => {
          const key = `${a},${b}`;
          if (!fixed.has(key)) fixed.set(key, draw(quality[a], quality[b]));
          return fixed.get(key)!;
        };
        const anchor = judge.binary ? (rng.next() < 0.5 ? 1 : 0) : rng.next();
        const priors =
          prior === 'none'
            ? undefined
            : prior === 'anchor'
              ? quality.map((q) => (draw(q, anchor) ? 1 : 0))
              : quality.map((q) => 0.5 * q + 0.5 * rng.next());
        const bracket = singleElimination(n, verdict, { seed: rng.int(1 << 30), prior: priors });
        const full = fullRoundRobin(n, verdict, { seed: rng.int(1 << 30) });
        const rho = spearman(bracket.scores, full.scores);
        if (!Number.isNaN(rho)) {
          total += rho;
          counted++;
        }
        comparisons += (bracket.comparisons + (prior === 'anchor' ? n : 0)) / full.comparisons;
      }
      console.log(
        JSON.stringify({
          judge: judge.name,
          n,
          prior,
          spearman: +(total / counted).toFixed(3),
          comparisons: `${prior === 'anchor' ? 2 * n - 1 : n - 1} of ${(n * (n - 1)) / 2}`,
          share: +(comparisons / groups).toFixed(3),
        }),
      );
    }
  }
}
