import { expect } from 'chai';
import { firstValueFrom, toArray } from 'rxjs';
import { scoredNow } from '../judges/fixtures.js';
import { scriptedTurn } from './scripted.js';
import { makeJudge, ROLE_KINDS } from '../../src/registry.js';
import { FiveRolesArena, playGroups, type ArenaContext } from '../../arenas/index.js';
import { balanced } from '../../arenas/five-roles/index.js';
import { rightOp } from '../../arenas/five-roles/bank.js';
import { fiveRolesMetrics } from '../../arenas/five-roles/metrics.js';
import { comparisonGroup } from '../../src/core/groups.js';
import { grpoOutcomeAdvantage } from '../../src/rl/advantages.js';
import { StateBaseline } from '../../src/rl/state-baseline.js';
import { recordWrittenTasks } from '../../src/engine/loop-parts.js';
import { TaskBuffer } from '../../src/engine/task-buffer.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { ownTruth, stepResults } from '../../src/tasks/scratchpad.js';
import type { Observation } from '../../src/core/role.js';
import type { Episode, Task } from '../../src/core/types.js';

const RIGHT = '12+34=46,46+56=102';
const WRONG = '12+34=46,46+56=103'; // step 2 is wrong

/**
 * Scripted roles: the proposer writes `proposal`; the solver's k-th attempt is `works[k]`; the
 * judge works the sum rightly and says y when the answer is its own; the critic checks rightly
 * and compares each step; the manager writes `manage(fact, bank)`.
 */
function scripted(proposal: string, works: string[], manage: (fact: string, bank: string[]) => string) {
  const seen: { role: string; observation: Observation }[] = [];
  let attempt = 0;
  const ctx: ArenaContext = {
    async act(r, observation, options) {
      const role = ROLE_KINDS[r]((o) => arithmetic.parseAnswer(o));
      seen.push({ role: r, observation });
      let out: string;
      if (options?.given !== undefined) out = options.given;
      else if (r === 'proposer') out = proposal;
      else if (r === 'solver') out = works[attempt++ % works.length];
      else if (r === 'judge') {
        const answers = observation.answers as string[];
        out = answers.length === 0 ? RIGHT : answers[0] === '102' ? 'y' : 'n';
      } else if (r === 'critic') {
        const working = observation.working as string;
        if (observation.stage === 'check') out = '46,46+56=102';
        else {
          const k = (observation.step as number) - 1;
          out = (observation.check as string).split(',')[k] === stepResults(working)![k] ? 'y' : 'n';
        }
      } else out = manage(observation.fact as string, observation.memory as string[]);
      const turn = scriptedTurn(r, out, role.parse(out, observation));
      if (options?.compare) turn.compare = options.compare;
      if (options?.task) turn.task = options.task;
      if (options?.state) turn.state = options.state;
      return turn;
    },
  };
  return { ctx, seen };
}

const seed = (bank: string[] = []): Task => ({ id: 'seed-0-0', family: 'arithmetic', prompt: '', fields: { bank } });
const limits = { digits: 2, operands: 3, operators: '+' };
const play = async (arena: FiveRolesArena, ctx: ArenaContext, task: Task): Promise<Episode> =>
  (await firstValueFrom(playGroups(arena, [task], 1, ctx).pipe(toArray())))[0];

describe('five-roles arena', () => {
  it('plays proposer, solver, critic, judge and manager in order; only the judge pays the solver', async () => {
    const arena = new FiveRolesArena({ attempts: 4, limits }, arithmetic);
    const { ctx, seen } = scripted('12+34+56=', [RIGHT, WRONG, WRONG, WRONG], () => 'ADD 12+34+56=');
    const e = await play(arena, ctx, seed());
    const roles = e.turns.map((t) => t.role);
    expect(roles[0]).to.equal('proposer');
    expect(roles.filter((r) => r === 'solver')).to.have.length(4);
    expect(roles.filter((r) => r === 'judge')).to.have.length(8); // its own working and a verdict per attempt
    expect(roles.filter((r) => r === 'critic')).to.have.length(12); // a check and two step marks per attempt
    expect(roles.at(-1)).to.equal('memory');
    // the manager sees the judge's verdicts and the critic's, never the answer
    const manager = seen.find((s) => s.role === 'memory')!.observation;
    expect(manager.fact).to.equal('12+34+56=ynnn:ynnn');
    expect(manager.task).to.not.have.property('answer');
    expect(seen.filter((s) => s.role === 'solver').every((s) => Object.keys(s.observation).join() === 'task')).to.equal(
      true,
    );
    // the solver's reward is the share of the judge's y on its attempt (peer), not the verifier's
    const solverTurns = e.turns.flatMap((t, i) => (t.role === 'solver' ? [i] : []));
    const [peer] = scoredNow(makeJudge('peer', {}), [e]);
    expect(solverTurns.map((i) => peer[i])).to.deep.equal([1, 0, 0, 0]);
    // the judge and the critic are paid against the environment's truth, on as many right as wrong attempts
    // (the critic's: steps): one right and one wrong of the four (their own working and checks always)
    const [verdict] = scoredNow(makeJudge('verdict', { role: ['judge', 'critic'] }), [e]);
    const paid = e.turns.flatMap((t, i) => (t.role === 'judge' || t.role === 'critic' ? [verdict[i]] : []));
    expect(paid.filter((r) => r !== null).every((r) => r === 1)).to.equal(true);
    const filed = (role: string, own: string) =>
      e.turns
        .filter((t) => t.role === role && t.compare !== own && t.task?.answer !== undefined)
        .map((t) => t.task!.id);
    expect(filed('judge', 'episode:own')).to.have.members(['seed-0-0/task/a0', 'seed-0-0/task/a1']);
    // the critic's per step: every step 1 is right (nothing to balance it), step 2 right once and wrong thrice
    expect(filed('critic', 'episode:check').sort()).to.deep.equal(['seed-0-0/task/a0/step2', 'seed-0-0/task/a1/step2']);
    // every verdict still pays the solver, taught or not
    expect(e.turns.filter((t) => t.role === 'judge' && t.compare === 'episode')).to.have.length(4);
    // most attempts missed and the bank is empty: ADD keeps exactly what the solver got wrong
    expect(e.outcome).to.deep.equal({ memory: 1 });
    expect(e.info?.solved).to.equal(false);
  });

  it('pays the wrong operation 0, and a DELETE only of the task it names', async () => {
    const arena = new FiveRolesArena({ attempts: 2, limits }, arithmetic);
    const noop = await play(arena, scripted('12+34+56=', [WRONG], () => 'NOOP').ctx, seed());
    expect(noop.outcome).to.deep.equal({ memory: 0 });
    // a kept task now solved: deleting its own entry is right, another's is not
    const kept: Task = { id: 'kept-1-0', family: 'arithmetic', prompt: '12+34+56=', answer: '102', fields: {} };
    const bank = ['11+22+33=', '12+34+56='];
    for (const [op, want] of [
      ['DELETE 1', 1],
      ['DELETE 0', 0],
    ] as const) {
      const e = await play(arena, scripted('', [RIGHT], () => op).ctx, { ...kept, fields: { bank } });
      expect(e.turns.some((t) => t.role === 'proposer')).to.equal(false);
      expect(e.outcome, op).to.deep.equal({ memory: want });
    }
    expect(rightOp(kept, bank, 2, false)).to.equal('NOOP');
    expect(rightOp({ ...kept, prompt: '1+2+3=' }, bank, 2, false)).to.equal('UPDATE');
    // retrieve: the manager is shown the task's own entry last, so DELETE 1 names it there
    const looked = new FiveRolesArena({ attempts: 2, limits, retrieve: 'last' }, arithmetic);
    const first = { ...kept, fields: { bank: ['12+34+56=', '11+22+33='] } };
    for (const [op, want] of [
      ['DELETE 1', 1],
      ['DELETE 0', 0],
    ] as const) {
      const { ctx, seen } = scripted('', [RIGHT], () => op);
      const e = await play(looked, ctx, first);
      expect(seen.find((x) => x.role === 'memory')!.observation.memory).to.deep.equal(['11+22+33=', '12+34+56=']);
      expect(e.outcome, op).to.deep.equal({ memory: want });
      expect((e.info?.op as { entry?: string }).entry).to.equal(op === 'DELETE 1' ? '12+34+56=' : '11+22+33=');
    }
    // found: the fact also says whether the lookup found the task
    const facts = async (bank: string[]) => {
      const { ctx, seen } = scripted('', [RIGHT], () => 'NOOP');
      await play(new FiveRolesArena({ attempts: 2, limits, retrieve: 'found' }, arithmetic), ctx, {
        ...kept,
        fields: { bank },
      });
      return seen.find((x) => x.role === 'memory')!.observation;
    };
    expect(await facts(['12+34+56=', '11+22+33='])).to.deep.include({
      fact: '12+34+56=yy:yy:kept',
      memory: ['11+22+33=', '12+34+56='],
    });
    expect((await facts(['11+22+33='])).fact).to.equal('12+34+56=yy:yy:new');
  });

  it('an invalid proposal ends the episode with the proposer turn marked invalid', async () => {
    const arena = new FiveRolesArena({ limits }, arithmetic);
    const e = await play(arena, scripted('123+4+5=', [RIGHT], () => 'NOOP').ctx, seed());
    expect(e.turns).to.have.length(1);
    expect(e.turns[0].action.valid).to.equal(false);
    const [learn] = scoredNow(makeJudge('learnability', { p: 'peer' }), [e]);
    expect(learn[0]).to.equal(-1);
  });

  it("the bank carries the managers' operations to the next iteration: shown on every seed and replayed", async () => {
    const arena = new FiveRolesArena({ attempts: 2, limits, bank: 2, replay: 1 }, arithmetic);
    const carry = arena.carry;
    const fresh = carry.tasks(undefined, [seed()], 1);
    expect(fresh.map((t) => t.fields?.bank)).to.deep.equal([[]]);
    const episodes = await Promise.all(
      ['12+34+56=', '11+22+33='].map((p) => play(arena, scripted(p, [WRONG], (f) => `ADD ${f}`).ctx, fresh[0])),
    );
    const kept = carry.next(undefined, episodes, 1);
    expect(carry.metrics!(kept)).to.deep.equal({ 'bank/size': 2 });
    const next = carry.tasks(JSON.parse(JSON.stringify(kept)), [seed()], 2); // plain JSON: what a checkpoint keeps
    expect(next).to.have.length(2);
    expect(next[1]).to.include({ id: 'kept-2-0', prompt: '12+34+56=', answer: '102' }); // iteration 2 of a rotating window
    expect(next.every((t) => (t.fields?.bank as string[]).join() === '12+34+56=,11+22+33=')).to.equal(true);
    // a full bank refuses an ADD; an UPDATE replaces the entry it names
    const full = await play(arena, scripted('10+20+30=', [WRONG], () => 'UPDATE 0 x').ctx, next[0]);
    expect(full.outcome).to.deep.equal({ memory: 1 });
    const after = carry.next(kept, [full], 2) as { entries: Task[] };
    expect(after.entries.map((t) => t.prompt)).to.deep.equal(['10+20+30=', '11+22+33=']);
  });

  it("learnability with p 'peer' reads the judge's verdicts, not the verifier", async () => {
    const arena = new FiveRolesArena({ attempts: 4, limits }, arithmetic);
    const e = await play(arena, scripted('12+34+56=', [RIGHT, WRONG, WRONG, WRONG], () => 'NOOP').ctx, seed());
    const [peer] = scoredNow(makeJudge('learnability', { p: 'peer' }), [e]);
    expect(peer[0]).to.equal(0.75); // p = 1/4 by the judge's y
    // the task buffer records the proposed task with p from the solver's attempts alone, not the verdicts on them
    const buffer = new TaskBuffer(4);
    recordWrittenTasks([e], arithmetic, buffer, 1);
    expect(buffer.entries().map((b) => [b.task.prompt, b.p])).to.deep.equal([['12+34+56=', 0.25]]);
  });
});

describe('several verdicts on each attempt', () => {
  it('the judge works the sum before each of its verdicts; the solver is paid their share of y, the manager reads the first', async () => {
    const arena = new FiveRolesArena({ attempts: 2, limits, verdicts: 3 }, arithmetic);
    const { ctx, seen } = scripted('12+34+56=', [RIGHT, WRONG], () => 'NOOP');
    // the judge's own working is sometimes wrong, and it says y to the answer its own working reaches
    const owns = [RIGHT, WRONG, WRONG, WRONG, RIGHT, RIGHT];
    const judging: ArenaContext = {
      async act(r, observation, options) {
        const answers = observation.answers as string[] | undefined;
        if (r !== 'judge' || !answers) return ctx.act(r, observation, options);
        const given = answers.length
          ? stepResults(observation.working as string)!.at(-1) === answers[0]
            ? 'y'
            : 'n'
          : owns.shift()!;
        return ctx.act(r, observation, { ...options, given });
      },
    };
    const e = await play(arena, judging, seed());
    const verdicts = (id: string) =>
      e.turns.filter((t) => t.role === 'judge' && t.task?.id === `seed-0-0/task/${id}`).map((t) => t.action.value);
    expect(e.turns.filter((t) => t.role === 'judge')).to.have.length(12); // 2 attempts, 3 own workings and 3 verdicts each
    const [a0, a1] = [verdicts('a0'), verdicts('a1')];
    expect([a0, a1].map((v) => v.length)).to.deep.equal([3, 3]);
    expect(new Set([...a0, ...a1])).to.deep.equal(new Set(['y', 'n'])); // the verdicts differ, so the shares are not all 0 or 1
    const share = (v: unknown[]) => v.filter((x) => x === 'y').length / v.length;
    const paid = scoredNow(makeJudge('peer'), [e])[0].filter((r, i) => e.turns[i].role === 'solver');
    expect(paid).to.deep.equal([share(a0), share(a1)]);
    expect(seen.find((x) => x.role === 'memory')!.observation.fact).to.equal(`12+34+56=${a0[0]}${a1[0]}:yn`);
    // only the first own working and verdict on each attempt teach the judge: the judge learns as with one verdict
    const taught = e.turns.filter((t) => t.role === 'judge' && t.task?.answer !== undefined).map((t) => t.task!.id);
    expect(taught.sort()).to.deep.equal(['a0', 'a0/own', 'a1', 'a1/own'].map((id) => `seed-0-0/task/${id}`));
    expect(fiveRolesMetrics([e], arithmetic)['judge/own_right']).to.equal(0.5); // 2 paid own workings: RIGHT, then WRONG
  });
});

describe('a solver paid by greedy verdicts', () => {
  it("with pay 'greedy', one more own working and verdict, both greedy and untaught, pay the attempt; the sampled ones teach", async () => {
    const arena = new FiveRolesArena({ attempts: 2, limits, pay: 'greedy' }, arithmetic);
    const { ctx, seen } = scripted('12+34+56=', [RIGHT, WRONG], () => 'NOOP');
    // sampled, the judge says n to everything; greedy, y to everything
    const judging: ArenaContext = {
      async act(r, observation, options) {
        const verdict = r === 'judge' && (observation.answers as string[]).length > 0;
        const given = verdict ? { given: options?.temperature === 0 ? 'y' : 'n' } : {};
        const turn = await ctx.act(r, observation, { ...options, ...given });
        return options?.temperature === undefined ? turn : { ...turn, temperature: options.temperature };
      },
    };
    const e = await play(arena, judging, seed());
    const judge = e.turns.filter((t) => t.role === 'judge');
    const row = (t: Episode['turns'][number]) => `${t.task!.id.replace('seed-0-0/task/', '')}:${t.task!.answer ?? '-'}`;
    expect(
      judge
        .filter((t) => t.temperature === undefined)
        .map(row)
        .sort(),
    ).to.deep.equal(['a0/sampled/own:' + RIGHT, 'a0/sampled:y', 'a1/sampled/own:' + RIGHT, 'a1/sampled:n'].sort());
    expect(
      judge
        .filter((t) => t.temperature === 0)
        .map(row)
        .sort(),
    ).to.deep.equal(['a0/own:-', 'a0:-', 'a1/own:-', 'a1:-']);
    const paid = scoredNow(makeJudge('peer'), [e])[0].filter((_, i) => e.turns[i].role === 'solver');
    expect(paid).to.deep.equal([1, 1]); // the greedy y's, not the sampled n's
    expect(seen.find((x) => x.role === 'memory')!.observation.fact).to.equal('12+34+56=nn:yn'); // the sampled verdicts
    const taught = scoredNow(makeJudge('verdict', { role: 'judge' }), [e])[0].filter((r) => r !== null);
    expect(taught).to.have.length(4); // the sampled own workings and verdicts only: the greedy ones would be refused
  });
});

describe('slips the judge is taught on', () => {
  it('with judgePlant, each right attempt beyond the wrong ones adds a slip of its answer, judged after its working, taught n, paying no one', async () => {
    const arena = new FiveRolesArena({ attempts: 4, limits, judgePlant: 'adjacent' }, arithmetic);
    const { ctx, seen } = scripted('12+34+56=', [RIGHT, RIGHT, RIGHT, WRONG], () => 'NOOP');
    // each own working is marked by its position, so a slip's verdict shows which working it followed
    let n = 0;
    const judging: ArenaContext = {
      async act(r, observation, options) {
        const own = r === 'judge' && (observation.answers as string[]).length === 0;
        return ctx.act(r, observation, own ? { ...options, given: `12+34=46,46+56=102 #${n++}` } : options);
      },
    };
    const e = await play(arena, judging, seed());
    const id = (t: Episode['turns'][number]) => (t.task?.id ?? '').replace('seed-0-0/task/', '');
    const slips = e.turns.filter((t) => t.role === 'judge' && id(t).endsWith('/slip'));
    expect(slips.map(id)).to.deep.equal(['a0/slip', 'a1/slip']); // three right, one wrong: two slips
    const asked = seen.filter((s) => s.role === 'judge' && (s.observation.answers as string[]).length > 0);
    for (const slip of ['a0', 'a1']) {
      const own = e.turns.find((t) => t.role === 'judge' && id(t) === `${slip}/own`)!;
      const [onAnswer, onSlip] = asked.filter((s) => s.observation.working === own.text.trim());
      expect(onAnswer.observation.answers).to.deep.equal(['102']);
      const shown = (onSlip.observation.answers as string[])[0];
      const changed = [...shown].filter((ch, i) => ch !== '102'[i]);
      expect(shown).to.have.length(3);
      expect(changed).to.have.length(1);
      const at = [...shown].findIndex((ch, i) => ch !== '102'[i]);
      expect(Math.abs(Number(shown[at]) - Number('102'[at]))).to.equal(1); // adjacent
    }
    // every right attempt and every wrong answer, the slips among them, now teach the judge: three y, three n
    const taught = e.turns.filter((t) => t.role === 'judge' && !id(t).endsWith('/own') && t.task!.answer);
    expect(taught.map((t) => `${id(t)}:${t.task!.answer}`).sort()).to.deep.equal(
      ['a0:y', 'a1:y', 'a2:y', 'a3:n', 'a0/slip:n', 'a1/slip:n'].sort(),
    );
    // the scripted judge says n to the slips: they pay the judge, never the solver
    const paid = scoredNow(makeJudge('peer'), [e])[0].filter((_, i) => e.turns[i].role === 'solver');
    expect(paid).to.deep.equal([1, 1, 1, 0]);
    const [verdict] = scoredNow(makeJudge('verdict', { role: 'judge' }), [e]);
    expect(e.turns.flatMap((t, i) => (id(t).endsWith('/slip') ? [verdict[i]] : []))).to.deep.equal([1, 1]);
    const m = fiveRolesMetrics([e], arithmetic);
    expect(m['judge/slip_found']).to.equal(1);
    expect(m['judge/y_share']).to.equal(0.75); // on the solver's four answers, the slips left out
    expect(seen.find((s) => s.role === 'memory')!.observation.fact).to.equal('12+34+56=yyyn:yyyn');
  });

  it('without wrong-free surplus there is no slip, and judgePlant none adds none', async () => {
    for (const [judgePlant, works] of [
      ['adjacent', [RIGHT, WRONG]],
      ['none', [RIGHT, RIGHT]],
    ] as const) {
      const arena = new FiveRolesArena({ attempts: 2, limits, judgePlant }, arithmetic);
      const { ctx } = scripted('12+34+56=', [...works], () => 'NOOP');
      const e = await play(arena, ctx, seed());
      expect(
        e.turns.filter((t) => t.task?.id.endsWith('/slip')),
        judgePlant,
      ).to.have.length(0);
    }
  });
});

describe('five-roles planted slips and the manager truth', () => {
  it('with plant, each right attempt beyond the wrong ones gets a planted twin the critic marks, taught', async () => {
    const arena = new FiveRolesArena({ attempts: 4, limits, plant: 'slip' }, arithmetic);
    const { ctx, seen } = scripted('12+34+56=', [RIGHT, RIGHT, RIGHT, WRONG], () => 'NOOP');
    const e = await play(arena, ctx, seed());
    // three right, one wrong: two twins, each a check and two step marks besides the attempts' twelve
    expect(e.turns.filter((t) => t.role === 'critic')).to.have.length(18);
    const checks = seen.filter((s) => s.role === 'critic' && s.observation.stage === 'check');
    expect(checks.slice(0, 4).map((s) => s.observation.working)).to.deep.equal([RIGHT, RIGHT, RIGHT, WRONG]);
    const twins = checks.slice(4);
    expect(twins).to.have.length(2);
    for (const { observation } of twins) {
      const w = observation.working as string;
      expect(w).to.not.equal(RIGHT);
      const diffs = RIGHT.split(',').map((step, k) => step !== w.split(',')[k]);
      expect(diffs[0] || diffs[1]).to.equal(true); // a planted result, the later step adding on from it
    }
    const marks = e.turns.filter((t) => t.role === 'critic' && t.task!.id.includes('/planted/step'));
    expect(marks).to.have.length(4);
    expect(marks.some((t) => t.task!.answer === 'n')).to.equal(true);
    // each step's marks carry their truth on as many right as wrong steps, the twins' wrong ones among them
    for (const step of ['step1', 'step2']) {
      const taught = e.turns.filter((t) => t.role === 'critic' && t.task!.id.endsWith(step) && t.task!.answer);
      const ys = taught.filter((t) => t.task!.answer === 'y').length;
      expect(ys * 2, step).to.equal(taught.length);
    }
    const step2 = e.turns.filter((t) => t.task?.id.endsWith('step2') && t.task.answer).map((t) => t.task!.id);
    expect(step2).to.have.length(6); // every twin's result is wrong from its planted step on: three n beside three y
    // the scripted critic finds every planted slip: its taught marks on the twins pay 1
    const [verdict] = scoredNow(makeJudge('verdict', { role: ['critic'] }), [e]);
    const twinPay = e.turns.flatMap((t, i) =>
      t.task?.id.includes('/planted/step') && t.task.answer ? [verdict[i]] : [],
    );
    expect(twinPay.length).to.be.at.least(2);
    expect(twinPay.every((r) => r === 1)).to.equal(true);
    // the manager's fact still shows only the real attempts
    expect(seen.find((s) => s.role === 'memory')!.observation.fact).to.equal('12+34+56=yyyn:yyyn');
    const plain = await play(
      new FiveRolesArena({ attempts: 4, limits }, arithmetic),
      scripted('12+34+56=', [RIGHT, RIGHT, RIGHT, WRONG], () => 'NOOP').ctx,
      seed(),
    );
    expect(plain.turns.filter((t) => t.role === 'critic')).to.have.length(12);
  });

  it('plants twins only in working that is right to its answer: working that stops early gets none', async () => {
    const arena = new FiveRolesArena({ attempts: 4, limits, plant: 'random' }, arithmetic);
    const early = '12+34=46'; // its one step is right, its answer is not
    const { ctx, seen } = scripted('12+34+56=', [early, early, early, RIGHT], () => 'NOOP');
    const e = await play(arena, ctx, seed());
    const checks = seen.filter((s) => s.role === 'critic' && s.observation.stage === 'check');
    // four clean attempts, none wrong by its steps: one twin, of the only whole one
    expect(checks.map((s) => s.observation.working).slice(0, 4)).to.deep.equal([early, early, early, RIGHT]);
    expect(checks).to.have.length(5);
    expect(e.turns.filter((t) => t.task?.id.includes('/planted/check')).map((t) => t.task!.id)).to.deep.equal([
      'seed-0-0/task/a3/planted/check',
    ]);
  });

  it("files the right operation's kind as the manager turn's truth; the outcome judge's balance weighs by it", async () => {
    const arena = new FiveRolesArena({ attempts: 2, limits }, arithmetic);
    const episode = (works: string, op: string) => play(arena, scripted('12+34+56=', [works], () => op).ctx, seed());
    const batch = [
      await episode(WRONG, 'NOOP'), // missed, not kept: ADD was right
      await episode(WRONG, 'ADD x'),
      ...(await Promise.all([1, 2, 3].map(() => episode(RIGHT, 'NOOP')))), // solved, not kept: NOOP was right
    ];
    expect(batch.map((e) => e.turns.at(-1)!.task!.answer)).to.deep.equal(['ADD', 'ADD', 'NOOP', 'NOOP', 'NOOP']);
    expect(batch.map((e) => e.turns.at(-1)!.task!.prompt)).to.deep.equal(Array(5).fill('12+34+56='));
    const last = (rows: (number | null)[][]) => rows.map((r) => r.at(-1));
    expect(last(scoredNow(makeJudge('outcome', { role: 'memory' }), batch))).to.deep.equal([0, 1, 1, 1, 1]);
    // w_c = N / (K n_c): 5 / (2 * 2) for the two ADDs, 5 / (2 * 3) for the three NOOPs
    const weighted = last(scoredNow(makeJudge('outcome', { role: 'memory', balance: true }), batch));
    [0, 5 / 4, 5 / 6, 5 / 6, 5 / 6].forEach((w, i) => expect(weighted[i]).to.be.closeTo(w, 1e-12));
    // the solver's turns, not scored by it, stay unweighted and unscored
    expect(scoredNow(makeJudge('outcome', { role: 'memory', balance: true }), batch)[0][1]).to.equal(null);
  });

  it("with managerCompare 'kind', a manager turn is compared only with turns whose right operation is its kind", async () => {
    const batchOf = async (managerCompare: string) => {
      const arena = new FiveRolesArena({ attempts: 2, limits, managerCompare }, arithmetic);
      const episode = (works: string, op: string) => play(arena, scripted('12+34+56=', [works], () => op).ctx, seed());
      return [
        await episode(WRONG, 'NOOP'), // ADD was right
        await episode(WRONG, 'ADD x'),
        ...(await Promise.all([1, 2, 3].map(() => episode(RIGHT, 'NOOP')))), // NOOP was right, and written
      ];
    };
    const advantages = (batch: Episode[]) => {
      const groups = batch.map((e) => comparisonGroup(e, e.turns.at(-1)!));
      const rewards = scoredNow(makeJudge('outcome', { role: 'memory' }), batch).map((r) => [r.at(-1)!]);
      return {
        groups,
        adv: grpoOutcomeAdvantage(
          rewards,
          rewards.map(() => [1]),
          groups,
        ).advantages.map((r) => r[0]),
      };
    };
    const kind = advantages(await batchOf('kind'));
    expect(kind.groups).to.deep.equal([...Array(2).fill('batch:ADD/memory'), ...Array(3).fill('batch:NOOP/memory')]);
    // the right NOOPs, all paid 1 among their kind, are not pushed up; the ADDs are ranked among themselves
    [-Math.SQRT1_2, Math.SQRT1_2, 0, 0, 0].forEach((a, i) => expect(kind.adv[i]).to.be.closeTo(a, 1e-5));
    // against the one batch baseline (0.8) every right NOOP gains, the missed ADD's NOOP loses
    const one = advantages(await batchOf('batch'));
    expect(new Set(one.groups)).to.deep.equal(new Set(['batch/memory']));
    expect(one.adv.slice(2).every((a) => a > 0)).to.equal(true);
    expect(one.adv[0]).to.be.below(0);
    // a kind whose turns are all wrong is level under grpo; the 'infostate' advantage's moving baseline per kind
    // (the turn's decision point) still marks them down once that kind has paid before
    const batch = await batchOf('kind');
    expect(batch.map((e) => e.turns.at(-1)!.state)).to.deep.equal([
      ...Array(2).fill('manager:ADD'),
      ...Array(3).fill('manager:NOOP'),
    ]);
    expect((await batchOf('batch')).every((e) => e.turns.at(-1)!.state === undefined)).to.equal(true);
    const states = new StateBaseline(0.5);
    const keys = batch.map((e) => e.turns.at(-1)!.state!);
    expect(states.advantages(keys, [0, 1, 1, 1, 1])).to.deep.equal([0, 1, 1, 1, 1]);
    expect(states.advantages(keys.slice(0, 2), [0, 0])).to.deep.equal([-0.25, -0.25]);
  });
});

describe('the manager paid on the marks it reads', () => {
  it("with managerTruth 'marks', a fooled judge's and critic's y make NOOP right for a task the solver missed", async () => {
    const fooled = (ctx: ArenaContext): ArenaContext => ({
      async act(r, observation, options) {
        const turn = await ctx.act(r, observation, options);
        const verdict = r === 'judge' && (observation.answers as string[]).length > 0;
        const mark = r === 'critic' && observation.stage !== 'check';
        return verdict || mark ? { ...turn, text: 'y', action: { valid: true, value: 'y' } } : turn;
      },
    });
    const outcome = async (managerTruth: string) => {
      const arena = new FiveRolesArena({ attempts: 2, limits, managerTruth }, arithmetic);
      const e = await play(arena, fooled(scripted('12+34+56=', [WRONG], () => 'NOOP').ctx), seed());
      expect(e.info).to.include({ solved: false, marked: true });
      return [e.outcome, e.turns.at(-1)!.task!.answer];
    };
    expect(await outcome('answer')).to.deep.equal([{ memory: 0 }, 'ADD']);
    expect(await outcome('marks')).to.deep.equal([{ memory: 1 }, 'NOOP']);
  });
});

describe('the guided manager', () => {
  it('where its operation is wrong, the right one is added as a given turn paid 1; a right one gets none', async () => {
    const arena = new FiveRolesArena({ attempts: 2, limits, guide: true }, arithmetic);
    const kept: Task = { id: 'kept-1-0', family: 'arithmetic', prompt: '12+34+56=', answer: '102', fields: {} };
    const bank = ['11+22+33=', '12+34+56='];
    const episode = (op: string) => play(arena, scripted('', [RIGHT], () => op).ctx, { ...kept, fields: { bank } });
    const wrong = await episode('NOOP'); // solved and kept: DELETE 1 was right
    const managers = wrong.turns.filter((t) => t.role === 'memory');
    expect(managers.map((t) => t.text)).to.deep.equal(['NOOP', 'DELETE 1']);
    const [paid] = scoredNow(makeJudge('outcome', { role: 'memory' }), [wrong]);
    expect(wrong.turns.flatMap((t, i) => (t.role === 'memory' ? [paid[i]] : []))).to.deep.equal([0, 1]);
    expect(wrong.info).to.include({ right: false }); // the sampled operation is what the bank applies and the metrics read
    const right = await episode('DELETE 1');
    expect(right.turns.filter((t) => t.role === 'memory')).to.have.length(1);
    const invalid = await episode('KEEP');
    expect(invalid.turns.filter((t) => t.role === 'memory').map((t) => t.text)).to.deep.equal(['KEEP', 'DELETE 1']);
  });
});

describe('the re-rolled manager', () => {
  it('samples K operations from one showing, each paid its own outcome in one group; the first is applied', async () => {
    const arena = new FiveRolesArena({ attempts: 2, limits, managerRerollouts: 3 }, arithmetic);
    const kept: Task = { id: 'kept-1-0', family: 'arithmetic', prompt: '12+34+56=', answer: '102', fields: {} };
    const bank = ['11+22+33=', '12+34+56='];
    const ops = ['NOOP', 'DELETE 1', 'DELETE 0']; // solved and kept: only DELETE 1 is right
    const play3 = async (order: string[], guide = false) => {
      const a = guide ? new FiveRolesArena({ attempts: 2, limits, managerRerollouts: 3, guide }, arithmetic) : arena;
      let n = 0;
      const { ctx, seen } = scripted('', [RIGHT], () => order[n++ % order.length]);
      const e = await play(a, ctx, { ...kept, fields: { bank } });
      return { e, seen, managers: e.turns.filter((t) => t.role === 'memory') };
    };
    const { e, seen, managers } = await play3(ops);
    expect(managers.map((t) => t.text)).to.deep.equal(ops);
    // every sample saw the same showing
    const shown = seen.filter((s) => s.role === 'memory').map((s) => JSON.stringify(s.observation));
    expect(new Set(shown).size).to.equal(1);
    expect(new Set(managers.map((t) => comparisonGroup(e, t)))).to.deep.equal(new Set([`ep:${e.id}:memory/memory`]));
    const [paid] = scoredNow(makeJudge('outcome', { role: 'memory' }), [e]);
    expect(e.turns.flatMap((t, i) => (t.role === 'memory' ? [paid[i]] : []))).to.deep.equal([0, 1, 0]);
    // the first sample is what the bank applies and the metrics read
    expect(e.info).to.include({ right: false });
    expect((e.info!.op as { op: string }).op).to.equal('NOOP');
    // the right sample alone gains within the group
    const memory = e.turns.flatMap((t, i) => (t.role === 'memory' ? [{ t, r: paid[i] }] : []));
    const adv = grpoOutcomeAdvantage(
      memory.map(({ r }) => [Number(r)]),
      memory.map(() => [1]),
      memory.map(({ t }) => comparisonGroup(e, t)),
    ).advantages.map((r) => r[0]);
    expect(adv[1]).to.be.above(0);
    expect(adv[0]).to.be.below(0);
    expect(fiveRolesMetrics([e], arithmetic)['memory/taught_showings']).to.equal(1);
    const first = await play3(['DELETE 1', 'NOOP', 'NOOP']);
    expect(first.e.info).to.include({ right: true });
    expect(fiveRolesMetrics([first.e, (await play3(['NOOP'])).e], arithmetic)['memory/taught_showings']).to.equal(0.5);
    // guided: the given turn only where no sample was right
    expect((await play3(ops, true)).managers).to.have.length(3);
    const none = await play3(['NOOP'], true);
    expect(none.managers.map((t) => t.text)).to.deep.equal(['NOOP', 'NOOP', 'NOOP', 'DELETE 1']);
  });

  it("refuses managerCompare 'kind' beside re-rollouts, and a single re-rollout", () => {
    expect(() => new FiveRolesArena({ limits, managerRerollouts: 4, managerCompare: 'kind' }, arithmetic)).to.throw(
      /cannot also compare them by kind/,
    );
    expect(() => new FiveRolesArena({ limits, managerRerollouts: 1 }, arithmetic)).to.throw(/0 \(off\) or an integer/);
  });
});

describe('balanced teaching', () => {
  it('as many true as false items teach, the first of each; unasked ones never', () => {
    expect(balanced([true, false, false, null, true, false])).to.deep.equal([true, true, true, false, true, false]);
    expect(balanced([true, true, null])).to.deep.equal([false, false, false]);
  });
});

describe('a solve-first judge on a sum worked step by step', () => {
  it('its own working is paid when right in any order, else against the working or the answer', () => {
    const task = { prompt: '12+34+56=', answer: '102' };
    expect(ownTruth(task, '12+56=68,68+34=102')).to.equal('12+56=68,68+34=102');
    expect(ownTruth(task, '34+56=90,90+12=102')).to.equal('34+56=90,90+12=102');
    expect(ownTruth(task, '12+56=68,68+34=103')).to.equal('102');
    expect(ownTruth({ ...task, target: RIGHT }, '12+34=46,46+56=103')).to.equal(RIGHT);
    expect(ownTruth({ prompt: '12+34=', answer: '46' }, '46')).to.equal('46'); // no working: the answer, as before
  });
});
