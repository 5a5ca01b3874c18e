import { expect } from 'chai';
import { constantVerdict } from '../../src/util/verdicts.js';
import { topCellShare } from '../../src/util/cells.js';

const shown = (said: Array<string | null>, truth: string) => said.map((s) => ({ said: s, truth }));

describe('the metrics the collapse watch reads', () => {
  it('constant_verdict: 1 for one verdict on everything, 0 for a judge that follows the truth, between for a biased one', () => {
    expect(constantVerdict([...shown(['y', 'y', 'y'], 'y'), ...shown(['y', 'y'], 'n')])).to.equal(1);
    expect(constantVerdict([...shown(['y', 'y'], 'y'), ...shown(['n', 'n'], 'n')])).to.equal(0);
    // 'y' is its usual verdict (5 of 8); it says 'y' to 1 of the 4 wrong answers
    expect(constantVerdict([...shown(['y', 'y', 'y', 'y'], 'y'), ...shown(['y', 'n', 'n', 'n'], 'n')])).to.equal(0.25);
    // pairwise: 'A' whichever position the right answer is in
    expect(constantVerdict([...shown(['A', 'A'], 'A'), ...shown(['A', 'A', 'B'], 'B')])).to.be.closeTo(2 / 3, 1e-12);
  });

  it('constant_verdict counts an invalid verdict as not the usual one, and needs both truths shown', () => {
    expect(constantVerdict([...shown(['y', null], 'y'), ...shown(['y', 'y'], 'n')])).to.equal(0.5);
    expect(constantVerdict(shown(['y', 'y'], 'y'))).to.equal(undefined);
    expect(constantVerdict([...shown([null], 'y'), ...shown([null], 'n')])).to.equal(undefined);
  });

  it('top_cell_share: the share of tasks in the most common cell of the measure', () => {
    const a = { digits: 2, carries: 1 };
    const b = { digits: 2, carries: 0 };
    expect(topCellShare([a, a, a, b])).to.equal(0.75);
    expect(topCellShare([a, a])).to.equal(1);
    expect(topCellShare([])).to.be.NaN;
  });
});
