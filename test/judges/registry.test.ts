import { expect } from 'chai';
import { JUDGE_KINDS, MajorityJudge, SelfCertaintyJudge, VerifierJudge, makeJudge } from '../../judges/index.js';
import { ans, solverGroup } from './fixtures.js';

const verify = (task: { answer?: string }, output: string) => output.endsWith(task.answer ?? '\u0000');

describe('judges/registry', () => {
  it('knows every judge kind', () => {
    expect(Object.keys(JUDGE_KINDS).sort()).to.deep.equal(['coverage', 'grounded', 'learnability', 'majority', 'outcome', 'peer', 'self-certainty', 'uncertainty', 'verdict', 'verifier']);
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
    expect(() => makeJudge('x')).to.throw("unknown judge 'x'; known: coverage, grounded, learnability, majority, outcome, peer, self-certainty, uncertainty, verdict, verifier");
    expect(() => makeJudge('toString')).to.throw(/unknown judge 'toString'/);
  });

  it('unknown option keys name the kind and the option', () => {
    expect(() => makeJudge('majority', { rol: 'solver' })).to.throw(/judge 'majority': unknown option 'rol'; known: role, name/);
    expect(() => makeJudge('verifier', { correctt: 1 }, { verify })).to.throw(/judge 'verifier': unknown option 'correctt'/);
  });

  it('wrongly typed options name the kind and the option', () => {
    expect(() => makeJudge('verifier', { correct: '1' }, { verify })).to.throw(
      /judge 'verifier': option 'correct' must be a finite number, got "1"/,
    );
    expect(() => makeJudge('self-certainty', { normalize: 'batch' })).to.throw(
      /judge 'self-certainty': option 'normalize' must be one of 'none', 'group', got "batch"/,
    );
    expect(() => makeJudge('self-certainty', { invalidReward: null })).to.throw(/option 'invalidReward'/);
    expect(() => makeJudge('majority', { role: [] })).to.throw(/judge 'majority': option 'role'/);
    expect(() => makeJudge('majority', { role: 3 })).to.throw(/judge 'majority': option 'role'/);
    expect(() => makeJudge('majority', [] as never)).to.throw(/judge 'majority': options must be an object/);
  });

  it("verifier without deps.verify says what it needs", () => {
    expect(() => makeJudge('verifier')).to.throw(/judge 'verifier': needs deps.verify/);
  });
});
