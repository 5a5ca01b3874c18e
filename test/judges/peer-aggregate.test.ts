import { expect } from 'chai';
import { makeJudge } from '../../src/registry.js';
import { episode, scoredNow } from './fixtures.js';
import type { Episode } from '../../src/core/types.js';

/** Three answers, each under its own task id, with the verdicts other turns filed on it. */
function judged(verdicts: string[][]): Episode {
  const e = episode([
    ...verdicts.map(() => ({ text: '5', role: 'solver' })),
    ...verdicts.flatMap((vs) => vs.map((v) => ({ text: v, role: 'judge' }))),
  ]);
  let t = verdicts.length;
  verdicts.forEach((vs, k) => {
    const id = `t0/a${k}`;
    e.turns[k].task = { id, family: 'arithmetic', prompt: '2+3=', answer: '5' };
    for (let j = 0; j < vs.length; j++) e.turns[t++].task = { id, family: 'arithmetic', prompt: '2+3=' };
  });
  return e;
}

describe('the peer judge: mean, majority or probability of the verdicts on an answer', () => {
  const e = judged([
    ['y', 'y', 'y', 'n'],
    ['y', 'n'],
    ['n', 'n', 'y'],
  ]);

  it('mean: the share of y', () => {
    const [r] = scoredNow(makeJudge('peer', {}), [e]);
    expect(r.slice(0, 3)).to.deep.equal([0.75, 0.5, 1 / 3]);
  });

  it('majority: 1 when more say y, 0 when fewer, 1/2 on a tie; verdict turns abstain', () => {
    const [r] = scoredNow(makeJudge('peer', { aggregate: 'majority' }), [e]);
    expect(r.slice(0, 3)).to.deep.equal([1, 0.5, 0]);
    expect(r.slice(3).every((x) => x === null)).to.equal(true);
  });

  it("probability: the mean of each verdict's probability of y, read from its first token's log-probability", () => {
    const withProbs = judged([['y', 'n'], ['y'], ['n']]);
    // the verdict letter's probability as the judge's policy gave it: y 0.9, n 0.8, y 0.6, n 0.99
    [0.9, 0.8, 0.6, 0.99].forEach((p, i) => (withProbs.turns[3 + i].logProbs = [Math.log(p), -0.01]));
    const [r] = scoredNow(makeJudge('peer', { aggregate: 'probability' }), [withProbs]);
    const close = (a: number | null, b: number) => expect(a).to.be.closeTo(b, 1e-12);
    close(r[0], (0.9 + 0.2) / 2);
    close(r[1], 0.6); // a y drawn at 0.6 pays less than a y drawn at 0.9: the ranking a sampled letter loses
    close(r[2], 0.01);
    // a verdict without log-probabilities (a remote judge's) is refused, naming the way out
    const bare = judged([['y']]);
    bare.turns[1].logProbs = [];
    expect(() => scoredNow(makeJudge('peer', { aggregate: 'probability' }), [bare])).to.throw(/'mean' or 'majority'/);
  });

  it('refuses an unknown aggregate', () => {
    expect(() => makeJudge('peer', { aggregate: 'median' })).to.throw(/aggregate/);
  });
});
