import { expect } from 'chai';
import type { Task } from '../../src/core/types.js';
import { VerifierJudge } from '../../judges/index.js';
import { TASK, ans, bad, episode, solverGroup } from './fixtures.js';

// A toy family verifier: the last number in the text equals the reference answer.
// It parses the text as data; nothing is evaluated.
const verify = (task: Task, output: string): boolean => {
  const nums = output.match(/-?\d+/g);
  return nums !== null && nums[nums.length - 1] === task.answer;
};

describe('judges/verifier', () => {
  it('defaults: correct 1, wrong 0, invalid 0', () => {
    const judge = new VerifierJudge(verify);
    expect(judge.name).to.equal('verifier');
    expect(judge.score(solverGroup([ans('5'), ans('7'), bad()]))).to.deep.equal([[1], [0], [0]]);
  });

  it('uses the configured correct / wrong / invalid values', () => {
    const judge = new VerifierJudge(verify, { correct: 2, wrong: -0.5, invalid: -1 });
    expect(judge.score(solverGroup([ans('5'), ans('7'), bad('no idea')]))).to.deep.equal([[2], [-0.5], [-1]]);
  });

  it('verifies the turn text, so the family checker decides correctness even for an unparsed action', () => {
    const judge = new VerifierJudge(verify, { invalid: -1 });
    expect(judge.score(solverGroup([bad('I think 5'), bad('I think 4')]))).to.deep.equal([[1], [-1]]);
  });

  it('task without an answer → null for every turn', () => {
    const unlabeled: Task = { id: 't1', family: 'arithmetic', prompt: '2+3=' };
    let calls = 0;
    const judge = new VerifierJudge((task, out) => (calls++, verify(task, out)));
    expect(judge.score(solverGroup([ans('5'), bad()], unlabeled))).to.deep.equal([[null], [null]]);
    expect(calls).to.equal(0);
  });

  it("rewards only the configured role; other roles' turns get null", () => {
    const group = [episode([{ role: 'proposer', text: '5' }, ans('5')])];
    expect(new VerifierJudge(verify).score(group)).to.deep.equal([[null, 1]]);
    expect(new VerifierJudge(verify, { role: 'proposer' }).score(group)).to.deep.equal([[1, null]]);
  });

  it('passes the episode task to verify and propagates its errors with context', () => {
    const seen: string[] = [];
    new VerifierJudge((task, out) => (seen.push(`${task.id}:${out}`), false)).score(solverGroup([ans('1')]));
    expect(seen).to.deep.equal([`${TASK.id}:answer: 1`]);
    const boom = new VerifierJudge(() => {
      throw new Error('boom');
    });
    expect(() => boom.score(solverGroup([ans('1')]))).to.throw(/verifier.*ep0.*turn 0.*boom/);
  });

  it('rejects non-finite reward values and a missing verify', () => {
    expect(() => new VerifierJudge(verify, { correct: NaN })).to.throw(/'correct'.*NaN/);
    expect(() => new VerifierJudge(undefined as never)).to.throw(/verify must be a function/);
  });
});
