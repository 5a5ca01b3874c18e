import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pretrain, pretrainCorpus, PretrainSchema, resumePretrain } from '../../src/pretrain/index.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { readTasksJsonl } from '../../src/tasks/jsonl.js';
import { tinyArchitecture, writeTinyHf } from '../models/hf-tiny.js';
import { buildModel } from '../../src/pretrain/setup.js';
import { trainingExamples } from '../../src/pretrain/corpus.js';
import { taskFamily } from '../../src/registry.js';
import { TEST_BACKEND } from '../needs.js';

// `coevolve pretrain` with `architecture:` makes a real-architecture base with a real
// tokenizer's files (here the byte-level BPE of hf-tiny.ts, so the test stays small; the
// shipped config uses Qwen3's), written as a Hugging Face directory.
describe('pretraining a new Hugging Face model', function () {
  this.timeout(120000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-prehf-'));
  const tokenizer = writeTinyHf(join(root, 'tok'));

  it('learns (loss falls), and writes a directory transformers reads, with the tokenizer and the held-out set', async () => {
    const out = join(root, 'base');
    const config = PretrainSchema.parse({
      name: 'tiny-qwen3',
      seed: 1,
      backend: TEST_BACKEND,
      task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } },
      corpus: { train: 60, heldOut: 20 },
      architecture: tinyArchitecture(tokenizer, 192),
      train: { steps: 60, batchSize: 16, lr: 0.01 },
      evalEvery: 30,
      maxNewTokens: 3,
      out,
      outDir: join(out, '..', 'runs'),
    });
    const losses: number[] = [];
    const r = await pretrain(config, {
      log: (l) => {
        const m = /loss=([\d.]+)/.exec(l);
        if (m) losses.push(Number(m[1]));
      },
    });
    expect(r.steps).to.equal(60);
    expect(losses).to.have.length(2);
    expect(losses[1]).to.be.below(losses[0]);
    for (const f of [
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
      'heldout.jsonl',
    ])
      expect(existsSync(join(out, f)), f).to.equal(true);
    const raw = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(raw).to.include({
      model_type: 'qwen3',
      vocab_size: 259,
      hidden_size: 32,
      num_key_value_heads: 1,
      tie_word_embeddings: true,
    });
    expect(raw.eos_token_id).to.deep.equal([258, 256]); // the tokenizer directory's generation_config.json eos ids
    const model = HfCausalLM.load(out);
    expect(model.config.layers).to.equal(1);
    model.dispose();
    expect(readTasksJsonl(join(out, 'heldout.jsonl'), 'arithmetic')).to.have.length(20);
  });

  it("verdicts: judge examples in the judge's format, never on a held-out prompt; held-out verdict accuracy reported", async () => {
    const config = PretrainSchema.parse({
      name: 'v',
      seed: 2,
      backend: TEST_BACKEND,
      task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } },
      corpus: { train: 80, heldOut: 16 },
      verdicts: { share: 0.25, heldOut: 8 },
      architecture: tinyArchitecture(tokenizer, 256),
      train: { steps: 10, batchSize: 16, lr: 0.01 },
      evalEvery: 10,
      maxNewTokens: 3,
      out: join(root, 'verdicts'),
      outDir: join(root, 'runs'),
    });
    const corpus = pretrainCorpus(config);
    expect(corpus.verdicts).to.have.length(20);
    expect(corpus.train).to.have.length(60);
    const held = new Set(corpus.test.map((t) => t.prompt));
    for (const v of corpus.verdicts) {
      expect(held.has(v.task.prompt), v.task.prompt).to.equal(false);
      const right = v.answers.indexOf(v.task.answer!);
      // one answer: y when it is the right one; two: the letter of the right one
      expect(v.verdict).to.equal(v.answers.length === 1 ? (right === 0 ? 'y' : 'n') : right === 0 ? 'A' : 'B');
      if (v.answers.length === 2) expect(v.answers[0]).to.not.equal(v.answers[1]);
    }
    expect(new Set(corpus.verdicts.map((v) => v.verdict)).size, 'all four verdicts occur').to.equal(4);
    expect(corpus.verdictTest.every((v) => held.has(v.task.prompt))).to.equal(true);
    // the same seed draws the same corpus; without verdicts the solver corpus is what it always was
    expect(pretrainCorpus(config)).to.deep.equal(corpus);
    const r = await pretrain(config, { log: () => {} });
    expect(r.verdicts).to.be.within(0, 1);
    expect(Number.isInteger(r.verdicts! * 8)).to.equal(true);
  });

  it('verdicts solve-first: the judge writes the sum, then compares it with the one shown; wrong ones are near misses; it trains from init:', async () => {
    const raw = {
      name: 'sf',
      seed: 3,
      backend: TEST_BACKEND,
      task: { family: 'arithmetic', difficulty: { digits: 2, operands: 2, operators: '+' } },
      corpus: { train: 200, heldOut: 16 },
      verdicts: { share: 0.5, pairwise: 0, heldOut: 8, working: 'solve-first', slips: 1 },
      architecture: tinyArchitecture(tokenizer, 192),
      train: { steps: 4, batchSize: 8, lr: 0.01 },
      evalEvery: 4,
      maxNewTokens: 4,
      out: join(root, 'sf'),
      outDir: join(root, 'runs'),
    };
    const config = PretrainSchema.parse(raw);
    const corpus = pretrainCorpus(config);
    expect(corpus.verdicts).to.have.length(100);
    for (const v of [...corpus.verdicts, ...corpus.verdictTest]) {
      expect(v.own).to.equal(v.task.answer);
      expect(v.answers).to.have.length(1);
      const [shown] = v.answers;
      expect(v.verdict).to.equal(shown === v.task.answer ? 'y' : 'n');
      // slips: 1, so every wrong answer is the sum with one digit changed
      if (shown !== v.task.answer) {
        expect(shown).to.have.length(v.task.answer!.length);
        expect([...shown].filter((ch, k) => ch !== v.task.answer![k])).to.have.length(1);
      }
    }
    const ys = corpus.verdicts.filter((v) => v.verdict === 'y').length;
    expect(ys).to.be.within(30, 70);
    // slip: adjacent changes the digit a step up or down (any other digit by default)
    const step = (c: typeof corpus) =>
      c.verdicts.flatMap((v) => {
        const [shown] = v.answers;
        const k = [...shown].findIndex((ch, i) => ch !== v.task.answer![i]);
        return k < 0 ? [] : [Math.abs(Number(shown[k]) - Number(v.task.answer![k]))];
      });
    expect(step(corpus).some((d) => d > 1)).to.equal(true);
    const adjacent = step(
      pretrainCorpus(PretrainSchema.parse({ ...raw, verdicts: { ...raw.verdicts, slip: 'adjacent' } })),
    );
    expect(adjacent.length).to.be.greaterThan(30);
    expect(adjacent.every((d) => d === 1)).to.equal(true);
    // each verdict is two examples, the judge's turns as the arena's solveFirst asks them
    const t = await buildModel(config);
    const family = taskFamily('arithmetic');
    const examples = trainingExamples(corpus, t.tokenizer, family);
    expect(examples).to.have.length(corpus.train.length + 2 * corpus.verdicts.length);
    const [v] = corpus.verdicts;
    const judgeTurns = examples.slice(corpus.train.length, corpus.train.length + 2).map((e) => ({
      prompt: t.tokenizer.decode(e.prompt),
      completion: t.tokenizer.decode(e.completion.slice(0, -1)),
    }));
    expect(judgeTurns[0].prompt).to.contain('You are the judge').and.contain(`user\n${v.task.prompt}\nassistant`);
    expect(judgeTurns[0].completion).to.equal(v.task.answer);
    expect(judgeTurns[1].prompt).to.contain(`user\n${v.task.prompt}${v.task.answer}|${v.answers[0]}?\nassistant`);
    expect(judgeTurns[1].completion).to.equal(v.verdict);
    expect(() => PretrainSchema.parse({ ...raw, verdicts: { ...raw.verdicts, pairwise: 0.5 } })).to.throw(
      /working: solve-first judges one answer at a time: set pairwise: 0/,
    );
    // init: the first test's base, its weights as training starts; another shape is refused by name
    const init = join(root, 'base');
    const from = { ...raw, task: { ...raw.task, difficulty: { digits: 1, operands: 2, operators: '+' } }, init };
    const started = await buildModel(PretrainSchema.parse(from));
    const base = HfCausalLM.load(init);
    const model = (started.model as HfPolicy).base;
    for (const [n, w] of Object.entries(base.weights))
      expect(Array.from(model.weights[n].dataSync()), n).to.deep.equal(Array.from(w.dataSync()));
    base.dispose();
    const other = PretrainSchema.parse({ ...from, architecture: { ...raw.architecture, hidden: 16 } });
    const err = await buildModel(other).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/init: .*base has hidden 32, architecture makes 16/);
  });

  it('sharedRows: the unused rows train as one and are written equal; a killed run resumes to the unkilled base; a second stage keeps them', async () => {
    const stage = (name: string, o: Record<string, unknown> = {}) =>
      PretrainSchema.parse({
        name,
        seed: 3,
        backend: TEST_BACKEND,
        task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } },
        corpus: { train: 60, heldOut: 10 },
        architecture: tinyArchitecture(tokenizer, 192),
        sharedRows: true,
        train: { steps: 20, batchSize: 8, lr: 0.01 },
        evalEvery: 10,
        maxNewTokens: 3,
        out: join(root, name),
        outDir: join(root, 'runs'),
        ...o,
      });
    const lines: string[] = [];
    await pretrain(stage('shared'), { log: (l) => lines.push(l) });
    expect(lines.join('\n')).to.match(
      /sharedRows: the examples use \d+ of 259 tokens; the head trains \d+ rows, \d+ of them as one/,
    );
    const table = (dir: string) => HfCausalLM.load(dir).storedTensors()['model.embed_tokens.weight'].data;
    const rows = (t: Float32Array) =>
      Array.from({ length: 259 }, (_, id) => Array.from(t.subarray(32 * id, 32 * id + 32)).join());
    const written = rows(table(join(root, 'shared')));
    const counts = new Map<string, number>();
    for (const r of written) counts.set(r, (counts.get(r) ?? 0) + 1);
    const largest = Math.max(...counts.values());
    expect(largest).to.be.above(200); // the bytes a corpus of 1-digit sums never uses, and the specials it does not
    expect(counts.size).to.equal(259 - largest + 1);
    // killed (here: a failing log line) after its checkpoint at step 10, then resumed
    const killed = stage('resumed');
    const err = await pretrain(killed, {
      progressEvery: 0,
      log: (l) => {
        if (l.startsWith('step 15/')) throw new Error('killed');
      },
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('killed');
    await resumePretrain(join(root, 'runs', 'pretrain', 'resumed'), { log: () => {} });
    expect(rows(table(join(root, 'resumed')))).to.deep.equal(written);
    // a second stage from it keeps its shared rows; from a base made without them, it is refused
    const next = await pretrain(
      stage('next', {
        init: join(root, 'shared'),
        task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+-' } },
      }),
      { log: () => {} },
    );
    expect(next.steps).to.equal(20);
    await pretrain(stage('plain', { sharedRows: false, train: { steps: 2, batchSize: 8, lr: 0.01 } }), {
      log: () => {},
    });
    const refused = await pretrain(stage('refused', { init: join(root, 'plain') }), { log: () => {} }).then(
      () => null,
      (e: Error) => e,
    );
    expect(refused?.message).to.match(/no rows are shared/);
  });

  it('refuses a config with both model and architecture, and an out folder of other files', async () => {
    const both = PretrainSchema.safeParse({
      name: 'x',
      task: { family: 'arithmetic' },
      corpus: { train: 1, heldOut: 1 },
      model: { dModel: 8, nHeads: 1, nLayers: 1, context: 8 },
      architecture: {
        kind: 'Qwen3ForCausalLM',
        hidden: 8,
        layers: 1,
        heads: 1,
        kvHeads: 1,
        intermediate: 8,
        tokenizer,
      },
      train: { steps: 1, batchSize: 1, lr: 1 },
      out: 'x',
    });
    expect(both.success).to.equal(false);
    expect(JSON.stringify(both.error?.issues)).to.match(/give model \(a TinyLM\) or architecture/);
    const foreign = writeTinyHf(join(root, 'foreign'));
    const config = PretrainSchema.parse({
      name: 'x',
      backend: TEST_BACKEND,
      task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } },
      corpus: { train: 60, heldOut: 20 },
      architecture: {
        kind: 'Qwen3ForCausalLM',
        hidden: 8,
        layers: 1,
        heads: 1,
        kvHeads: 1,
        intermediate: 8,
        tokenizer,
      },
      train: { steps: 1, batchSize: 1, lr: 1 },
      out: foreign,
    });
    const err = await pretrain(config, { log: () => {} }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/holds files that are not a base pretrain wrote; pass --overwrite/);
  });
});
