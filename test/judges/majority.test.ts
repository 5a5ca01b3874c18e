import { expect } from 'chai';
import { MajorityJudge, majorityLabel } from '../../judges/index.js';
import { ans, bad, episode, solverGroup, turn as turnOf } from './fixtures.js';

describe('judges/majority', () => {
  describe('majorityLabel', () => {
    it('picks the most common value and counts only valid ones', () => {
      expect(majorityLabel(['3', '5', '5', null, '7'])).to.deep.equal({ label: '5', votes: 2, total: 4 });
    });

    it('breaks ties by first appearance', () => {
      expect(majorityLabel(['7', '5', '5', '7'])).to.deep.equal({ label: '7', votes: 2, total: 4 });
      expect(majorityLabel(['5', '7', '7', '5'])).to.deep.equal({ label: '5', votes: 2, total: 4 });
      expect(majorityLabel(['a', 'b', 'c'])).to.deep.equal({ label: 'a', votes: 1, total: 3 });
    });

    it('never lets invalid answers win, however many', () => {
      expect(majorityLabel([null, null, null, '5', '7', '5'])).to.deep.equal({ label: '5', votes: 2, total: 3 });
    });

    it('no valid value → null label, 0 votes, 0 total', () => {
      expect(majorityLabel([null, null])).to.deep.equal({ label: null, votes: 0, total: 0 });
      expect(majorityLabel([])).to.deep.equal({ label: null, votes: 0, total: 0 });
    });
  });

  describe('MajorityJudge', () => {
    const judge = new MajorityJudge();

    it('has a name and scores [] as []', () => {
      expect(judge.name).to.equal('majority');
      expect(judge.score([])).to.deep.equal([]);
    });

    it('rewards agreement with a clear majority', () => {
      const group = solverGroup([ans('5'), ans('7'), ans('5'), ans('5')]);
      expect(judge.score(group)).to.deep.equal([[1], [0], [1], [1]]);
    });

    it('breaks a tie by the answer that appears first in the group', () => {
      const group = solverGroup([ans('7'), ans('5'), ans('5'), ans('7')]);
      expect(judge.score(group)).to.deep.equal([[1], [0], [0], [1]]);
    });

    it('invalid answers never win even when most common: 3 invalid, 2 × 5, 1 × 7 → label 5', () => {
      const group = solverGroup([bad(), ans('7'), bad(), ans('5'), bad(), ans('5')]);
      expect(judge.score(group)).to.deep.equal([[0], [0], [0], [1], [0], [1]]);
    });

    it('an invalid action never matches, even when its stale value equals the label', () => {
      const group = solverGroup([ans('5'), ans('5'), { text: '5', valid: false, value: '5' }]);
      expect(judge.score(group)).to.deep.equal([[1], [1], [0]]);
    });

    it('minShare: abstains when the label won less than that share of the voters, invalid ones included', () => {
      const guarded = new MajorityJudge({ minShare: 0.5 });
      expect(guarded.score(solverGroup([ans('5'), ans('7'), ans('5'), ans('5')]))).to.deep.equal([[1], [0], [1], [1]]);
      expect(guarded.score(solverGroup([ans('5'), ans('7'), ans('5'), ans('9')]))).to.deep.equal([[1], [0], [1], [0]]);
      // 2 of 5 voters: the 3 invalid answers count, so 0.4 < 0.5 and the judge abstains
      expect(guarded.score(solverGroup([ans('5'), bad(), ans('5'), bad(), ans('7')]))).to.deep.equal([
        [null],
        [null],
        [null],
        [null],
        [null],
      ]);
    });

    it('minShare outside [0, 1] is an error naming the option', () => {
      expect(() => new MajorityJudge({ minShare: 1.5 })).to.throw(/minShare.*\[0, 1\]/);
      expect(() => new MajorityJudge({ minShare: Number.NaN })).to.throw(/minShare/);
    });

    it('all invalid → every solver turn null', () => {
      const group = solverGroup([bad(), bad(), bad()]);
      expect(judge.score(group)).to.deep.equal([[null], [null], [null]]);
    });

    it("other roles' turns get null and do not vote", () => {
      // The proposer's two '7's would outvote the solvers' '5' if they counted.
      const group = [
        episode([{ role: 'proposer', text: '7' }, ans('5')], undefined, 0),
        episode([{ role: 'proposer', text: '7' }, ans('5')], undefined, 1),
        episode([{ role: 'proposer', text: '7' }, ans('3')], undefined, 2),
      ];
      expect(judge.score(group)).to.deep.equal([
        [null, 1],
        [null, 1],
        [null, 0],
      ]);
    });

    it('votes with the configured role instead', () => {
      const group = [episode([{ role: 'proposer', text: '7' }, ans('5')], undefined, 0)];
      expect(new MajorityJudge({ role: 'proposer' }).score(group)).to.deep.equal([[1, null]]);
      // each role votes in its own comparison group: the proposer's '7' and the solver's '5' both win theirs
      expect(new MajorityJudge({ role: ['proposer', 'solver'] }).score(group)).to.deep.equal([[1, 1]]);
    });

    it('never reads task.answer', () => {
      const group = solverGroup([ans('4'), ans('4'), ans('5')]); // TASK.answer is '5'
      expect(judge.score(group)).to.deep.equal([[1], [1], [0]]);
    });

    it('votes in each comparison group of a mixed batch on its own', () => {
      const batch = [
        ...solverGroup([ans('5'), ans('5'), ans('4')]),
        ...solverGroup([ans('4'), ans('3'), ans('4')]).map((e, i) => ({ ...e, id: `o${i}`, group: 'other' })),
      ];
      expect(judge.score(batch)).to.deep.equal([[1], [1], [0], [1], [0], [1]]);
    });

    it('votes among the attempts of one episode when the arena names that scope, with maxShare', () => {
      const ep = (id: string, texts: string[]) => ({
        id,
        group: 'g',
        task: { id: 'seed', family: 'arithmetic', prompt: '' },
        turns: texts.map((t, i) => ({ ...turnOf(ans(t), i), compare: 'episode' as const })),
      });
      const batch = [ep('a', ['5', '5', '4']), ep('b', ['4', '4', '4'])];
      expect(judge.score(batch)).to.deep.equal([
        [1, 1, 0],
        [1, 1, 1],
      ]);
      // R-Zero's band: a unanimous vote (share 1 > 0.8) teaches nothing, so it abstains
      expect(new MajorityJudge({ minShare: 0.3, maxShare: 0.8 }).score(batch)).to.deep.equal([
        [1, 1, 0],
        [null, null, null],
      ]);
    });
  });
});
