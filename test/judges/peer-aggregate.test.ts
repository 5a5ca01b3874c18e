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

describe('the peer judge: mean or majority of the verdicts on an answer', () => {
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

  it('refuses an unknown aggregate', () => {
    expect(() => makeJudge('peer', { aggregate: 'median' })).to.throw(/aggregate/);
  });
});
