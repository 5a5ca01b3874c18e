import { expect } from 'chai';
import { keepGroupsWithVariance } from '../../src/rl/filter.js';

describe('rl/filter keepGroupsWithVariance', () => {
  // a: [1, 0, 1] varied → kept (indices 0, 1, 5); b: [1, 1] all equal → dropped;
  // c: [0.5] group of one → dropped by default.
  const ids = ['a', 'a', 'b', 'b', 'c', 'a'];
  const rewards = [1, 0, 1, 1, 0.5, 1];

  it('keeps only samples of groups whose rewards differ, in original order', () => {
    expect(keepGroupsWithVariance(ids, rewards)).to.deep.equal([0, 1, 5]);
  });

  it('drops groups of one by default, keeps them with keepSingletons (verl DAPO recipe)', () => {
    expect(keepGroupsWithVariance(ids, rewards, { keepSingletons: true })).to.deep.equal([0, 1, 4, 5]);
  });

  it('treats numeric and string ids as distinct groups', () => {
    expect(keepGroupsWithVariance([1, '1', 1], [0, 5, 1])).to.deep.equal([0, 2]);
  });

  it('is immune to round-off: three copies of 0.1 are all equal', () => {
    expect(keepGroupsWithVariance(['g', 'g', 'g'], [0.1, 0.1, 0.1])).to.deep.equal([]);
  });

  it('returns [] for an empty batch and throws on length mismatch', () => {
    expect(keepGroupsWithVariance([], [])).to.deep.equal([]);
    expect(() => keepGroupsWithVariance(['a'], [])).to.throw();
  });
});
