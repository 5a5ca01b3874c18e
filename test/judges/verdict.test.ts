import { expect } from 'chai';
import type { Episode, Task } from '../../src/core/types.js';
import { VerdictJudge } from '../../judges/verdict.js';
import { makeJudge } from '../../src/registry.js';
import { turn } from './fixtures.js';

// verdict turns as the judge arena files them: the truth in task.answer, the ideal completion in task.target
const judged = (truth: string): Task => ({
  id: 't0/right',
  family: 'arithmetic',
  prompt: '12+34=',
  answer: truth,
  target: `46${truth}`,
});
const verdicts = (...outs: Array<[string, string]>): Episode => ({
  id: 'e',
  group: 'g',
  task: { id: 't0', family: 'arithmetic', prompt: '12+34=', answer: '46' },
  turns: outs.map(([text, truth], i) => ({
    ...turn({ role: 'judge', text, value: text.slice(-1) }, i),
    task: judged(truth),
  })),
});

describe('judges/verdict', () => {
  it('pays a right verdict, whatever the working before it', () => {
    const judge = new VerdictJudge();
    expect(judge.score([verdicts(['46y', 'y'], ['3y', 'y'], ['46y', 'n'], ['46n', 'n'])])).to.deep.equal([
      [1, 1, 0, 1],
    ]);
  });

  it("score 'working' pays the working before the verdict against the target's, not the verdict", () => {
    const judge = makeJudge('verdict', { name: 'working', score: 'working', wrong: -1 });
    expect(judge.name).to.equal('working');
    // '46' is the reference answer: right working even when the verdict is wrong; '3' and '47' are not
    expect(judge.score([verdicts(['46y', 'y'], ['3y', 'y'], ['46y', 'n'], ['47n', 'n'])])).to.deep.equal([
      [1, -1, 1, -1],
    ]);
  });

  it('abstains on turns without a target or of other roles; refuses an unknown score', () => {
    const judge = makeJudge('verdict', { score: 'working' });
    const e = verdicts(['46y', 'y']);
    e.turns.push(
      {
        ...turn({ role: 'judge', text: '46y', value: 'y' }, 1),
        task: { id: 'x', family: 'arithmetic', prompt: '', answer: 'y' },
      },
      turn({ text: '46' }, 2),
    );
    expect(judge.score([e])).to.deep.equal([[1, null, null]]);
    expect(() => makeJudge('verdict', { score: 'sum' })).to.throw(/verdict.*score/);
  });

  it('weights: a turn whose truth is a key earns its reward times the weight, right, wrong or invalid', () => {
    const judge = makeJudge('verdict', { wrong: -1, invalid: -1, weights: { n: 2 } });
    const e = verdicts(['46y', 'y'], ['46n', 'y'], ['46n', 'n'], ['46y', 'n']);
    e.turns.push({ ...turn({ role: 'judge', text: '46?', valid: false }, 4), task: judged('n') });
    expect(judge.score([e])).to.deep.equal([[1, -1, 2, -2, -2]]);
    expect(() => makeJudge('verdict', { weights: { n: 0 } })).to.throw(
      /verdict\.options\.weights\.n: expected a number > 0, received 0/,
    );
    expect(() => makeJudge('verdict', { weights: [2] })).to.throw(/weights/);
  });
});
