import { expect } from 'chai';
import { scoredNow } from '../judges/fixtures.js';
import { makeArena, makeJudge } from '../../src/registry.js';
import { scriptedTurn } from './scripted.js';
import { firstValueFrom, toArray } from 'rxjs';
import { JudgeArena, PeerArena, playGroups, type ArenaContext } from '../../arenas/index.js';
import { JudgeRole, SolverRole } from '../../roles/index.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';

/** Solvers answer from `answers[role]` in turn; every judge role says `judge(role, shownAnswer)`. */
function scripted(answers: Record<string, string[]>, judge: (role: string, shown: string) => string): ArenaContext {
  const [solver, judgeRole] = [new SolverRole((o) => arithmetic.parseAnswer(o)), new JudgeRole()];
  const next: Record<string, number> = {};
  return {
    async act(r, observation, options) {
      const isJudge = r.endsWith('judge');
      const text = isJudge
        ? judge(r, (observation.answers as string[])[0])
        : answers[r][(next[r] = (next[r] ?? -1) + 1) % answers[r].length];
      const turn: Turn = scriptedTurn(r, text, (isJudge ? judgeRole : solver).parse(text, observation));
      if (options?.compare) turn.compare = options.compare;
      if (options?.task) turn.task = options.task;
      return turn;
    },
  };
}

const task: Task = { id: 't1', family: 'arithmetic', prompt: '2+3=', answer: '5' };
const play = async (arena: PeerArena | JudgeArena, ctx: ArenaContext, tasks = [task]): Promise<Episode[]> =>
  firstValueFrom(playGroups(arena, tasks, 1, ctx).pipe(toArray()));

describe('peer arena', () => {
  it('each answer is judged by every other agent, never its author; the peer judge pays the share of yes', async () => {
    const arena = new PeerArena({ peers: 3, answers: 1 }, arithmetic);
    expect(Object.keys(arena.roles)).to.deep.equal([
      'peer0',
      'peer0-judge',
      'peer1',
      'peer1-judge',
      'peer2',
      'peer2-judge',
    ]);
    // peer0 answers right, peer1 wrong, peer2 writes no number; peer0's judge judges truly, the others say yes to everything
    const ctx = scripted({ peer0: ['5'], peer1: ['6'], peer2: ['x'] }, (r, shown) =>
      r !== 'peer0-judge' || shown === '5' ? 'y' : 'n',
    );
    const [e] = await play(arena, ctx);
    const verdicts = e.turns.filter((t) => t.role.endsWith('judge'));
    // two valid answers, two verdicts each, none by the author
    expect(verdicts.map((t) => `${t.role}>${t.task!.id}`).sort()).to.deep.equal([
      'peer0-judge>t1/peer1/0',
      'peer1-judge>t1/peer0/0',
      'peer2-judge>t1/peer0/0',
      'peer2-judge>t1/peer1/0',
    ]);
    const rewards = scoredNow(makeJudge('peer', { role: ['peer0', 'peer1', 'peer2'], invalid: -1 }), [e])[0];
    const byRole = Object.fromEntries(
      e.turns.map((t, i) => [t.role + (t.role.endsWith('judge') ? `>${t.task!.id}` : ''), rewards[i]]),
    );
    expect([byRole.peer0, byRole.peer1, byRole.peer2]).to.deep.equal([1, 0.5, -1]);
    expect(byRole['peer0-judge>t1/peer1/0']).to.equal(null);
    const m = arena.metrics([e]);
    expect(m['peer/accuracy']).to.be.closeTo(1 / 3, 1e-12);
    expect(m['peer/0/accuracy']).to.equal(1);
    expect(m['peer/yes_rate']).to.equal(0.75);
    expect(m['peer/judge_accuracy']).to.equal(0.75);
    expect(m['peer/agreement']).to.equal(0.5); // on peer0's answer both said y; on peer1's, y and n
    expect(m['peer/reward_truth_corr']).to.be.closeTo(1, 1e-12); // right answer 1, wrong 0.5
    expect(m['peer/judge_valid_rate']).to.equal(1);
  });

  it('judges that stop writing a verdict show as a falling judge valid rate, not as a judge accuracy', async () => {
    const arena = new PeerArena({ peers: 2, answers: 1 }, arithmetic);
    const [e] = await play(
      arena,
      scripted({ peer0: ['5'], peer1: ['6'] }, (r) => (r === 'peer0-judge' ? 'n' : '99')),
    );
    const m = arena.metrics([e]);
    expect(m['peer/judge_valid_rate']).to.equal(0.5);
    expect(m['peer/judge_accuracy']).to.equal(1); // the one verdict written: 'n' on the wrong 6
  });

  it('a peer that says yes to everything makes peer reward blind to the truth: the correlation shows it', async () => {
    const arena = new PeerArena({ peers: 2, answers: 2 }, arithmetic);
    const tasks = [task, { ...task, id: 't2' }];
    const episodes = await play(
      arena,
      scripted({ peer0: ['5', '6'], peer1: ['7', '5'] }, () => 'y'),
      tasks,
    );
    const m = arena.metrics(episodes);
    expect(m['peer/yes_rate']).to.equal(1);
    expect(m['peer/judge_accuracy']).to.equal(0.5);
    expect(m).to.not.have.property('reward_truth_corr'); // every reward is 1: no correlation to speak of
    expect(() => makeArena('peer', { peers: 1 }, arithmetic)).to.throw(/arena\.options\.peers: from 2 to 8/);
  });
});

describe('a judge in the loop', () => {
  it('judgeAll: every valid answer is judged under its own id; the solver earns the judge verdicts, the judge the truth of one right and one wrong', async () => {
    const arena = new JudgeArena({ mode: 'pointwise', candidates: 4, verdicts: 2, judgeAll: true }, arithmetic);
    // the judge calls every answer right; the first answer does not parse, so the taught wrong one is the first valid wrong one
    const [e] = await play(
      arena,
      scripted({ solver: ['x', '5', '6', '7'] }, () => 'y'),
    );
    const solver = scoredNow(makeJudge('peer'), [e])[0];
    const judge = scoredNow(makeJudge('verdict'), [e])[0];
    const rows = e.turns.map((t, i) => [t.role, t.task!.id, t.task!.answer ?? '', solver[i], judge[i]]);
    expect(rows).to.deep.equal([
      ['solver', 't1/a0', '5', 0, null],
      ['solver', 't1/a1', '5', 1, null],
      ['solver', 't1/a2', '5', 1, null],
      ['solver', 't1/a3', '5', 1, null],
      ['judge', 't1/a1', 'y', null, 1],
      ['judge', 't1/a1', 'y', null, 1],
      ['judge', 't1/a2', 'n', null, 0],
      ['judge', 't1/a2', 'n', null, 0],
      // judged, so it pays the solver, but it carries no truth: the judge learns nothing from it (balanced truths)
      ['judge', 't1/a3', '', null, null],
      ['judge', 't1/a3', '', null, null],
    ]);
    expect(arena.metrics([e])).to.include({ 'judge/accuracy': 0.5 });
    expect(() => new JudgeArena({ judgeAll: true }, arithmetic)).to.throw(/judgeAll: needs mode 'pointwise'/);
    expect(() => new JudgeArena({ mode: 'pointwise', judgeAll: true, negative: 'last' }, arithmetic)).to.throw(
      /arena\.options\.negative: expected one of "first", "fooling", received "last"/,
    );
  });

  it('judgeAll with plant: where every answer is right, a slip of one is judged beside it to teach the judge, paying no solver', async () => {
    // the judge says 'y' to everything, so the planted slip's verdicts are wrong
    const rows = async (plant: number, solver: string[]) => {
      const arena = new JudgeArena(
        { mode: 'pointwise', candidates: 2, verdicts: 2, judgeAll: true, plant },
        arithmetic,
      );
      const [e] = await play(
        arena,
        scripted({ solver }, () => 'y'),
      );
      const [paid, taught] = [scoredNow(makeJudge('peer'), [e])[0], scoredNow(makeJudge('verdict'), [e])[0]];
      return e.turns.map((t, i) => `${t.role} ${t.task!.id} ${t.task!.answer ?? '-'} ${paid[i]} ${taught[i]}`);
    };
    const planted = await rows(1, ['5', '5']);
    expect(planted.slice(0, 6)).to.deep.equal([
      'solver t1/a0 5 1 null',
      'solver t1/a1 5 1 null',
      'judge t1/a0 y null 1',
      'judge t1/a0 y null 1',
      'judge t1/a1 - null null',
      'judge t1/a1 - null null',
    ]);
    expect(planted.slice(6)).to.deep.equal(['judge t1/planted n null 0', 'judge t1/planted n null 0']);
    // no plant: all right, nothing to teach with; a solver's own wrong answer: no slip planted beside it
    expect((await rows(0, ['5', '5'])).filter((r) => r.startsWith('judge'))).to.deep.equal([
      'judge t1/a0 - null null',
      'judge t1/a0 - null null',
      'judge t1/a1 - null null',
      'judge t1/a1 - null null',
    ]);
    expect((await rows(1, ['5', '6'])).filter((r) => r.includes('planted'))).to.deep.equal([]);
  });

  it("negative 'fooling': the wrong answer that drew the most 'y' teaches the judge, not the first", async () => {
    // the judge is fooled by 7 alone
    const ctx = () => scripted({ solver: ['5', '6', '7'] }, (_, shown) => (shown === '5' || shown === '7' ? 'y' : 'n'));
    const truths = async (negative: string) => {
      const [e] = await play(
        new JudgeArena({ mode: 'pointwise', candidates: 3, verdicts: 2, judgeAll: true, negative }, arithmetic),
        ctx(),
      );
      return e.turns.filter((t) => t.role === 'judge').map((t) => `${t.task!.id}:${t.task!.answer ?? '-'}`);
    };
    expect(await truths('fooling')).to.deep.equal(['t1/a0:y', 't1/a0:y', 't1/a1:-', 't1/a1:-', 't1/a2:n', 't1/a2:n']);
    expect(await truths('first')).to.deep.equal(['t1/a0:y', 't1/a0:y', 't1/a1:n', 't1/a1:n', 't1/a2:-', 't1/a2:-']);
  });
});
