import { expect } from 'chai';
import { JUDGE_KINDS, makeJudge } from '../../src/registry.js';
import { MajorityJudge, SelfCertaintyJudge, VerifierJudge } from '../../judges/index.js';
import { ans, solverGroup } from './fixtures.js';

const verify = (task: { answer?: string }, output: string) => output.endsWith(task.answer ?? '\u0000');

describe('judges/registry', () => {
  it('knows every judge kind', () => {
    expect(Object.keys(JUDGE_KINDS).sort()).to.deep.equal([
      'coverage',
      'format',
      'function',
      'grounded',
      'learnability',
      'majority',
      'outcome',
      'peer',
      'self-certainty',
      'uncertainty',
      'verdict',
      'verifier',
    ]);
    expect(makeJudge('majority')).to.be.instanceOf(MajorityJudge);
    expect(makeJudge('self-certainty', { normalize: 'group', invalidReward: 0 })).to.be.instanceOf(SelfCertaintyJudge);
    expect(makeJudge('verifier', { correct: 2 }, { verify })).to.be.instanceOf(VerifierJudge);
  });

  it('builds working judges with the given options', () => {
    const group = solverGroup([ans('5'), ans('7')]);
    expect(makeJudge('verifier', { correct: 2, wrong: -1 }, { verify }).score(group)).to.deep.equal([[2], [-1]]);
    const named = makeJudge('majority', { name: 'maj', role: ['solver'] });
    expect(named.name).to.equal('maj');
    expect(named.score(group)).to.deep.equal([[1], [0]]);
  });

  it('unknown kind lists the known ones', () => {
    expect(() => makeJudge('x')).to.throw(
      "unknown judge 'x'; known: coverage, format, function, grounded, learnability, majority, outcome, peer, self-certainty, uncertainty, verdict, verifier",
    );
    expect(() => makeJudge('toString')).to.throw(/unknown judge 'toString'/);
  });

  it('unknown option keys name the kind and the option', () => {
    expect(() => makeJudge('majority', { rol: 'solver' })).to.throw(
      /majority\.options\.rol: unrecognized key \(did you mean "role"\?\); known: role, name, minShare, maxShare/,
    );
    expect(() => makeJudge('verifier', { correctt: 1 }, { verify })).to.throw(
      /verifier\.options\.correctt: unrecognized key/,
    );
  });

  it('wrongly typed options name the kind and the option', () => {
    expect(() => makeJudge('verifier', { correct: '1' }, { verify })).to.throw(
      /verifier\.options\.correct: expected number, received string/,
    );
    expect(() => makeJudge('self-certainty', { normalize: 'batch' })).to.throw(
      /self-certainty\.options\.normalize: expected one of "none", "group", received "batch"/,
    );
    expect(() => makeJudge('self-certainty', { invalidReward: null })).to.throw(
      /self-certainty\.options\.invalidReward: expected number, received null/,
    );
    expect(() => makeJudge('majority', { role: [] })).to.throw(/majority\.options\.role: expected at least 1 item/);
    expect(() => makeJudge('majority', { role: 3 })).to.throw(
      /majority\.options\.role: a role id or a non-empty list of role ids/,
    );
    expect(() => makeJudge('majority', [] as never)).to.throw(/majority\.options: expected object, received array/);
  });

  it('verifier without deps.verify says what it needs', () => {
    expect(() => makeJudge('verifier')).to.throw(/judge 'verifier': needs deps.verify/);
  });
});
