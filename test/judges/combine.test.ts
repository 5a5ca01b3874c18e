import { expect } from 'chai';
import { combineRewards } from '../../judges/index.js';

describe('judges/combine combineRewards', () => {
  it('weighted sum of judges', () => {
    // 2·1 + 0.5·4 = 4;  2·0 + 0.5·(−2) = −1
    expect(combineRewards([[[1], [0]], [[4], [-2]]], [2, 0.5])).to.deep.equal([[4], [-1]]);
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
