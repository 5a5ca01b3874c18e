import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriticCorpusSchema, criticExamples, showings } from '../../arenas/critic/corpus.js';
import { MemoryCorpusSchema, memoryExamples, memoryShowings } from '../../arenas/memory-corpus.js';
import { CriticRole } from '../../roles/others.js';
import { MemoryManagerRole } from '../../roles/memory.js';
import { loadHfTokenizer } from '../../src/models/hf/text.js';
import { pretrain, pretrainCorpus, PretrainSchema } from '../../src/pretrain/index.js';
import { buildExamples, buildModel } from '../../src/pretrain/setup.js';
import { taskFamily } from '../../src/registry.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { dialogue } from '../../src/tasks/dialogue.js';
import { Rng } from '../../src/util/rng.js';
import { tinyArchitecture, writeTinyHf } from '../models/hf-tiny.js';
import { TEST_BACKEND } from '../needs.js';

// The critic and memory corpora on a Hugging Face model: the role's prompt goes through the
// tokenizer's chat template (a system turn of the role's instructions, the role's text as the
// user turn), each answer ends at the template's end of turn, and a pretrain with
// `architecture:` teaches and measures the role as it does a TinyLM.
describe('role corpora on a Hugging Face base', function () {
  this.timeout(180000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-hfroles-'));
  const dir = writeTinyHf(join(root, 'tok'));
  const tk = loadHfTokenizer(dir);
  const sums = (n: number) => {
    const rng = new Rng(3);
    const d = arithmetic.validate({ digits: 2, operands: 3, operators: '+', scratchpad: true });
    return Array.from({ length: n }, (_, i) => arithmetic.generate(rng, d, i));
  };
  const architecture = (maxPositions: number) => tinyArchitecture(dir, maxPositions);
  const sumsConfig = (o: object) =>
    PretrainSchema.parse({
      name: 'c',
      seed: 1,
      backend: TEST_BACKEND,
      workers: 1,
      task: { family: 'arithmetic', difficulty: { digits: 2, operands: 3, operators: '+', scratchpad: true } },
      corpus: { train: 40, heldOut: 6 },
      architecture: architecture(256),
      critic: { share: 0.25, checkFirst: true, perStep: true },
      train: { steps: 2, batchSize: 8, lr: 0.01 },
      evalEvery: 2,
      maxNewTokens: 20,
      out: join(root, 'critic'),
      outDir: join(root, 'runs'),
      ...o,
    });

  it("critic examples are the critic's chat turns, each answer ending at the end of turn", async () => {
    const tasks = sums(12);
    const o = CriticCorpusSchema.parse({ labels: 'right', checkFirst: true });
    const shown = await showings(tasks, o);
    const { examples, dropped } = await criticExamples(tk, tasks, o, new Rng(1), 256);
    expect(dropped).to.equal(0);
    expect(examples).to.have.length(2 * shown.length); // each showing's verdict, then its check
    const role = new CriticRole();
    shown.forEach((s, i) => {
      const { prompt, completion } = examples[2 * i];
      const raw = tk.decode(prompt);
      // the chat template's turns: the role's instructions as the system turn, the sum in the user turn
      expect(raw.startsWith(`system\n${role.instructions}\nuser\n`), raw).to.equal(true);
      expect(raw).to.contain(s.task.prompt);
      expect(raw.endsWith('\nassistant\n'), raw).to.equal(true);
      expect(completion.at(-1)).to.equal(tk.eos);
      expect(tk.decode(completion)).to.equal(s.verdict);
    });
    expect(tk.eos, "the end of turn, not the byte-level tokenizer's bytes").to.be.at.least(256);
    // the context counts a chat prompt's tokens: a short one leaves examples out
    const short = await criticExamples(tk, tasks, o, new Rng(1), 60);
    expect(short.dropped).to.be.above(0);
    expect(short.examples.length + short.dropped).to.equal(examples.length);
  });

  it("memory examples are each role's chat turns", async () => {
    const d = dialogue.validate({ sessions: 2 });
    const tasks = [dialogue.generate(new Rng(2), d, 0)];
    const seen = await memoryShowings(tasks, MemoryCorpusSchema.parse({}), new Rng(1));
    const examples = memoryExamples(tk, seen);
    expect(examples).to.have.length(seen.length);
    const manager = new MemoryManagerRole();
    const i = seen.findIndex((s) => s.role === 'memory');
    expect(tk.decode(examples[i].prompt).startsWith(`system\n${manager.instructions}\nuser\n`)).to.equal(true);
    expect(tk.decode(examples[i].completion)).to.equal(seen[i].text);
    expect(examples[i].completion.at(-1)).to.equal(tk.eos);
  });

  it('critic.share keeps the other training tasks as solver examples; no init is needed then', async () => {
    const config = sumsConfig({});
    const trainee = await buildModel(config);
    const family = taskFamily('arithmetic');
    const corpus = pretrainCorpus(config, family);
    const { examples, probes } = await buildExamples(config, trainee, family, corpus, () => {});
    const solved = corpus.train.slice(10); // 40 tasks, a quarter shown to the critic
    const solver = examples.slice(0, solved.length).map((e) => tk.decode(e.completion));
    expect(solver).to.deep.equal(solved.map((t) => t.target));
    const critic = examples.slice(solved.length);
    const checks = (await showings(corpus.train.slice(0, 10), config.critic!)).length;
    expect(critic.length).to.be.above(checks); // a check and each step per showing
    expect(probes.critic!.slip.length).to.be.at.least(corpus.test.length);
    trainee.model.dispose();
    const issues = (o: object) => PretrainSchema.safeParse({ ...config, ...o }).error?.issues.map((x) => x.message);
    expect(issues({ critic: { checkFirst: true } })).to.deep.equal([
      'a critic base starts from a solver that writes working: name its checkpoint, or give critic.share',
    ]);
    expect(issues({ critic: undefined, game: { game: 'kuhn' } })![0]).to.match(/^a game base is a TinyLM/);
  });

  it('pretrain with architecture makes a critic base measured on held-out slips, and a memory base', async () => {
    const critic = await pretrain(sumsConfig({}), { log: () => {} });
    expect(critic.heldOut!.pass1).to.be.within(0, 1);
    for (const set of ['slip', 'random'] as const) {
      expect(critic.critic![set].verdict).to.be.within(0, 1);
      expect(critic.critic![set].check).to.be.within(0, 1);
    }
    expect(existsSync(join(root, 'critic', 'model.safetensors'))).to.equal(true);
    const record = JSON.parse(readFileSync(join(root, 'critic', 'coevolve-pretrain.json'), 'utf8'));
    expect(record.critic).to.deep.include({ share: 0.25, perStep: true, heldOutAccuracy: critic.critic });
    const memory = await pretrain(
      PretrainSchema.parse({
        name: 'm',
        backend: TEST_BACKEND,
        workers: 1,
        task: { family: 'dialogue', difficulty: { sessions: 2 } },
        corpus: { train: 2, heldOut: 1 },
        architecture: architecture(512),
        memory: {},
        train: { steps: 2, batchSize: 8, lr: 0.001 },
        evalEvery: 2,
        out: join(root, 'memory'),
        outDir: join(root, 'runs'),
      }),
      { log: () => {} },
    );
    expect(memory.heldOut, 'dialogues are not solved').to.equal(undefined);
    expect(memory.memory!.manager).to.be.within(0, 1);
    expect(memory.memory!.answer).to.be.within(0, 1);
  });
});
