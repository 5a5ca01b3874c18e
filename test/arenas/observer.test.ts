import { expect } from 'chai';
import { firstValueFrom, toArray } from 'rxjs';
import { scoredNow } from '../judges/fixtures.js';
import { scriptedTurn } from './scripted.js';
import { makeArena, makeJudge } from '../../src/registry.js';
import { ObserverArena, playGroups, type ArenaContext } from '../../arenas/index.js';
import { observerView } from '../../arenas/observer/view.js';
import { copyShares, observerExamples } from '../../arenas/observer/corpus.js';
import { ObserverRole } from '../../roles/observer.js';
import { SolverRole } from '../../src/core/solver.js';
import { arithmetic, evaluateArithmetic } from '../../src/tasks/arithmetic.js';
import { parsePretrainConfig } from '../../src/pretrain/schema.js';
import { pretrainCorpus } from '../../src/pretrain/corpus.js';
import { buildExamples, type Trainee } from '../../src/pretrain/setup.js';
import { evaluationMetrics, type BaseEvaluation } from '../../src/pretrain/evaluate.js';
import { stopMeasure } from '../../src/pretrain/run.js';
import { pretrain, PretrainSchema } from '../../src/pretrain/index.js';
import { TEST_BACKEND } from '../needs.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { Rng } from '../../src/util/rng.js';
import type { Episode, Task } from '../../src/core/types.js';

/** What each role was shown, as its rendered text: the observer writes `hint(view)`; the solver answers a sum it can read, else '0'. */
function scripted(hint: (view: string) => string) {
  const [observer, solver] = [new ObserverRole(), new SolverRole((o) => arithmetic.parseAnswer(o))];
  const shown: { role: string; text: string; observation: Record<string, unknown> }[] = [];
  const ctx: ArenaContext = {
    async act(r, observation, options) {
      const role = r === 'observer' ? observer : solver;
      const text = role.render(observation);
      shown.push({ role: r, text, observation });
      const out = r === 'observer' ? hint(observation.view as string) : sumOf(text);
      const turn = scriptedTurn(r, out, role.parse(out, observation));
      if (options?.compare) turn.compare = options.compare;
      if (options?.task) turn.task = options.task;
      return turn;
    },
  };
  return { ctx, shown };
}
const sumOf = (prompt: string) => (/^\d+\+\d+=$/.test(prompt) ? String(evaluateArithmetic(prompt)) : '0');

const task: Task = { id: 't1', family: 'arithmetic', prompt: '2+3=', answer: '5' };
const play = async (arena: ObserverArena, ctx: ArenaContext): Promise<Episode> =>
  (await firstValueFrom(playGroups(arena, [task], 1, ctx).pipe(toArray())))[0];

describe('observer arena', () => {
  it('the observer sees the task marked among distractors; the solver sees only the hint or the cut view', async () => {
    const arena = new ObserverArena({ budget: 6, distractors: 2, attempts: 2 }, arithmetic);
    const { ctx, shown } = scripted((view) =>
      view
        .split(',')
        .find((p) => p.endsWith('*'))!
        .slice(0, -1),
    );
    const e = await play(arena, ctx);
    const view = shown[0].observation.view as string;
    expect(shown[0].role).to.equal('observer');
    expect(view.split(',')).to.have.length(3).and.include('2+3=*');
    const solverTexts = shown.filter((s) => s.role === 'solver').map((s) => s.text);
    expect(solverTexts.sort()).to.deep.equal(['2+3=', '2+3=', view.slice(0, 6), view.slice(0, 6)].sort());
    // nothing of the view beyond the budget, and no answer, reaches the solver's observation
    for (const s of shown.filter((x) => x.role === 'solver')) {
      expect(Object.keys(s.observation)).to.deep.equal(['task']);
      expect(s.observation.task).to.not.have.property('answer');
    }
    // the baseline's answers are measured, not emitted: the episode holds the hint and its two answers
    expect(e.turns.map((t) => t.role)).to.deep.equal(['observer', 'solver', 'solver']);
    expect(e.turns.slice(1).map((t) => t.task)).to.deep.equal([
      { id: 't1/hint', family: 'arithmetic', prompt: '2+3=', answer: '5' },
      { id: 't1/hint', family: 'arithmetic', prompt: '2+3=', answer: '5' },
    ]);
  });

  it("pays the observer the solver's accuracy on its hint minus its accuracy on the cut view, and the solver by the verifier", async () => {
    // no distractors, budget 4: the view is '2+3=*' and its cut '2+3=', which the solver answers right
    const arena = new ObserverArena({ budget: 4, distractors: 0, attempts: 2 }, arithmetic);
    const utilities: number[] = [];
    for (const hint of ['2+3=', '1+4=', '4+4=', '5', '12+3=']) {
      const e = await play(arena, scripted(() => hint).ctx);
      const [r] = scoredNow(makeJudge('outcome', { role: 'observer' }), [e]);
      const solver = scoredNow(makeJudge('verifier', { role: 'solver' }, { verify: arithmetic.verify }), [e])[0];
      expect(r[0]).to.equal(e.outcome!.observer);
      expect(e.info).to.include({ hint: hint.length > 4 ? null : hint, reference: 1 });
      expect(solver.slice(1)).to.deep.equal(e.turns.slice(1).map(() => (hint === '4+4=' || hint === '5' ? 0 : 1)));
      utilities.push(r[0]!);
    }
    // a hint as good as the cut: 0; another sum with the same answer: 0; a wrong sum, an unreadable one, one over the budget (never shown): -1
    expect(utilities).to.deep.equal([0, 0, -1, -1, -1]);
  });

  it('with baseline none the reference is 0 and no solver is asked for it; accuracy counts each answer', async () => {
    const arena = new ObserverArena({ budget: 6, distractors: 1, attempts: 3, baseline: 'none' }, arithmetic);
    const { ctx, shown } = scripted(() => '2+3=');
    const e = await play(arena, ctx);
    expect(shown.filter((s) => s.role === 'solver')).to.have.length(3);
    expect(e.outcome).to.deep.equal({ observer: 1 });
    const m = arena.metrics([e, await play(arena, scripted(() => '9+9=').ctx)]);
    expect(m).to.include({ 'observer/accuracy': 0.5, 'observer/reference': 0, 'observer/utility': 0.5 });
    expect(m).to.include({ 'observer/hint_right': 0.5, 'observer/copies': 0.5, 'observer/valid_rate': 1 });
  });

  it("labelled: the hint opens with a candidate's letter, the solver sees what follows it, the cut baseline the unlabelled view", async () => {
    const arena = new ObserverArena({ budget: 4, distractors: 2, attempts: 1, labelled: true }, arithmetic);
    const letterOf = (view: string, marked: boolean) => view.split(',').find((p) => p.endsWith('*') === marked)![0];
    // the asked one's letter and a copy of it; another candidate's letter with the asked sum
    const { ctx, shown } = scripted((view) => `${letterOf(view, true)}:2+3=`);
    const e = await play(arena, ctx);
    const view = shown[0].observation.view as string;
    expect(view.split(',').map((p) => p.slice(0, 2))).to.deep.equal(['a:', 'b:', 'c:']);
    expect(view).to.match(/[abc]:2\+3=\*/);
    expect(shown[0].observation.labels).to.equal('abc');
    const plain = view.replace(/[abc]:/g, '');
    expect(
      shown
        .filter((s) => s.role === 'solver')
        .map((s) => s.text)
        .sort(),
    ).to.deep.equal(['2+3=', plain.slice(0, 4)].sort());
    expect(e.info).to.include({ hint: '2+3=', accuracy: 1, pointed: true });
    const other = await play(arena, scripted((v) => `${letterOf(v, false)}:2+3=`).ctx);
    expect(other.info).to.include({ hint: '2+3=', pointed: false });
    expect(arena.metrics([e, other])).to.include({ 'observer/pointed': 0.5, 'observer/copies': 1 });
    // no letter, or one not shown: invalid, never shown to the solver
    for (const bad of ['2+3=', 'd:2+3=', 'a2+3=']) {
      const b = await play(arena, scripted(() => bad).ctx);
      expect(b.info).to.include({ hint: null, accuracy: 0 });
      expect(b.turns[0].action.valid).to.equal(false);
    }
  });

  it('the view is drawn from the task id, its distractors distinct from the task and each other', () => {
    const t = { ...task, id: 'x7' };
    const v = observerView(t, arithmetic, arithmetic.validate({}), 4);
    expect(observerView(t, arithmetic, arithmetic.validate({}), 4)).to.deep.equal(v);
    expect(new Set(v.candidates).size).to.equal(5);
    expect(v.candidates[v.at]).to.equal('2+3=');
    expect(v.text.split('*')).to.have.length(2);
    const ats = new Set(
      Array.from(
        { length: 40 },
        (_, i) => observerView({ ...t, id: `t${i}` }, arithmetic, arithmetic.validate({}), 2).at,
      ),
    );
    expect([...ats].sort()).to.deep.equal([0, 1, 2]);
  });

  it('the observer role keeps to its budget, and the sampler stops one token after it', () => {
    const role = new ObserverRole();
    const o = { task, view: '2+3=*', budget: 4 };
    expect(role.render(o)).to.equal('2+3=*>');
    expect(role.maxNewTokens(o)).to.equal(5);
    expect(role.parse('2+3=', o)).to.deep.equal({ valid: true, value: '2+3=' });
    expect(role.parse('12+3=', o).valid).to.equal(false);
    expect(role.parse(' ', o).valid).to.equal(false);
    // labelled: the letter and ':' come first, the budget counts what follows
    const l = { task, view: 'a:2+3=*', budget: 4, labels: 'ab' };
    expect(role.maxNewTokens(l)).to.equal(7);
    expect(role.parse('b:2+3=', l)).to.deep.equal({ valid: true, value: 'b:2+3=' });
    expect(role.parse('b:12+3=', l).valid).to.equal(false);
    expect(role.parse('c:2+3=', l).error).to.match(/opens with a candidate's letter \(a, b\)/);
    expect(role.parse('a:', l).valid).to.equal(false);
  });

  it('the observer corpus teaches one candidate at random (coin), the marked one (right) or the first shown (first)', () => {
    const tk = new CharTokenizer();
    const tasks = Array.from({ length: 300 }, (_, i) => arithmetic.generate(new Rng(i), arithmetic.validate({}), i));
    const hints = (labels: 'coin' | 'right' | 'first') =>
      observerExamples(
        tk,
        arithmetic,
        arithmetic.validate({}),
        tasks,
        { share: 0.5, labels, distractors: 2, solving: true, labelled: false, marked: 0 },
        new Rng(1),
      );
    const coin = hints('coin');
    expect(coin).to.have.length(150);
    const text = (ids: readonly number[]) => tk.decode(ids);
    const marked = coin.filter((e, i) => text(e.completion) === tasks[i].prompt).length / coin.length;
    expect(marked).to.be.within(0.2, 0.47);
    coin.forEach((e) => expect(text(e.prompt)).to.include(`${text(e.completion)}`));
    expect(hints('right').every((e, i) => text(e.completion) === tasks[i].prompt)).to.equal(true);
    // first: the view's first candidate, the marked one about a third of the time
    const first = hints('first');
    first.forEach((e, i) =>
      expect(text(e.completion)).to.equal(observerView(tasks[i], arithmetic, arithmetic.validate({}), 2).candidates[0]),
    );
    const firstMarked = first.filter((e, i) => text(e.completion) === tasks[i].prompt).length / first.length;
    expect(firstMarked).to.be.within(0.2, 0.47);
    // labelled: a letter, then the candidate it names in the view
    const lettered = observerExamples(
      tk,
      arithmetic,
      arithmetic.validate({}),
      tasks,
      {
        share: 0.5,
        labels: 'coin',
        distractors: 2,
        solving: true,
        labelled: true,
        marked: 0,
      },
      new Rng(1),
    );
    const letters = new Set<string>();
    lettered.forEach((e, i) => {
      const hint = text(e.completion);
      const view = observerView(tasks[i], arithmetic, arithmetic.validate({}), 2, true);
      expect(text(e.prompt)).to.include(view.text);
      expect(hint.slice(2)).to.equal(view.candidates['abc'.indexOf(hint[0])]);
      letters.add(hint.slice(0, 2));
    });
    expect([...letters].sort()).to.deep.equal(['a:', 'b:', 'c:']);
    // marked: that share copies the marked task whatever the labels, the rest as labels say
    const pointing = (marked: number) => {
      const ex = observerExamples(
        tk,
        arithmetic,
        arithmetic.validate({}),
        tasks,
        { share: 1, labels: 'first', distractors: 2, solving: false, labelled: false, marked },
        new Rng(2),
      );
      return ex.filter((e, i) => text(e.completion) === tasks[i].prompt).length / ex.length;
    };
    // first alone: the marked one a third of the time; with marked 0.5: 0.5 + 0.5/3
    expect(pointing(0)).to.be.within(0.27, 0.4);
    expect(pointing(0.5)).to.be.within(0.6, 0.73);
    expect(() =>
      parsePretrainConfig(
        {
          name: 'x',
          task: { family: 'arithmetic' },
          corpus: { train: 10, heldOut: 2 },
          model: { dModel: 8, nHeads: 1, nLayers: 1, context: 32 },
          train: { steps: 1, batchSize: 1, lr: 0.1 },
          out: 'x',
          observer: { share: 0.5 },
          proposer: { share: 0.5 },
        },
        'cfg',
      ),
    ).to.throw(/observer writes with the proposer's token/);
  });

  it("a pretrain's observer section adds its examples beside the solver's, with the proposer's token", async () => {
    const tk = new CharTokenizer();
    const config = parsePretrainConfig(
      {
        name: 'x',
        task: { family: 'arithmetic' },
        corpus: { train: 40, heldOut: 4 },
        model: { dModel: 8, nHeads: 1, nLayers: 1, context: 32 },
        train: { steps: 1, batchSize: 1, lr: 0.1 },
        out: 'x',
        observer: { share: 0.5, labels: 'right' },
      },
      'cfg',
    );
    const corpus = pretrainCorpus(config, arithmetic);
    const { examples } = await buildExamples(
      config,
      { tokenizer: tk } as unknown as Trainee,
      arithmetic,
      corpus,
      () => {},
    );
    expect(examples).to.have.length(60);
    const observed = examples.slice(40);
    expect(observed.every((e) => e.prompt[1] === tk.prompt('', 'proposer')[1])).to.equal(true);
    expect(observed.map((e) => tk.decode(e.completion))).to.deep.equal(corpus.train.slice(0, 20).map((t) => t.prompt));
    const { probes } = await buildExamples(
      config,
      { tokenizer: tk } as unknown as Trainee,
      arithmetic,
      corpus,
      () => {},
    );
    expect(probes.observer?.tasks).to.deep.equal(corpus.test);
    expect(probes.observer?.corpus).to.deep.equal(config.observer);
    // a separate observer model: its examples alone, no solver corpus
    const alone = { ...config, observer: { ...config.observer!, solving: false } };
    const only = await buildExamples(alone, { tokenizer: tk } as unknown as Trainee, arithmetic, corpus, () => {});
    expect(only.examples.map((e) => tk.decode(e.completion))).to.deep.equal(
      observed.map((e) => tk.decode(e.completion)),
    );
  });

  it("measures a base's hints: the share that copy a shown sum and the marked one, the stop measure of an observer base", () => {
    const d = arithmetic.validate({});
    const tasks = Array.from({ length: 4 }, (_, i) => ({ ...arithmetic.generate(new Rng(i), d, i), id: `h${i}` }));
    const views = tasks.map((t) => observerView(t, arithmetic, d, 2));
    const other = (i: number) => views[i].candidates.find((c) => c !== tasks[i].prompt)!;
    // the marked sum (read trimmed), another shown sum, a sum not shown, a shown sum cut short
    const hints = [` ${tasks[0].prompt}`, other(1), '1+1=', tasks[3].prompt.slice(0, -1)];
    expect(copyShares(tasks, views, hints)).to.deep.equal({ copies: 0.5, marked: 0.25 });
    expect(() => copyShares(tasks, views, hints.slice(1))).to.throw(/3 hints and 4 views for 4 tasks/);
    // labelled: a copy is the candidate its letter names; the right sum under another letter is not one
    const lv = tasks.map((t) => observerView(t, arithmetic, d, 2, true));
    const named = (i: number, k: number) => `${'abc'[k]}:${lv[i].candidates[k]}`;
    const labelled = [
      named(0, lv[0].at),
      named(1, (lv[1].at + 1) % 3),
      `${'abc'[(lv[2].at + 1) % 3]}:${tasks[2].prompt}`,
      tasks[3].prompt,
    ];
    expect(copyShares(tasks, lv, labelled)).to.deep.equal({ copies: 0.5, marked: 0.25 });
    const e: BaseEvaluation = {
      heldOut: { pass1: 0.9 } as BaseEvaluation['heldOut'],
      sets: {},
      observer: { copies: 0.5, marked: 0.25 },
    };
    expect(evaluationMetrics(e)).to.include({ 'eval/observer/copies': 0.5, 'eval/observer/marked': 0.25 });
    expect(stopMeasure('eval/observer/copies', e)).to.equal(0.5);
    expect(stopMeasure('heldout', e)).to.equal(0.9);
    expect(() => stopMeasure('eval/critic/slip_accuracy', e)).to.throw(/no measure 'eval\/critic\/slip_accuracy'/);
  });

  it('a pretrain with an observer section measures its hints and can stop on them', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-observer-'));
    const config = (stopOn: string, stopAtAccuracy: number, name: string) =>
      PretrainSchema.parse({
        name,
        backend: TEST_BACKEND,
        workers: 1,
        task: { family: 'arithmetic' },
        corpus: { train: 16, heldOut: 8 },
        model: { dModel: 8, nHeads: 1, nLayers: 1, context: 32 },
        observer: { share: 1, solving: false },
        train: { steps: 2, batchSize: 4, lr: 0.001 },
        evalEvery: 1,
        stopOn,
        stopAtAccuracy,
        out: join(root, name),
        outDir: join(root, 'runs'),
      });
    const lines: string[] = [];
    const trained = await pretrain(config('eval/observer/copies', 1, 'a'), { log: (l) => lines.push(l) });
    expect(trained.steps).to.equal(2);
    expect(trained.observer!.copies).to.be.within(0, 1);
    expect(trained.observer!.marked).to.be.at.most(trained.observer!.copies);
    expect(lines.filter((l) => /^step \d+ .*observer_copies=\d\.\d{3} observer_marked=/.test(l))).to.have.length(3);
    // a stop already met ends before the first step; a measure the base lacks is an error
    expect((await pretrain(config('eval/observer/copies', 0, 'b'), { log: () => {} })).steps).to.equal(0);
    const lacking = await pretrain(config('eval/flow/planner_valid', 1, 'c'), { log: () => {} }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(lacking?.message).to.match(/no measure 'eval\/flow\/planner_valid'/);
  });

  it('checks its options at arena.options', () => {
    expect(() => makeArena('observer', { budget: 0 }, arithmetic)).to.throw(/arena\.options\.budget/);
    expect(() => makeArena('observer', { difficulty: { digits: 9 } }, arithmetic)).to.throw(
      /arena\.options\.difficulty/,
    );
  });
});
