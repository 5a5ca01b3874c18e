import { expect } from 'chai';
import { scoredNow } from '../judges/fixtures.js';
import { makeArena, makeJudge } from '../../src/registry.js';
import { scriptedTurn } from './scripted.js';
import { firstValueFrom, toArray } from 'rxjs';
import { AdversarialCriticArena, playGroups, type ArenaContext } from '../../arenas/index.js';
import { firstRejected } from '../../arenas/critic/index.js';
import { CriticRole, SneakyRole } from '../../roles/index.js';
import type { Observation } from '../../src/core/role.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import { comparisonGroup } from '../../src/core/groups.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import {
  firstWrongStep,
  plantError,
  rightResults,
  scratchpadTarget,
  stepResults,
  sumOperands,
} from '../../src/tasks/scratchpad.js';
import { hashText } from '../../src/util/hash.js';
import { Rng } from '../../src/util/rng.js';

/** A context whose sneaky role writes `sneaky(shownWorking)` and whose critic says `critic(shownWorking)`. */
function scripted(
  sneaky: (right: string) => string,
  critic: (working: string) => string,
): ArenaContext & { shown: Map<string, string> } {
  const roles = { sneaky: new SneakyRole((o) => arithmetic.parseAnswer(o)), critic: new CriticRole() };
  const shown = new Map<string, string>();
  return {
    shown,
    async act(r, observation, options) {
      const working =
        (observation.working as string | undefined) ??
        scratchpadTarget(sumOperands(observation.task.prompt)!, new Rng(hashText(observation.task.id)));
      const text = r === 'sneaky' ? sneaky(working) : critic(working);
      if (r === 'critic') shown.set(options!.task!.id, working);
      const turn: Turn = scriptedTurn(r, text, roles[r as 'sneaky' | 'critic'].parse(text, observation));
      if (options?.compare) turn.compare = options.compare;
      if (options?.task) turn.task = options.task;
      return turn;
    },
  };
}

const task: Task = { id: 't1', family: 'arithmetic', prompt: '12+34+56=', answer: '102' };
const play = async (
  arena: AdversarialCriticArena,
  ctx: ArenaContext,
  tasks: Task[] = [task],
  group = 1,
): Promise<Episode[]> => firstValueFrom(playGroups(arena, tasks, group, ctx).pipe(toArray()));
/** A critic that checks each step's sum (not the operands): a perfect critic for slips in a sum. */
const checksSums = (working: string) =>
  String(
    working.split(',').findIndex((s) => {
      const [a, b, c] = s.split(/[+=]/).map(Number);
      return a + b !== c;
    }) + 1,
  );
/**
 * A critic that checks first (its check solves on rightly from the shown first step, or with
 * `copy` writes the shown results), each step answered by `answer`; `acted` lists who acted at
 * which stage. It answers as whichever role it is asked as (the critic, or a checker).
 */
function checking(answer: (ob: Observation) => string, copy = false): ArenaContext & { acted: string[] } {
  const acted: string[] = [];
  return {
    acted,
    async act(r, ob, options) {
      acted.push(`${r}:${ob.stage ?? 'step'}`);
      const sums = copy
        ? stepResults(ob.working as string)!.map(Number)
        : rightResults(sumOperands(ob.task.prompt)!, ob.working as string)!
            .split(',')
            .map(Number);
      const text =
        ob.stage === 'check'
          ? [sums[0], ...sums.slice(1).map((x, i) => `${sums[i]}+${x - sums[i]}=${x}`)].join(',')
          : (options?.given ?? answer(ob));
      return {
        ...scriptedTurn(r, text, new CriticRole().parse(text, ob)),
        compare: options!.compare,
        task: options!.task,
        ...(options?.given !== undefined ? { given: true } : {}),
      } as Turn;
    },
  };
}
/** A step answer that compares the check's result with the shown one. */
const agrees = (ob: Observation) =>
  (ob.check as string).split(',')[(ob.step as number) - 1] ===
  stepResults(ob.working as string)![(ob.step as number) - 1]
    ? 'y'
    : 'n';

describe('step checker', () => {
  it('names the first step that adds wrongly, breaks the chain, or uses an operand twice or not at all', () => {
    const ops = sumOperands('12+34+56=')!;
    expect(ops).to.deep.equal([12, 34, 56]);
    expect(sumOperands('12*3=')).to.equal(null);
    expect(firstWrongStep(ops, '12+56=68,68+34=102')).to.deep.equal({ first: 0 });
    expect(firstWrongStep(ops, '12+56=69,69+34=103')).to.deep.equal({ first: 1 });
    expect(firstWrongStep(ops, '12+56=68,67+34=101')).to.deep.equal({ first: 2 });
    expect(firstWrongStep(ops, '12+12=24,24+34=58')).to.deep.equal({ first: 1 });
    expect(firstWrongStep(ops, '12+56=68,68+35=103')).to.deep.equal({ first: 2 });
    expect(firstWrongStep(ops, '12+56=68'))
      .to.have.property('error')
      .that.matches(/2 steps, got 1/);
    expect(firstWrongStep(ops, '12+56=68,x'))
      .to.have.property('error')
      .that.matches(/step 2/);
    // a planted slip: only that step is wrong, the rest follows from it
    expect(plantError('12+56=68,68+34=102', 1, 78)).to.equal('12+56=78,78+34=112');
    expect(firstWrongStep(ops, plantError('12+56=68,68+34=102', 2, 92))).to.deep.equal({ first: 2 });
    expect(() => plantError('12+56=68,68+34=102', 2, 102)).to.throw(/different/);
  });
});

describe('adversarial-critic arena', () => {
  it('zero-sum: a sneaky slip the critic misses wins +1; the verdict judge scores the critic +1/-1 on both showings', async () => {
    const arena = new AdversarialCriticArena({ verdicts: 2 }, arithmetic);
    expect(arena.roles).to.deep.equal({ sneaky: 'sneaky', critic: 'critic' });
    // the sneaky role slips in the last step; the critic always says '0' (no error)
    const sneaky = (right: string) => right.replace(/=(\d+)$/, (_, c) => `=${Number(c) + 1}`);
    const [e] = await play(
      arena,
      scripted(sneaky, () => '0'),
    );
    expect(e.turns.map((t) => t.role)).to.deep.equal(['sneaky', 'critic', 'critic', 'critic', 'critic']);
    expect(e.turns[0].compare).to.equal('group');
    const truths = e.turns
      .slice(1)
      .map((t) => `${t.task!.id.split('/')[1]}:${t.task!.answer}`)
      .sort();
    expect(truths).to.deep.equal(['planted:2', 'planted:2', 'right:0', 'right:0']);
    expect(e.outcome).to.deep.equal({ sneaky: 1 });
    const critic = scoredNow(makeJudge('verdict', { role: 'critic', wrong: -1, invalid: -1 }), [e])[0];
    const byShowing = e.turns.map((t, i) => [t.task?.id.split('/')[1], critic[i]]);
    expect(byShowing.filter(([s]) => s === 'planted').map(([, r]) => r)).to.deep.equal([-1, -1]);
    expect(byShowing.filter(([s]) => s === 'right').map(([, r]) => r)).to.deep.equal([1, 1]);
    expect(scoredNow(makeJudge('outcome', { role: 'sneaky' }), [e])[0][0]).to.equal(1);
    expect(arena.metrics([e])).to.deep.equal({
      'critic/accuracy': 0.5,
      'critic/valid_rate': 1,
      'critic/planted_accuracy': 0,
      'critic/right_accuracy': 1,
      'sneaky/valid_rate': 1,
      'sneaky/win_rate': 1,
      'planted/one_digit': 1,
      'planted/many_digits': 0,
      'planted/length': 0,
      'critic/found/one_digit': 0,
      'critic/constant_verdict': 1, // '0' to everything
    });
    // a critic that checks every sum finds the slip: the sneaky role loses -1
    const [caught] = await play(arena, scripted(sneaky, checksSums));
    expect(caught.outcome).to.deep.equal({ sneaky: -1 });
    expect(arena.metrics([caught])['critic/accuracy']).to.equal(1);
  });

  it('a sneaky attempt with no rule-confirmed error, or that is no working, is invalid, costs the penalty, and nobody is judged', async () => {
    const arena = new AdversarialCriticArena({ penalty: 0.5 }, arithmetic);
    for (const attempt of [(right: string) => right, () => '102', () => '12+56=68']) {
      const [e] = await play(
        arena,
        scripted(attempt, () => '0'),
      );
      expect(e.turns.map((t) => t.role)).to.deep.equal(['sneaky']);
      expect(e.turns[0].action.valid).to.equal(false);
      expect(e.outcome).to.deep.equal({ sneaky: -0.5 });
    }
  });

  it('environment corrupters: random numbers or carry slips, one wrong step each, only the critic acts; its verdicts must be a step', async () => {
    const tasks = Array.from({ length: 40 }, (_, i) => ({
      id: `t${i}`,
      family: 'arithmetic',
      prompt: `${10 + i}+${20 + 2 * i}+${30 + 3 * i}=`,
    }));
    for (const corrupter of ['random', 'slip'] as const) {
      const arena = new AdversarialCriticArena({ corrupter, verdicts: 1 }, arithmetic);
      expect(arena.roles).to.deep.equal({ critic: 'critic' });
      const ctx = scripted(() => '', checksSums);
      const episodes = await play(arena, ctx, tasks);
      expect(arena.metrics(episodes)['critic/accuracy']).to.equal(1);
      const planted = episodes.map((e) => e.turns.find((t) => t.task!.id.endsWith('/planted'))!);
      const steps = new Set(planted.map((t) => t.task!.answer));
      expect([...steps].sort()).to.deep.equal(['1', '2']);
      for (const e of episodes) {
        const p = e.turns.find((t) => t.task!.id.endsWith('/planted'))!;
        const [working, right] = [ctx.shown.get(`${e.task.id}/planted`)!, ctx.shown.get(`${e.task.id}/right`)!];
        expect(firstWrongStep(sumOperands(e.task.prompt)!, working)).to.deep.equal({ first: Number(p.task!.answer) });
        expect(firstWrongStep(sumOperands(e.task.prompt)!, right)).to.deep.equal({ first: 0 });
        const at = Number(p.task!.answer) - 1;
        const d = Math.abs(Number(working.split(',')[at].split('=')[1]) - Number(right.split(',')[at].split('=')[1]));
        if (corrupter === 'slip') expect([1, 10]).to.include(d);
        else expect(d).to.be.greaterThan(0);
      }
    }
    // what was planted, by how the wrong result differs from the right one (68 for 12+56)
    const kinds = ['12+56=78,78+34=112', '12+56=99,99+34=133', '12+56=8,8+34=42', '12+56=69,69+34=103'].map(
      (planted, i) =>
        ({
          task: { prompt: '12+34+56=' },
          info: { planted, truth: '1', verdicts: { planted: i === 0 ? ['0', '0'] : ['1', i === 3 ? '0' : '1'] } },
          turns: [],
        }) as unknown as Episode,
    );
    const shares = new AdversarialCriticArena({ corrupter: 'random' }, arithmetic).metrics(kinds);
    expect([shares['planted/one_digit'], shares['planted/many_digits'], shares['planted/length']]).to.deep.equal([
      0.5, 0.25, 0.25,
    ]);
    // the tens digit (78 for 68) missed twice, the units (69) found once in two: one-digit errors found 1 in 4
    expect([
      shares['critic/found/one_digit'],
      shares['critic/found/many_digits'],
      shares['critic/found/length'],
    ]).to.deep.equal([0.25, 1, 1]);
    const [bad] = await play(
      new AdversarialCriticArena({ corrupter: 'slip', verdicts: 1 }, arithmetic),
      scripted(
        () => '',
        () => '7',
      ),
    );
    expect(bad.turns.every((t) => !t.action.valid && /0 \(none\) to 2/.test(t.action.error!))).to.equal(true);
  });

  it("checkFirst: the critic solves on from the first step, then judges with its results beside the shown ones; its checks are paid by right working's results", async () => {
    const ops = [12, 34, 56];
    expect(rightResults(ops, '12+56=69,69+34=103')).to.equal('68,102');
    expect(rightResults(ops, '12+56=68,67+34=101')).to.equal('68,102');
    expect(rightResults(ops, '12+56=68,68+35=103')).to.equal('68,102');
    expect(rightResults(ops, '56+34=90,90+12=102')).to.equal('90,102');
    expect(stepResults('12+56=68,x')).to.equal(null);
    const role = new CriticRole();
    const o = { task, working: '12+56=69,69+34=103', steps: 2 };
    expect(role.render({ ...o, stage: 'check' })).to.equal('12+34+56=12+56=');
    expect(role.parse('68,68+34=102', { ...o, stage: 'check' })).to.deep.include({ valid: true, value: '68,102' });
    expect(role.parse('68', { ...o, stage: 'check' }).valid).to.equal(false);
    expect(role.render({ ...o, check: '68,102' })).to.equal('12+34+56=12+56=68>69,69+34=102>103?');
    expect([role.maxNewTokens({ ...o, check: '68,102' }), role.maxNewTokens(o)]).to.deep.equal([2, undefined]);
    // a critic whose check is `solve(working)` and whose verdict is the first step where its results differ from the shown ones
    const critic = (solve: (working: string) => string): ArenaContext => ({
      async act(r, ob, options) {
        const text =
          ob.stage === 'check'
            ? solve(ob.working as string)
            : String(
                (ob.check as string).split(',').findIndex((x, i) => x !== stepResults(ob.working as string)![i]) + 1,
              );
        const turn: Turn = {
          ...scriptedTurn(r, text, role.parse(text, ob)),
          compare: options!.compare,
          task: options!.task,
        };
        return turn;
      },
    });
    const right = (working: string) => {
      const sums = rightResults(ops, working)!.split(',').map(Number);
      return [sums[0], ...sums.slice(1).map((x, k) => `${sums[k]}+${x - sums[k]}=${x}`)].join(',');
    };
    const arena = new AdversarialCriticArena({ corrupter: 'slip', verdicts: 2, checkFirst: true }, arithmetic);
    const [e] = await play(arena, critic(right));
    expect(e.turns.filter((t) => t.compare === 'episode:check')).to.have.length(4);
    expect(e.turns.filter((t) => t.compare === 'episode')).to.have.length(4);
    expect(arena.metrics([e])).to.deep.include({ 'critic/accuracy': 1, 'critic/check_accuracy': 1 });
    // the verdict judge pays each check by right working's results, as it pays each verdict by the truth
    const paid = scoredNow(makeJudge('verdict', { role: 'critic', wrong: -1, invalid: -1 }), [e])[0];
    expect(paid).to.deep.equal(e.turns.map(() => 1));
    // a check that says each step's shown result agrees with any working: it never finds the error
    const copying = await play(
      arena,
      critic((working) => {
        const rs = stepResults(working)!;
        return [rs[0], ...rs.slice(1).map((x, k) => `${rs[k]}+0=${x}`)].join(',');
      }),
    );
    expect(arena.metrics(copying)).to.deep.include({
      'critic/planted_accuracy': 0,
      'critic/right_accuracy': 1,
      'critic/check_accuracy': 0.5,
    });
  });

  it('perStep: after its check the critic says of each step alone whether its result agrees, paid per step; its verdict is the first step it rejects', async () => {
    const role = new CriticRole();
    const o = { task, working: '12+56=69,69+34=103', steps: 2, check: '68,102' };
    expect(role.render({ ...o, step: 2 })).to.equal('69+34=102>103?');
    expect(role.parse('n', { ...o, step: 2 })).to.deep.include({ valid: true, value: 'n' });
    expect(role.parse('1', { ...o, step: 2 }).valid).to.equal(false);
    expect(role.maxNewTokens({ ...o, step: 1 })).to.equal(2);
    // a critic whose check solves on rightly (or copies the shown results) and that says 'n' where its result differs
    const critic = (copy: boolean) => checking(agrees, copy);
    const arena = new AdversarialCriticArena(
      { corrupter: 'slip', verdicts: 2, checkFirst: true, perStep: true },
      arithmetic,
    );
    const tasks = Array.from({ length: 12 }, (_, i) => ({
      id: `s${i}`,
      family: 'arithmetic',
      prompt: `${10 + i}+${20 + 2 * i}+${30 + 3 * i}=`,
    }));
    const episodes = await play(arena, critic(false), tasks);
    const e = episodes[0];
    // per showing and verdict: one check and one answer per step, each step its own comparison group
    expect(e.turns.filter((t) => t.compare === 'episode:check')).to.have.length(4);
    expect(e.turns.filter((t) => t.compare === 'episode:step1')).to.have.length(4);
    expect(e.turns.filter((t) => t.compare === 'episode:step2')).to.have.length(4);
    expect(e.turns.some((t) => t.compare === 'episode')).to.equal(false);
    expect(arena.metrics(episodes)).to.deep.include({
      'critic/accuracy': 1,
      'critic/planted_accuracy': 1,
      'critic/right_accuracy': 1,
      'critic/step_accuracy': 1,
      'critic/check_accuracy': 1,
    });
    // a slip in step 1 makes step 2 disagree too: both are 'n', and the verdict is still step 1
    const slipped = episodes.find((x) => (x.info as { truth: string }).truth === '1')!;
    const planted = slipped.turns.filter((t) => /planted\/step/.test(t.task?.id ?? ''));
    expect(planted.map((t) => t.task!.answer)).to.deep.equal(['n', 'n', 'n', 'n']);
    expect((slipped.info as { verdicts: Record<string, string[]> }).verdicts.planted).to.deep.equal(['1', '1']);
    // the verdict judge pays each step's answer by that step's truth
    expect(scoredNow(makeJudge('verdict', { role: 'critic', wrong: -1, invalid: -1 }), [e])[0]).to.deep.equal(
      e.turns.map(() => 1),
    );
    // a check that copies the shown results agrees with every step: it finds no error
    const copying = await play(arena, critic(true), tasks);
    // it passes everything: one verdict whatever it is shown, which the collapse watch reads; the truthful critic gives none
    expect(arena.metrics(copying)).to.deep.include({
      'critic/planted_accuracy': 0,
      'critic/right_accuracy': 1,
      'critic/constant_verdict': 1,
    });
    expect(arena.metrics(episodes)['critic/constant_verdict']).to.equal(0);
    expect(() => new AdversarialCriticArena({ perStep: true }, arithmetic)).to.throw(/perStep: needs checkFirst/);
    expect(() => role.render({ ...o, step: 3 })).to.throw(/1 to 2, got 3/);
  });

  it("stepGroups 'showing': each step's answers are compared within one showing, GRPO's group of one prompt", async () => {
    // says 'y' to every step after a right check: right on right working, wrong on the planted step
    const yes = checking(() => 'y');
    const tasks = [{ id: 's0', family: 'arithmetic', prompt: '12+34+56=' }];
    const [pooled] = await play(
      new AdversarialCriticArena({ corrupter: 'slip', verdicts: 2, checkFirst: true, perStep: true }, arithmetic),
      yes,
      tasks,
    );
    const arena = new AdversarialCriticArena(
      { corrupter: 'slip', verdicts: 2, checkFirst: true, perStep: true, stepGroups: 'showing' },
      arithmetic,
    );
    const [e] = await play(arena, yes, tasks);
    const truth = (e.info as { truth: string }).truth;
    const groups = (x: typeof e) =>
      new Set(x.turns.filter((t) => t.compare !== 'episode:check').map((t) => comparisonGroup(x, t))).size;
    expect(groups(pooled)).to.equal(2);
    expect(groups(e)).to.equal(4);
    for (const showing of ['planted', 'right']) {
      const answers = e.turns.filter((t) => t.compare === `episode:${showing}:step${truth}`);
      expect(answers).to.have.length(2);
      expect(answers.every((t) => t.task!.id.includes(`/${showing}/`))).to.equal(true);
    }
    // the planted step's answers in a group of their own: both 'y', both wrong
    const rewards = scoredNow(makeJudge('verdict', { role: 'critic', wrong: -1, invalid: -1 }), [e])[0];
    const planted = e.turns.flatMap((t, i) => (t.compare === `episode:planted:step${truth}` ? [rewards[i]] : []));
    expect(planted).to.deep.equal([-1, -1]);
    expect(arena.metrics([e])['critic/step_accuracy'])
      .to.be.above(0)
      .and.below(1);
    expect(() => new AdversarialCriticArena({ checkFirst: true, stepGroups: 'showing' }, arithmetic)).to.throw(
      /stepGroups: applies to perStep/,
    );
  });

  it("checker: the role 'checker' writes every check, the critic only its step answers", async () => {
    const ctx = checking(agrees);
    const arena = new AdversarialCriticArena(
      { corrupter: 'slip', verdicts: 2, checkFirst: true, perStep: true, checker: true },
      arithmetic,
    );
    expect(arena.roles).to.deep.equal({ critic: 'critic', checker: 'critic' });
    const episodes = await play(arena, ctx, [{ id: 's0', family: 'arithmetic', prompt: '12+34+56=' }]);
    expect(new Set(ctx.acted)).to.deep.equal(new Set(['checker:check', 'critic:step']));
    expect(episodes[0].turns.filter((t) => t.role === 'checker')).to.have.length(4);
    expect(arena.metrics(episodes)).to.deep.include({
      'critic/check_accuracy': 1,
      'critic/planted_accuracy': 1,
      'critic/right_accuracy': 1,
    });
    // the verdict judge pays the critic's answers and abstains on the checker's checks
    const rewards = scoredNow(makeJudge('verdict', { role: 'critic', wrong: -1, invalid: -1 }), episodes)[0];
    expect(
      episodes[0].turns.map((t, i) => (t.role === 'checker' ? rewards[i] : 'x')).filter((r) => r !== 'x'),
    ).to.deep.equal([null, null, null, null]);
    expect(() => new AdversarialCriticArena({ checker: true }, arithmetic)).to.throw(/checker: needs checkFirst/);
    expect(
      new AdversarialCriticArena({ corrupter: 'sneaky', checkFirst: true, checker: true }, arithmetic).roles,
    ).to.deep.equal({ sneaky: 'sneaky', critic: 'critic', checker: 'critic' });
  });

  it('guide: a missed step whose own result is right gets its right answer as a given turn, grouped and paid as any, left out of verdicts and accuracies', async () => {
    const tasks = [{ id: 's0', family: 'arithmetic', prompt: '12+34+56=' }];
    const options = { corrupter: 'slip', verdicts: 2, checkFirst: true, perStep: true };
    // says 'y' to every step: wrong only on the planted step, where its own (right) result differs from the shown one
    const [plain] = await play(
      new AdversarialCriticArena(options, arithmetic),
      checking(() => 'y'),
      tasks,
    );
    const arena = new AdversarialCriticArena({ ...options, guide: true }, arithmetic);
    const [e] = await play(
      arena,
      checking(() => 'y'),
      tasks,
    );
    const truth = (e.info as { truth: string }).truth;
    const given = e.turns.filter((t) => t.given);
    expect(given).to.have.length(2);
    expect(
      given.every(
        (t) => t.text === 'n' && t.compare === `episode:step${truth}` && t.task!.id === `s0/planted/step${truth}`,
      ),
    ).to.equal(true);
    expect(e.turns.length).to.equal(plain.turns.length + 2);
    expect(e.info).to.deep.equal(plain.info);
    const rewards = scoredNow(makeJudge('verdict', { role: 'critic', wrong: -1, invalid: -1 }), [e])[0];
    expect(e.turns.flatMap((t, i) => (t.given ? [rewards[i]] : []))).to.deep.equal([1, 1]);
    expect(arena.metrics([e])['critic/step_accuracy']).to.equal(
      new AdversarialCriticArena(options, arithmetic).metrics([plain])['critic/step_accuracy'],
    );
    // a check that copies the shown results holds the planted value: the answer is no comparison of the right sum, so nothing is given
    const [copied] = await play(
      arena,
      checking(() => 'y', true),
      tasks,
    );
    expect(copied.turns.filter((t) => t.given)).to.have.length(0);
    // a right answer needs no guide
    expect((await play(arena, checking(agrees), tasks))[0].turns.filter((t) => t.given)).to.have.length(0);
    expect(() => new AdversarialCriticArena({ checkFirst: true, guide: true }, arithmetic)).to.throw(
      /guide: applies to perStep/,
    );
  });

  it('perStep by hand: a slip in step 2 is y then n; the verdict is the first n, and an invalid answer before any n voids it', async () => {
    // the critic's answers are scripted per step, whatever it is shown; a check that always solves rightly
    const answers = (step1: string, step2: string) => checking((ob) => (ob.step === 1 ? step1 : step2));
    const arena = new AdversarialCriticArena(
      { corrupter: 'slip', verdicts: 1, checkFirst: true, perStep: true },
      arithmetic,
    );
    const tasks = Array.from({ length: 12 }, (_, i) => ({
      id: `h${i}`,
      family: 'arithmetic',
      prompt: `${10 + i}+${20 + 2 * i}+${30 + 3 * i}=`,
    }));
    const episodes = await play(arena, answers('y', 'n'), tasks);
    const second = episodes.find((e) => (e.info as { truth: string }).truth === '2')!;
    const truths = (showing: string) =>
      second.turns.filter((t) => t.task!.id.includes(`/${showing}/step`)).map((t) => t.task!.answer);
    expect([truths('planted'), truths('right')]).to.deep.equal([
      ['y', 'n'],
      ['y', 'y'],
    ]);
    expect((second.info as { verdicts: unknown }).verdicts).to.deep.include({ planted: ['2'], right: ['2'] });
    // 'y' then 'n' names step 2 everywhere: right on step-2 slips, wrong on step-1 slips and on right working
    const m = arena.metrics(episodes);
    const share2 = episodes.filter((e) => (e.info as { truth: string }).truth === '2').length / episodes.length;
    expect(m['critic/planted_accuracy']).to.be.closeTo(share2, 1e-9);
    expect(m['critic/right_accuracy']).to.equal(0);
    expect(firstRejected(['n', null])).to.equal('1');
    expect(firstRejected([null, 'n'])).to.equal(null);
    expect(firstRejected(['y', 'y'])).to.equal('0');
    const voided = await play(arena, answers('x', 'n'), tasks.slice(0, 2));
    expect(arena.metrics(voided)).to.deep.include({ 'critic/valid_rate': 0, 'critic/accuracy': 0 });
  });

  it("checkFirst: a sneaky error only in step 1's operands, which a check from the shown first step cannot see, is an invalid attempt", async () => {
    const arena = new AdversarialCriticArena({ checkFirst: true }, arithmetic);
    // 12+57=69 misreads 34 as 57 (wrong by the rule checker) but every sum from it is right
    const [hidden] = await play(
      arena,
      scripted(
        () => '12+57=69,69+34=103',
        () => '0',
      ),
    );
    expect(hidden.turns.map((t) => t.role)).to.deep.equal(['sneaky']);
    expect(hidden.turns[0].action.error).to.match(/cannot see it/);
    // a misread in step 2 is seen: the check adds the task's operand
    const [seen] = await play(
      arena,
      scripted(
        () => '12+56=68,68+35=103',
        () => '0',
      ),
    );
    expect(seen.turns[0].action.valid).to.equal(true);
    // so is a step-2 operand misread with a right sum: right working adds the task's 34 and agrees, and the attempt says so
    const [later] = await play(
      arena,
      scripted(
        () => '12+56=68,70+32=102',
        () => '0',
      ),
    );
    expect(later.turns[0].action.error).to.match(
      /first wrong step is 2, but right working from the shown first step first differs nowhere/,
    );
    // without checkFirst the same attempts are played
    const [played] = await play(
      new AdversarialCriticArena({}, arithmetic),
      scripted(
        () => '12+57=69,69+34=103',
        () => '0',
      ),
    );
    expect(played.turns[0].action.valid).to.equal(true);
  });

  it('sneakyWrites result: shown right working up to a step, the sneaky writes its result; the rest follows from it, and a right result is invalid', async () => {
    const arena = new AdversarialCriticArena({ corrupter: 'sneaky', verdicts: 1, sneakyWrites: 'result' }, arithmetic);
    const sneaky = new SneakyRole((o) => arithmetic.parseAnswer(o));
    const seen: string[] = [];
    // a sneaky role that adds `shift` to the right result of the step it is shown (the sampler stops at its ',')
    const ctx = (shift: number): ArenaContext => ({
      async act(r, o, options) {
        let text = '0';
        if (r === 'sneaky') {
          const prompt = sneaky.render(o);
          seen.push(prompt);
          const [a, b] = (o.prefix as string).split(',').pop()!.split(/[+=]/).map(Number);
          expect(sneaky.stops(o)).to.deep.equal([',']);
          text = `${a + b + shift}`;
        }
        const action = r === 'sneaky' ? sneaky.parse(text, o) : new CriticRole().parse(text, o);
        return { ...scriptedTurn(r, text, action), compare: options?.compare, task: options?.task } as Turn;
      },
    });
    const tasks = Array.from({ length: 16 }, (_, i) => ({
      id: `w${i}`,
      family: 'arithmetic',
      prompt: `${10 + i}+${20 + 2 * i}+${30 + 3 * i}=`,
    }));
    const episodes = await play(arena, ctx(10), tasks);
    for (const e of episodes) {
      const { planted, truth } = e.info as { planted: string; truth: string };
      const right = scratchpadTarget(sumOperands(e.task.prompt)!, new Rng(hashText(e.task.id)));
      expect(planted).to.equal(plantError(right, Number(truth), Number(stepResults(right)![Number(truth) - 1]) + 10));
    }
    expect(new Set(episodes.map((e) => (e.info as { truth: string }).truth))).to.deep.equal(new Set(['1', '2']));
    expect(seen[0]).to.match(/^\d+\+\d+\+\d+=\d+\+\d+=(\d+,\d+\+\d+=)?$/);
    expect(sneaky.maxNewTokens({ task, prefix: '12+56=' })).to.equal(4);
    // the right result plants nothing: invalid, the penalty, no critic turn
    const [same] = await play(arena, ctx(0), tasks.slice(0, 1));
    expect(same.turns.map((t) => t.role)).to.deep.equal(['sneaky']);
    expect(same.turns[0].action.error).to.match(/is right: nothing was planted/);
    expect(same.outcome).to.deep.equal({ sneaky: -1 });
    expect(sneaky.parse('x1', { task, prefix: '12+56=' }).valid).to.equal(false);
    expect(sneaky.parse('68,68+', { task, prefix: '12+56=' }).valid).to.equal(false);
    expect(sneaky.stops({ task })).to.equal(undefined);
    expect(() => new AdversarialCriticArena({ corrupter: 'random', sneakyWrites: 'result' }, arithmetic)).to.throw(
      /applies to corrupter 'sneaky', not 'random'/,
    );
  });

  it('checks its options and its tasks', async () => {
    expect(() => makeArena('adversarial-critic', { corrupter: 'model' }, arithmetic)).to.throw(
      /arena\.options\.corrupter: expected one of "sneaky", "random", "slip", "given", received "model"/,
    );
    expect(() => makeArena('adversarial-critic', { corrupter: 'given' }, arithmetic)).to.throw(
      /'given' is for the critic evaluator/,
    );
    expect(() => makeArena('adversarial-critic', { verdict: 2 }, arithmetic)).to.throw(
      /arena\.options\.verdict: unrecognized key \(did you mean "verdicts"\?\); known: corrupter, verdicts, penalty, checkFirst, perStep, sneakyWrites, stepGroups, checker, guide/,
    );
    const arena = new AdversarialCriticArena({}, arithmetic);
    await play(
      arena,
      scripted(
        () => '',
        () => '0',
      ),
      [{ id: 'x', family: 'arithmetic', prompt: '12*3=' }],
    ).then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.match(/not a sum/),
    );
  });
});
