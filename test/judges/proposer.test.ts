import { expect } from 'chai';
import { CoverageJudge, LearnabilityJudge, UncertaintyJudge, editDistance } from '../../judges/index.js';
import type { Episode, Task } from '../../src/core/types.js';
import { turn } from './fixtures.js';

const verify = (task: Task, output: string) => output === task.answer;
const seed: Task = { id: 'seed', family: 'arithmetic', prompt: '' };

/** One propose-solve episode: a proposal and the solver's attempts at the task it became. */
function episode(id: string, proposal: string, attempts: string[], answer = '5', valid = true): Episode {
  const task: Task = { id: `${id}/task`, family: 'arithmetic', prompt: proposal, answer };
  const turns = [
    turn({ role: 'proposer', text: proposal, valid }, 0),
    ...attempts.map((a, i) => ({ ...turn({ text: a }, i + 1), task, compare: 'episode' as const })),
  ];
  return { id, group: 'g', task: seed, turns: valid ? turns : turns.slice(0, 1) };
}

describe('judges for proposers (batch-level)', () => {
  it('learnability is 1 - p inside (0, 1), 0 at the ends, its penalty for an invalid proposal', () => {
    const batch = [
      episode('a', '2+3=', ['5', '4', '5', '5']),
      episode('b', '1+4=', ['5', '5']),
      episode('c', '0+1=', ['9']),
      episode('d', 'junk', [], '', false),
    ];
    const r = new LearnabilityJudge(verify).score(batch);
    expect(r.map((row) => row[0])).to.deep.equal([0.25, 0, 0, -1]);
    expect(r[0].slice(1)).to.deep.equal([null, null, null, null]); // solver turns are another judge's
  });

  it('learnability reads p from the vote when label-free, never from the answer', () => {
    const batch = [episode('a', '2+3=', ['7', '7', '7', '1'], '5')];
    expect(new LearnabilityJudge(undefined, { p: 'vote' }).score(batch)[0][0]).to.equal(0.25); // p = 3/4 agree
    expect(new LearnabilityJudge(undefined, { p: 'vote' }).needsAnswer).to.equal(false);
  });

  it('uncertainty peaks at an even split and pays a repetition penalty for near-duplicates in the batch', () => {
    const even = [episode('a', '12+34=', ['1', '1', '2', '2']), episode('b', '98+76=', ['3', '3', '3', '3'])];
    const r = new UncertaintyJudge(undefined, { repetition: 0 }).score(even);
    expect([r[0][0], r[1][0]]).to.deep.equal([1, 0]);
    // '12+34=' and '12+35=' are within 0.5 edit distance; '98+76=' is not: penalties 2/3, 2/3, 1/3
    const dup = [
      episode('a', '12+34=', ['1', '1', '2', '2']),
      episode('b', '12+35=', ['1', '1', '2', '2']),
      episode('c', '98+76=', ['1', '1', '2', '2']),
    ];
    const p = new UncertaintyJudge(undefined).score(dup).map((row) => row[0] as number);
    expect(p[0]).to.be.closeTo(1 - 2 / 3, 1e-12);
    expect(p[1]).to.be.closeTo(1 - 2 / 3, 1e-12);
    expect(p[2]).to.be.closeTo(1 - 1 / 3, 1e-12);
    expect(editDistance('12+34=', '12+35=')).to.equal(1);
  });

  it('coverage pays less for a crowded difficulty cell', () => {
    const measure = (t: Task) => ({
      digits: Math.max(
        ...t.prompt
          .slice(0, -1)
          .split('+')
          .map((x) => x.length),
      ),
    });
    const batch = [
      episode('a', '1+2=', ['3']),
      episode('b', '3+4=', ['7']),
      episode('c', '10+20=', ['30']),
      episode('d', 'x', [], '', false),
    ];
    const r = new CoverageJudge(measure).score(batch).map((row) => row[0]);
    expect(r).to.deep.equal([1 - 2 / 3, 1 - 2 / 3, 1 - 1 / 3, null]);
  });
});
