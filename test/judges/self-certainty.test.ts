import { expect } from 'chai';
import { SelfCertaintyJudge } from '../../judges/index.js';
import { bad, episode, solverGroup, turn } from './fixtures.js';

const close = (actual: (number | null)[][], expected: (number | null)[][], tol = 1e-9) => {
  expect(actual.length).to.equal(expected.length);
  actual.forEach((row, e) =>
    row.forEach((r, t) => {
      const x = expected[e][t];
      if (x === null) expect(r, `[${e}][${t}]`).to.equal(null);
      else expect(r, `[${e}][${t}]`).to.be.closeTo(x, tol);
    }),
  );
};

describe('judges/self-certainty', () => {
  it('rewards the mean of the per-token self-certainty', () => {
    const judge = new SelfCertaintyJudge();
    expect(judge.name).to.equal('self-certainty');
    // (1 + 2 + 6) / 3 = 3;  (0.5 + 1.5) / 2 = 1;  4 / 1 = 4
    const group = solverGroup([{ selfCertainty: [1, 2, 6] }, { selfCertainty: [0.5, 1.5] }, { selfCertainty: [4] }]);
    close(judge.score(group), [[3], [1], [4]]);
  });

  it('group normalisation: (x − mean) / (population std + 1e-6)', () => {
    // raw 3, 1, 4 (as above): mean 8/3; population variance ((1/3)² + (5/3)² + (4/3)²)/3 = (42/9)/3 = 14/9
    // std = sqrt(14)/3 = 1.247219; → 0.267261, −1.336306, 1.069045 (÷ by std + 1e-6)
    const judge = new SelfCertaintyJudge({ normalize: 'group' });
    const group = solverGroup([{ selfCertainty: [1, 2, 6] }, { selfCertainty: [0.5, 1.5] }, { selfCertainty: [4] }]);
    const std = Math.sqrt(14) / 3;
    const expected = [3, 1, 4].map((x) => [(x - 8 / 3) / (std + 1e-6)]);
    close(judge.score(group), expected);
    close(judge.score(group), [[0.267261], [-1.3363052], [1.0690442]], 1e-6);
  });

  it('group normalisation of equal scores or of a single turn gives 0, not NaN', () => {
    const judge = new SelfCertaintyJudge({ normalize: 'group' });
    close(judge.score(solverGroup([{ selfCertainty: [2] }, { selfCertainty: [1, 3] }])), [[0], [0]]);
    close(judge.score(solverGroup([{ selfCertainty: [5] }])), [[0]]);
  });

  it('empty completion → null, and it is left out of the group statistics', () => {
    close(new SelfCertaintyJudge().score(solverGroup([{ selfCertainty: [] }, { selfCertainty: [2] }])), [[null], [2]]);
    // normalised over 1 and 3 only: mean 2, std 1
    const group = solverGroup([{ selfCertainty: [1] }, { selfCertainty: [] }, { selfCertainty: [3] }]);
    close(new SelfCertaintyJudge({ normalize: 'group' }).score(group), [[-1 / (1 + 1e-6)], [null], [1 / (1 + 1e-6)]]);
  });

  it('invalidReward replaces the score of invalid actions and stays out of normalisation', () => {
    const specs = [{ selfCertainty: [1] }, { ...bad(), selfCertainty: [9, 9] }, { selfCertainty: [3] }];
    // default: no special case, confident garbage earns its confidence
    close(new SelfCertaintyJudge().score(solverGroup(specs)), [[1], [9], [3]]);
    close(new SelfCertaintyJudge({ invalidReward: -1 }).score(solverGroup(specs)), [[1], [-1], [3]]);
    close(new SelfCertaintyJudge({ normalize: 'group', invalidReward: -2 }).score(solverGroup(specs)), [
      [-1 / (1 + 1e-6)],
      [-2],
      [1 / (1 + 1e-6)],
    ]);
  });

  it("other roles' turns get null", () => {
    const group = [episode([{ role: 'proposer', selfCertainty: [7] }, { selfCertainty: [2, 4] }])];
    close(new SelfCertaintyJudge().score(group), [[null, 3]]);
    close(new SelfCertaintyJudge({ role: 'proposer' }).score(group), [[7, null]]);
  });

  it('throws on misaligned or non-finite self-certainty, naming episode and turn', () => {
    const group = solverGroup([{ selfCertainty: [1, 2] }]);
    group[0].turns[0] = { ...turn({ selfCertainty: [1, 2] }), completion: [1, 2, 3] };
    expect(() => new SelfCertaintyJudge().score(group)).to.throw(/ep0' turn 0 has 2 self-certainty values for 3/);
    expect(() => new SelfCertaintyJudge().score(solverGroup([{ selfCertainty: [1, NaN] }]))).to.throw(/NaN/);
    expect(() => new SelfCertaintyJudge().score(solverGroup([{ selfCertainty: [Infinity] }]))).to.throw(/Infinity/);
  });

  it('rejects a bad normalize option', () => {
    expect(() => new SelfCertaintyJudge({ normalize: 'batch' as never })).to.throw(/'normalize'.*"batch"/);
  });
});
