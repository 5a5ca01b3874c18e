import { expect } from 'chai';

describe('bench batch shares', () => {
  it('splits a batch into integer shares that sum to it, for any worker count', async () => {
    const { share } = await import('../../src/bench/share.js');
    for (const workers of [1, 2, 3, 5, 6, 64]) {
      const parts = Array.from({ length: workers }, (_, i) => share(64, workers, i));
      expect(parts.every((p) => Number.isInteger(p) && p >= 1)).to.equal(true);
      expect(parts.reduce((a, b) => a + b, 0)).to.equal(64);
      expect(Math.max(...parts) - Math.min(...parts)).to.be.at.most(1);
    }
  });
});
