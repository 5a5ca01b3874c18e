import { expect } from 'chai';
import { scoredNow } from '../judges/fixtures.js';
import { makeArena, makeJudge } from '../../src/registry.js';
import { scriptedTurn } from './scripted.js';
import { firstValueFrom, toArray } from 'rxjs';
import { JudgeArena, playGroups, type ArenaContext } from '../../arenas/index.js';
import { JudgeRole, SolverRole } from '../../roles/index.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';

/** A context whose solver writes the answers of `answers` in turn and whose judge says what `judge` says. */
function scripted(
  answers: string[],
  judge: (shown: string[], n: number) => string,
): ArenaContext & { shown: string[][] } {
  const roles = { solver: new SolverRole((o) => arithmetic.parseAnswer(o)), judge: new JudgeRole() };
  const shown: string[][] = [];
  let a = 0,
    j = 0;
  return {
    shown,
    async act(r, observation, options) {
      const isJudge = r === 'judge';
      const seen = (observation.answers as string[] | undefined) ?? [];
      if (isJudge) shown.push(seen);
      const text = isJudge ? judge(seen, j++) : answers[a++ % answers.length];
      const turn: Turn = scriptedTurn(r, text, roles[r as 'solver' | 'judge'].parse(text, observation));
      if (options?.compare) turn.compare = options.compare;
      if (options?.task) turn.task = options.task;
      return turn;
    },
  };
}

const task = { id: 't1', family: 'arithmetic', prompt: '2+3=', answer: '5' };
const play = async (arena: JudgeArena, ctx: ArenaContext, tasks: Task[] = [task]): Promise<Episode[]> =>
  firstValueFrom(playGroups(arena, tasks, 1, ctx).pipe(toArray()));

describe('judge arena', () => {
  it('pairwise: a right and a wrong answer of the solver in both orders, the truth filed with each verdict, rewarded by the verdict judge', async () => {
    const arena = new JudgeArena({ candidates: 3, verdicts: 2 }, arithmetic);
    // the judge always picks the answer '5', wherever it is shown
    const ctx = scripted(['6', '5', 'x'], (shown) => (shown[0] === '5' ? 'A' : 'B'));
    const [e] = await play(arena, ctx);
    expect(e.turns.map((t) => t.role)).to.deep.equal([
      'solver',
      'solver',
      'solver',
      'judge',
      'judge',
      'judge',
      'judge',
    ]);
    // shown: the right answer '5' with the first wrong one '6', each order twice
    expect(ctx.shown.map((s) => s.join(',')).sort()).to.deep.equal(['5,6', '5,6', '6,5', '6,5']);
    const verdicts = e.turns.filter((t) => t.role === 'judge');
    for (const t of verdicts) {
      expect(t.compare).to.equal('episode');
      expect(t.task!.answer).to.equal(t.task!.id.endsWith('/AB') ? 'A' : 'B');
    }
    const rewards = scoredNow(makeJudge('verdict'), [e])[0];
    expect(rewards.slice(0, 3)).to.deep.equal([null, null, null]);
    expect(rewards.slice(3)).to.deep.equal([1, 1, 1, 1]);
    expect(arena.metrics([e])).to.deep.equal({
      'judge/judged_share': 1,
      'judge/accuracy': 1,
      'judge/valid_rate': 1,
      'judge/f1': 1,
      'judge/position_consistency': 1,
      'judge/constant_verdict': 0, // it follows the truth
    });
  });

  it('a judge that always says A is half right, position-inconsistent every time, and its F1 shows the bias', async () => {
    const arena = new JudgeArena({ candidates: 2, verdicts: 1 }, arithmetic);
    const episodes = await play(
      arena,
      scripted(['5', '7'], () => 'A'),
      [task, { ...task, id: 't2' }],
    );
    const m = arena.metrics(episodes);
    expect(m['judge/accuracy']).to.equal(0.5);
    expect(m['judge/position_consistency']).to.equal(0);
    // 'A': precision 1/2, recall 1 -> 2/3; 'B': never said -> 0; the mean 1/3
    expect(m['judge/f1']).to.be.closeTo(1 / 3, 1e-12);
    // an output that is no verdict is invalid and earns the invalid reward
    const [bad] = await play(
      arena,
      scripted(['5', '7'], () => 'maybe'),
    );
    expect(bad.turns.filter((t) => t.role === 'judge').every((t) => !t.action.valid)).to.equal(true);
    expect(scoredNow(makeJudge('verdict', { invalid: -1 }), [bad])[0].slice(2)).to.deep.equal([-1, -1]);
  });

  it('answers all right (or all wrong) give nothing to judge; pointwise judges the right and the wrong one alone', async () => {
    const pairwise = new JudgeArena({ candidates: 2 }, arithmetic);
    const [e] = await play(
      pairwise,
      scripted(['5', '5'], () => 'A'),
    );
    expect(e.turns.every((t) => t.role === 'solver')).to.equal(true);
    expect(pairwise.metrics([e])).to.deep.equal({ 'judge/judged_share': 0 });
    const [none] = await play(
      new JudgeArena({ mode: 'pointwise', candidates: 2 }, arithmetic),
      scripted(['7', '8'], () => 'n'),
    );
    expect(none.turns.every((t) => t.role === 'solver')).to.equal(true);
    const pointwise = new JudgeArena({ mode: 'pointwise', candidates: 2, verdicts: 1 }, arithmetic);
    const ctx = scripted(['9', '5'], (shown) => (shown[0] === '5' ? 'y' : 'y'));
    const [p] = await play(pointwise, ctx);
    expect(ctx.shown.map((s) => s.join(',')).sort()).to.deep.equal(['5', '9']);
    const truths = p.turns
      .filter((t) => t.role === 'judge')
      .map((t) => `${t.task!.id.split('/')[1]}:${t.task!.answer}`)
      .sort();
    expect(truths).to.deep.equal(['right:y', 'wrong:n']);
    // 'y' to everything: half right, and it never flags the wrong answer (F1 of 'n' is 0)
    expect(pointwise.metrics([p])).to.include({ 'judge/accuracy': 0.5, 'judge/f1': 0, 'judge/pair_accuracy': 0 });
    // a judge that tells them apart gets the pair; the task's answer is 5
    const [q] = await play(
      pointwise,
      scripted(['9', '5'], (shown) => (shown[0] === '5' ? 'y' : 'n')),
    );
    expect(pointwise.metrics([q])).to.include({ 'judge/accuracy': 1, 'judge/f1': 1, 'judge/pair_accuracy': 1 });
  });

  it('plant: a one-digit slip of a right answer stands in for the wrong one, so even a task the solver always gets right is judged', async () => {
    const big = { id: 't3', family: 'arithmetic', prompt: '57+48=', answer: '105' };
    const arena = new JudgeArena({ mode: 'pointwise', candidates: 2, verdicts: 1, plant: 1 }, arithmetic);
    const tasks = Array.from({ length: 40 }, (_, i) => ({ ...big, id: `t${i}` }));
    const ctx = scripted(['105'], () => 'y');
    const episodes = await play(arena, ctx, tasks);
    expect(arena.metrics(episodes)['judge/judged_share']).to.equal(1);
    const wrong = ctx.shown.map((s) => s[0]).filter((w) => w !== '105');
    expect(wrong).to.have.length(40);
    for (const w of wrong) {
      expect(w).to.match(/^[1-9]\d\d$/); // no leading zero, same length
      expect([...w].filter((ch, i) => ch !== '105'[i])).to.have.length(1);
    }
    // slips land in every digit, not only the last
    expect(new Set(wrong.map((w) => [...w].findIndex((ch, i) => ch !== '105'[i])))).to.deep.equal(new Set([0, 1, 2]));
    expect(() => new JudgeArena({ plant: 2 }, arithmetic)).to.throw(
      /arena\.options\.plant: expected a number <= 1, received 2/,
    );
  });

  it("slip 'adjacent': the planted digit moves one up or down, in every place, never to a leading zero", async () => {
    const big = { id: 't3', family: 'arithmetic', prompt: '57+48=', answer: '105' };
    const arena = new JudgeArena(
      { mode: 'pointwise', candidates: 2, verdicts: 1, plant: 1, slip: 'adjacent' },
      arithmetic,
    );
    const ctx = scripted(['105'], () => 'y');
    await play(
      arena,
      ctx,
      Array.from({ length: 60 }, (_, i) => ({ ...big, id: `t${i}` })),
    );
    const wrong = new Set(ctx.shown.map((s) => s[0]).filter((w) => w !== '105'));
    // 1 can only go to 2 (0 would lead), 0 only to 1, 5 to 4 or 6
    expect(wrong).to.deep.equal(new Set(['205', '115', '104', '106']));
    expect(() => new JudgeArena({ slip: 'far' }, arithmetic)).to.throw(
      /arena\.options\.slip: expected one of "any", "adjacent", received "far"/,
    );
  });

  it('solveFirst: the judge answers the task alone, then judges the shown answer beside its own; the verdict judge pays both', async () => {
    const arena = new JudgeArena({ mode: 'pointwise', candidates: 2, verdicts: 1, solveFirst: true }, arithmetic);
    const ctx = scripted(['9', '5'], (shown) => (shown.length === 0 ? '5' : shown[0] === '5' ? 'y' : 'n'));
    const seen: unknown[] = [];
    const [e] = await play(arena, { act: (r, o, opt) => (seen.push(o.working), ctx.act(r, o, opt)) });
    const judge = e.turns.filter((t) => t.role === 'judge');
    // each verdict follows the judge's own answer, in a comparison group of its own
    expect(
      judge.map((t) => `${t.compare}:${t.task!.id.split('/').slice(1).join('/')}:${t.task!.answer}:${t.text}`).sort(),
    ).to.deep.equal([
      'episode:own:right/own:5:5',
      'episode:own:wrong/own:5:5',
      'episode:right:y:y',
      'episode:wrong:n:n',
    ]);
    // the verdict is asked with the judge's own answer as its working
    expect(seen.filter((w) => w !== undefined)).to.deep.equal(['5', '5']);
    expect(new JudgeRole().render({ task, working: '5', answers: ['9'] })).to.equal('2+3=5|9?');
    expect(scoredNow(makeJudge('verdict'), [e])[0].slice(2)).to.deep.equal([1, 1, 1, 1]);
    expect(arena.metrics([e])).to.include({ 'judge/accuracy': 1, 'judge/own_accuracy': 1, 'judge/pair_accuracy': 1 });
    // a wrong own answer costs its own turn, not the verdict's
    const [w] = await play(
      arena,
      scripted(['9', '5'], (shown) => (shown.length === 0 ? '6' : 'y')),
    );
    expect(arena.metrics([w])).to.include({ 'judge/accuracy': 0.5, 'judge/own_accuracy': 0 });
    expect(() => new JudgeArena({ solveFirst: true }, arithmetic)).to.throw(/solveFirst: needs mode 'pointwise'/);
  });

  it("answers 'fixed': no solver; each task judged on its answer and a one-digit slip of it, the same slip every time, half right", async () => {
    const tasks = Array.from({ length: 30 }, (_, i) => ({
      id: `h${i}`,
      family: 'arithmetic',
      prompt: `${40 + i}+${17 + i}=`,
      answer: String(57 + 2 * i),
    }));
    const pointwise = new JudgeArena(
      { mode: 'pointwise', verdicts: 1, solveFirst: true, answers: 'fixed' },
      arithmetic,
    );
    // a judge that solves right and compares: its own sum, then y exactly when the shown one matches
    const sums = new Map(tasks.map((t) => [t.prompt, t.answer]));
    const judging = (lie: (prompt: string) => boolean) => {
      const ctx = scripted([], () => '');
      let prompt = '';
      return {
        shown: ctx.shown,
        act: (r: string, o: Parameters<ArenaContext['act']>[1], opt?: Parameters<ArenaContext['act']>[2]) => {
          prompt = o.task.prompt;
          const answers = (o.answers as string[] | undefined) ?? [];
          const own = lie(prompt) ? '1' : sums.get(prompt)!;
          const say = answers.length === 0 ? own : answers[0] === o.working ? 'y' : 'n';
          return scripted([], () => say).act(r, o, opt);
        },
      } as ArenaContext & { shown: string[][] };
    };
    const episodes = await play(
      pointwise,
      judging(() => false),
      tasks,
    );
    expect(episodes.every((e) => e.turns.every((t) => t.role === 'judge'))).to.equal(true);
    const verdicts = episodes.flatMap((e) => e.turns.filter((t) => t.compare === 'episode'));
    expect(verdicts).to.have.length(60);
    expect(verdicts.filter((t) => t.task!.answer === 'y')).to.have.length(30);
    const m = pointwise.metrics(episodes);
    expect(m).to.include({
      'judge/judged_share': 1,
      'judge/accuracy': 1,
      'judge/own_accuracy': 1,
      'judge/pair_accuracy': 1,
    });
    // a judge whose own sum is wrong on a third of the tasks says n to both answers there: right on half of those verdicts
    const third = await play(
      pointwise,
      judging((p) => Number(p.split('+')[0]) % 3 === 0),
      tasks,
    );
    expect(pointwise.metrics(third)['judge/accuracy']).to.be.closeTo(1 - 10 / 60, 1e-12);
    // the wrong answers: one digit changed, drawn from the task id, the same in every play
    const wrongOf = async () => {
      const wrong: [string, string][] = [];
      const ctx = scripted([], (shown, n) => (n % 2 === 0 ? 'y' : 'n'));
      const arena = new JudgeArena({ mode: 'pointwise', verdicts: 1, answers: 'fixed' }, arithmetic);
      await play(
        arena,
        {
          act: (r, o, opt) => {
            const shown = (o.answers as string[])[0];
            if (shown !== o.task.answer) wrong.push([o.task.answer!, shown]);
            return ctx.act(r, o, opt);
          },
        },
        tasks,
      );
      return wrong;
    };
    const wrong = await wrongOf();
    expect(wrong).to.have.length(30);
    expect(await wrongOf()).to.deep.equal(wrong);
    for (const [right, w] of wrong) {
      expect(w).to.have.length(right.length);
      expect(
        [...w].filter((ch, k) => ch !== right[k]),
        `${w} against ${right}`,
      ).to.have.length(1);
    }
    expect(new Set(wrong.map(([right, w]) => [...w].findIndex((ch, k) => ch !== right[k])))).to.deep.equal(
      new Set([0, 1, 2]),
    );
    // pairwise: both orders of the pair, so position consistency is measured on the fixed set too
    const pairwise = new JudgeArena({ verdicts: 1, answers: 'fixed' }, arithmetic);
    const always = await play(
      pairwise,
      scripted([], () => 'A'),
      tasks,
    );
    expect(pairwise.metrics(always)).to.include({ 'judge/accuracy': 0.5, 'judge/position_consistency': 0 });
    expect(() => new JudgeArena({ mode: 'pointwise', judgeAll: true, answers: 'fixed' }, arithmetic)).to.throw(
      /answers: 'fixed' judges the task's answer and a slip of it/,
    );
    const [none] = await play(
      pairwise,
      scripted([], () => 'A'),
      [{ id: 't1', family: 'arithmetic', prompt: '2+3=' }],
    ).catch((e: Error) => [e]);
    expect(String(none)).to.match(/answers 'fixed' needs task t1's answer/);
  });

  it('checks its options by name, and is known to configs', () => {
    expect(() => new JudgeArena({ mode: 'listwise' }, arithmetic)).to.throw(
      /arena\.options\.mode: expected one of "pairwise", "pointwise"/,
    );
    expect(() => new JudgeArena({ candidates: 1 }, arithmetic)).to.throw(/arena\.options\.candidates: at least 2/);
    expect(() => new JudgeArena({ judges: 2 }, arithmetic)).to.throw(
      /arena\.options\.judges: unrecognized key; known: mode, candidates, verdicts/,
    );
    expect(makeArena('judge', {}, arithmetic).roles).to.deep.equal({ solver: 'solver', judge: 'judge' });
  });
});
