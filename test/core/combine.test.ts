import { expect } from 'chai';
import { combineRewards } from '../../judges/index.js';
import { normalizeThenSum } from '../../src/core/combine.js';

describe('judges/combine combineRewards', () => {
  it('weighted sum of judges', () => {
    // 2·1 + 0.5·4 = 4;  2·0 + 0.5·(−2) = −1
    expect(
      combineRewards(
        [
          [[1], [0]],
          [[4], [-2]],
        ],
        [2, 0.5],
      ),
    ).to.deep.equal([[4], [-1]]);
  });

  it('one judge abstains → only the other counts, with no renormalisation by weight', () => {
    expect(combineRewards([[[null, 1]], [[3, 2]]], [1, 0.5])).to.deep.equal([[1.5, 2]]);
  });

  it('every judge abstains → null; a present reward with weight 0 gives 0, not null', () => {
    expect(combineRewards([[[null, null]], [[null, 5]]], [1, 0])).to.deep.equal([[null, 0]]);
  });

  it('keeps ragged shapes (episodes with different turn counts)', () => {
    expect(combineRewards([[[1, 2, 3], [4]]], [1])).to.deep.equal([[1, 2, 3], [4]]);
    expect(combineRewards([[]], [1])).to.deep.equal([]);
  });

  it('does not mutate its inputs', () => {
    const a = [[1, null]];
    combineRewards([a, [[1, 1]]], [1, 1]);
    expect(a).to.deep.equal([[1, null]]);
  });

  it('throws on shape mismatch, naming judge and episode', () => {
    expect(() => combineRewards([[[1], [1]], [[1]]], [1, 1])).to.throw(/judge 1 has 1 episodes, judge 0 has 2/);
    expect(() => combineRewards([[[1, 2]], [[1]]], [1, 1])).to.throw(/judge 1 has 1 turns in episode 0, judge 0 has 2/);
  });

  it('throws when weights do not match the judges, or on bad values', () => {
    expect(() => combineRewards([[[1]], [[1]]], [1])).to.throw(/1 weights for 2 judges/);
    expect(() => combineRewards([], [])).to.throw(/no judges/);
    expect(() => combineRewards([[[1]]], [NaN])).to.throw(/weight 0 is NaN/);
    expect(() => combineRewards([[[NaN]]], [1])).to.throw(/judge 0 gave NaN.*use null/);
  });
});

describe('judges/combine normalizeThenSum (TRL normalize_then_sum)', () => {
  // two groups of three, two judges of weights 1 and 0.5; judge 1 abstains once and gives one group equal rewards.
  // The expected advantages are TRL's own tensor code run in PyTorch on these numbers (nanmean, Bessel nanstd, 1e-4);
  // torch forms nanstd's Bessel factor count / (count - 1) in float32, so they agree to 1e-7, not to float64's last digit.
  const rewards = [
    [1, 10],
    [0, 30],
    [0, null],
    [1, 5],
    [1, 5],
    [0, 5],
  ];
  const groups = ['a', 'a', 'a', 'b', 'b', 'b'];
  const fromTorch = [
    1.0297629016160854, -0.287605256695542, -0.7421576449205436, 0.7421576449205434, 0.7421576449205434,
    -1.4843152898410867,
  ];

  it('normalises each judge within its group, sums by weight, then normalises over the batch, as TRL', () => {
    const adv = normalizeThenSum(rewards, groups, [1, 0.5]);
    adv.forEach((a, i) => expect(a).to.be.closeTo(fromTorch[i], 1e-7));
    // a judge scaled by 100 moves almost nothing (each is normalised on its own), unlike a weighted sum
    const scaled = normalizeThenSum(
      rewards.map(([a, b]) => [a, b === null ? null : 100 * b]),
      groups,
      [1, 0.5],
    );
    scaled.forEach((a, i) => expect(a).to.be.closeTo(adv[i], 1e-4)); // to the epsilon's share of each std
  });

  it('a group of one has no std (TRL: NaN, skipped by nansum), a batch of one gets 0, and every abstention is refused', () => {
    const adv = normalizeThenSum([...rewards, [1, null]], [...groups, 'lone'], [1, 0.5]);
    // the lone turn sums to 0 and still counts in the batch statistics
    const sums = [
      0.8009496824033175, -0.22369939589618298, -0.5772502865071343, 0.5772502865071344, 0.5772502865071344,
      -1.1545005730142686, 0,
    ];
    const mean = sums.reduce((a, b) => a + b, 0) / sums.length;
    const std = Math.sqrt(sums.reduce((a, b) => a + (b - mean) ** 2, 0) / (sums.length - 1));
    adv.forEach((a, i) => expect(a).to.be.closeTo((sums[i] - mean) / (std + 1e-4), 1e-9));
    expect(normalizeThenSum([[3, 4]], ['x'], [1, 1])).to.deep.equal([0]);
    expect(() => normalizeThenSum([[null, null]], ['x'], [1, 1])).to.throw(/every judge abstained on turn 0/);
    expect(() => normalizeThenSum([[1]], ['x'], [1, 1])).to.throw(/turn 0 has 1 rewards for 2 judges/);
    expect(() => normalizeThenSum([[NaN, 1]], ['x'], [1, 1])).to.throw(
      /judge 0 gave NaN at turn 0; use null to abstain/,
    );
  });
});
