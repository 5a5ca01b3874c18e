import { expect } from 'chai';
import {
  averageRanks,
  bracketOrder,
  fullRoundRobin,
  rankAdvantages,
  singleElimination,
  spearman,
} from '../../judges/tournament.js';

describe('judges/tournament: brackets, round robins, rank advantages', () => {
  // a judge that is always right about a hidden quality
  const quality = [0.3, 0.9, 0.1, 0.7, 0.5, 0.8, 0.2, 0.6];
  const exact = (a: number, b: number) => quality[a] > quality[b];

  it('the standard bracket keeps the top two seeds apart until the final', () => {
    expect(bracketOrder(8)).to.deep.equal([0, 7, 3, 4, 1, 6, 2, 5]);
    expect(bracketOrder(1)).to.deep.equal([0]);
  });

  it('a bracket takes N - 1 verdicts (byes included); the champion is the best; a true prior gives the true order', () => {
    for (const n of [1, 2, 3, 5, 8]) {
      const calls: [number, number][] = [];
      const r = singleElimination(
        n,
        (a, b) => {
          calls.push([a, b]);
          return exact(a, b);
        },
        { seed: 4 },
      );
      expect(r.comparisons).to.equal(Math.max(0, n - 1));
      expect(calls).to.have.length(Math.max(0, n - 1));
      const best = quality.slice(0, n).indexOf(Math.max(...quality.slice(0, n)));
      expect(r.scores.indexOf(Math.max(...r.scores))).to.equal(best);
    }
    const seeded = singleElimination(8, exact, { seed: 1, prior: quality });
    expect(spearman(seeded.scores, quality)).to.equal(1);
    // without a prior the order is a seeded shuffle: the same seed repeats, others differ
    expect(singleElimination(8, exact, { seed: 9 }).scores).to.deep.equal(
      singleElimination(8, exact, { seed: 9 }).scores,
    );
    expect(() => singleElimination(3, exact, { seed: 1, prior: [1, 2] })).to.throw(/2 priors for 3 candidates/);
  });

  it('within a round: without a prior the conqueror decides (losing to the champion ranks higher); with one the seed does', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const beatenBy = new Map<number, number>();
      const r = singleElimination(
        8,
        (a, b) => {
          const w = exact(a, b);
          beatenBy.set(w ? b : a, w ? a : b);
          return w;
        },
        { seed },
      );
      // first-round losers: those who lost to someone, ordered by score, have conquerors ordered by score too
      const firstRound = [...beatenBy.keys()].filter((c) => r.scores[c] <= 4).sort((x, y) => r.scores[x] - r.scores[y]);
      expect(firstRound).to.have.length(4);
      // how far each conqueror went: the champion (score 8), the runner-up (7), a semi-finalist (5 or 6)
      const went = (score: number) => (score === 8 ? 4 : score === 7 ? 3 : 2);
      const conquerors = firstRound.map((c) => went(r.scores[beatenBy.get(c)!]));
      expect([...conquerors].sort((x, y) => x - y)).to.deep.equal(conquerors);
      expect(conquerors[3]).to.equal(4);
    }
    // with a prior (seeds 0..3 in this order): round one is 0 v 3 and 1 v 2; 3 lost to the champion, 2 to the
    // runner-up, and the better seed 2 still ranks above 3
    const q = [4, 3, 2, 1];
    const r = singleElimination(4, (a, b) => q[a] > q[b], { seed: 1, prior: q });
    expect(r.scores).to.deep.equal([4, 3, 2, 1]);
  });

  it('a round robin asks every pair once and scores wins; Spearman uses mean ranks for ties', () => {
    const r = fullRoundRobin(8, exact, { seed: 3 });
    expect(r.comparisons).to.equal(28);
    expect(spearman(r.scores, quality)).to.equal(1);
    expect(averageRanks([5, 1, 5, 3])).to.deep.equal([3.5, 1, 3.5, 2]);
    expect(spearman([1, 2, 3, 4], [10, 20, 30, 40])).to.equal(1);
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).to.equal(-1);
    // 1 - 6 Σd² / (n (n² - 1)) without ties: d = (0, 1, -1, 0) gives 0.8
    expect(spearman([1, 2, 3, 4], [1, 3, 2, 4])).to.be.closeTo(0.8, 1e-12);
  });

  it('rank advantages are the normalised ranks, centred and scaled within the group', () => {
    const adv = rankAdvantages({ scores: [3, 1, 2], comparisons: 2 });
    // rewards 1, 0, 0.5: mean 0.5, unbiased std 0.5
    expect(adv[0]).to.be.closeTo(0.5 / (0.5 + 1e-6), 1e-12);
    expect(adv[1]).to.be.closeTo(-0.5 / (0.5 + 1e-6), 1e-12);
    expect(adv[2]).to.equal(0);
    expect(rankAdvantages({ scores: [7], comparisons: 0 })).to.deep.equal([0]);
    expect(rankAdvantages({ scores: [2, 2], comparisons: 1 })).to.deep.equal([0, 0]);
  });
});
