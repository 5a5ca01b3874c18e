import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnswerRole, MemoryManagerRole } from '../../roles/memory.js';
import { CriticCorpusSchema, criticExamples, showings } from '../../arenas/critic/corpus.js';
import {
  MemoryCorpusSchema,
  memoryExamples,
  memoryRates,
  memoryShowings,
  ruleText,
} from '../../arenas/memory-corpus.js';
import { ruleManager, ruleReader } from '../../arenas/memory-rules.js';
import { pretrain, PretrainSchema } from '../../src/pretrain/index.js';
import { loadModel } from '../../src/models/store.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { dialogue } from '../../src/tasks/dialogue.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { Rng } from '../../src/util/rng.js';
import { TEST_BACKEND } from '../needs.js';

const tokenizer = new CharTokenizer();
const sums = (n: number) => {
  const rng = new Rng(3);
  const d = arithmetic.validate({ digits: 2, operands: 3, operators: '+', scratchpad: true });
  return Array.from({ length: n }, (_, i) => arithmetic.generate(rng, d, i));
};
const text = (tokens: readonly number[]) => tokenizer.decode(tokens.filter((t) => t !== tokenizer.eos));

describe('pretrain corpora for the critic and memory roles', function () {
  this.timeout(120000);

  it('a critic corpus shows each sum with working, planted or right, and teaches the true verdict under labels: right', async () => {
    const tasks = sums(40);
    const o = CriticCorpusSchema.parse({ labels: 'right' });
    const shown = await showings(tasks, o);
    expect(shown.length).to.be.at.least(tasks.length); // the planted working and the right one
    const verdicts = new Set(shown.map((s) => s.verdict));
    expect(verdicts.has('0'), 'some working is right').to.equal(true);
    expect(
      [...verdicts].some((v) => v !== '0'),
      'some working has a wrong step',
    ).to.equal(true);
    const { examples, dropped } = await criticExamples(tokenizer, tasks, o, new Rng(1), 64);
    expect(dropped).to.equal(0);
    expect(examples.map((e) => text(e.completion))).to.deep.equal(shown.map((s) => s.verdict));
    expect(tokenizer.decode(examples[0].prompt)).to.contain(shown[0].working);
  });

  it('random labels are verdicts in range; perStep asks y or n of every step after a check; a short context drops examples', async () => {
    const tasks = sums(20);
    const random = await criticExamples(tokenizer, tasks, CriticCorpusSchema.parse({}), new Rng(1), 64);
    const shown = await showings(tasks, CriticCorpusSchema.parse({}));
    random.examples.forEach((e, i) => expect(Number(text(e.completion))).to.be.within(0, shown[i].steps));
    const o = CriticCorpusSchema.parse({ checkFirst: true, perStep: true });
    const steps = await criticExamples(tokenizer, tasks, o, new Rng(1), 64);
    const asked = await showings(tasks, o);
    const stepCount = asked.reduce((n, s) => n + s.steps, 0);
    expect(steps.examples).to.have.length(asked.length + stepCount); // a check, then each step
    const answers = steps.examples.map((e) => text(e.completion));
    expect(answers.filter((a) => a === 'y' || a === 'n')).to.have.length(stepCount);
    const short = await criticExamples(tokenizer, tasks, CriticCorpusSchema.parse({}), new Rng(1), 20);
    expect(short.dropped).to.be.above(0);
    expect(short.examples.length + short.dropped).to.equal(random.examples.length);
    expect(() => CriticCorpusSchema.parse({ perStep: true })).to.throw(/perStep needs checkFirst/);
  });

  it('a memory corpus teaches both roles outputs that their own parsers accept', async () => {
    const rng = new Rng(1);
    const d = dialogue.validate({ sessions: 4 });
    const tasks = [0, 1].map((i) => dialogue.generate(rng, d, i));
    const seen = await memoryShowings(tasks, MemoryCorpusSchema.parse({}), new Rng(2));
    const roles = { memory: new MemoryManagerRole(), answer: new AnswerRole() };
    expect(new Set(seen.map((s) => s.role))).to.deep.equal(new Set(['memory', 'answer']));
    for (const s of seen) expect(roles[s.role].parse(s.text, s.o).valid, `${s.role}: ${s.text}`).to.equal(true);
    const ops = new Set(seen.filter((s) => s.role === 'memory').map((s) => s.text.split(' ')[0]));
    expect(ops.size, 'random operations of several kinds').to.be.at.least(3);
    const examples = memoryExamples(tokenizer, seen);
    expect(examples.map((e) => text(e.completion))).to.deep.equal(seen.map((s) => s.text));
    // reads: that share of the answers read the bank as the rule reader does, the rest at random
    const read = (reads: number) =>
      memoryShowings(tasks, MemoryCorpusSchema.parse({ reads }), new Rng(2)).then((all) => {
        const answers = all.filter((s) => s.role === 'answer');
        const named = answers.filter((s) => s.text === ruleReader(s.o.memory as string[], String(s.o.question)));
        return named.length / answers.length;
      });
    expect(await read(1)).to.equal(1);
    expect(await read(0)).to.be.below(0.7);
    // manages: that share of the operations are the rule manager's, the rest at random
    const manage = (manages: number) =>
      memoryShowings(tasks, MemoryCorpusSchema.parse({ manages }), new Rng(2)).then((all) => {
        const ops = all.filter((s) => s.role === 'memory');
        const ruled = ops.filter(
          (s) => s.text === ruleManager(s.o.memory as string[], String(s.o.fact), s.o.full === true),
        );
        return ruled.length / ops.length;
      });
    expect(await manage(1)).to.equal(1);
    expect(await manage(0)).to.be.below(0.5);
    // a base's rates: the rules' own outputs parse and agree; random ones parse and mostly do not agree; cut-off ones count as neither
    const ruleRates = memoryRates(
      seen,
      seen.map((s) => ({ text: ruleText(s.role, s.o), stopped: true })),
    );
    expect(ruleRates).to.deep.equal({ manager: 1, answer: 1, managerRule: 1, answerRule: 1 });
    const randomRates = memoryRates(
      seen,
      seen.map((s) => ({ text: s.text, stopped: true })),
    );
    expect(randomRates.manager).to.equal(1);
    expect(randomRates.managerRule).to.be.below(0.6);
    expect(
      memoryRates(
        seen,
        seen.map((s) => ({ text: ruleText(s.role, s.o), stopped: false })),
      ),
    ).to.deep.equal({
      manager: 0,
      answer: 0,
      managerRule: 0,
      answerRule: 0,
    });
  });

  it('refuses a critic base without a solver to start from, and two role corpora at once', () => {
    const base = {
      name: 'x',
      task: { family: 'arithmetic' },
      corpus: { train: 4, heldOut: 2 },
      model: { dModel: 8, nHeads: 2, nLayers: 1, context: 48 },
      train: { steps: 1, batchSize: 2, lr: 0.01 },
      out: 'x',
    };
    const issues = (c: object) =>
      PretrainSchema.safeParse({ ...base, ...c }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(issues({ critic: {} })).to.deep.equal([
      'init: a critic base starts from a solver that writes working: name its checkpoint, or give critic.share',
    ]);
    expect(issues({ critic: {}, memory: {}, init: 'c' })).to.include(
      'memory: one role corpus at a time: critic and memory are given',
    );
    expect(issues({ memory: {}, proposer: { share: 0.5 } })[0]).to.match(
      /^memory: a memory base teaches its role only/,
    );
  });

  it('pretrain makes a critic base from a shipped solver and a memory base from scratch, each measured on its role', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-ptroles-'));
    const quiet = () => {};
    const critic = await pretrain(
      PretrainSchema.parse({
        name: 'c',
        backend: TEST_BACKEND,
        workers: 1,
        task: { family: 'arithmetic', difficulty: { digits: 2, operands: 3, operators: '+', scratchpad: true } },
        corpus: { train: 32, heldOut: 8 },
        model: { dModel: 128, nHeads: 4, nLayers: 2, context: 40 },
        init: 'checkpoints/base-sum3-working',
        critic: { checkFirst: true },
        train: { steps: 2, batchSize: 8, lr: 0.0003 },
        evalEvery: 2,
        maxNewTokens: 24,
        out: join(root, 'critic'),
        outDir: join(root, 'runs'),
      }),
      { log: quiet },
    );
    for (const set of ['slip', 'random'] as const) {
      expect(critic.critic![set].verdict).to.be.within(0, 1);
      expect(critic.critic![set].check).to.be.within(0, 1);
    }
    const saved = await loadModel(join(root, 'critic'));
    expect(saved.extra.from).to.equal('checkpoints/base-sum3-working');
    expect((saved.extra.critic as { checkFirst: boolean }).checkFirst).to.equal(true);
    saved.model.dispose();
    const memory = await pretrain(
      PretrainSchema.parse({
        name: 'm',
        backend: TEST_BACKEND,
        workers: 1,
        task: { family: 'dialogue', difficulty: { sessions: 2 } },
        corpus: { train: 2, heldOut: 1 },
        model: { dModel: 8, nHeads: 2, nLayers: 1, context: 112 },
        memory: {},
        train: { steps: 2, batchSize: 8, lr: 0.001 },
        evalEvery: 2,
        out: join(root, 'memory'),
        outDir: join(root, 'runs'),
      }),
      { log: quiet },
    );
    expect(memory.heldOut, 'dialogues are not solved').to.equal(undefined);
    expect(memory.memory!.manager).to.be.within(0, 1);
    expect(memory.memory!.answer).to.be.within(0, 1);
  });
});
