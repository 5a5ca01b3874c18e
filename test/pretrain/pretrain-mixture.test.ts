import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { pretrain, pretrainCorpus, PretrainSchema } from '../../src/pretrain/index.js';
import { loadModel } from '../../src/models/store.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { disjointSplit, readTasksJsonl } from '../../src/tasks/jsonl.js';
import type { Task } from '../../src/core/types.js';
import { TEST_BACKEND } from '../needs.js';

const base = {
  name: 'p',
  seed: 3,
  backend: TEST_BACKEND,
  task: { family: 'arithmetic', difficulty: { digits: 3, operands: 2, operators: '+' } },
  corpus: { train: 4000, heldOut: 64 },
  model: { dModel: 8, nHeads: 2, nLayers: 1, context: 32 },
  train: { steps: 2, batchSize: 8, lr: 0.01 },
  maxNewTokens: 5,
  out: 'unused',
};
const easyHard = [
  { difficulty: { digits: 1 }, weight: 3 },
  { difficulty: { minDigits: 3 }, weight: 1 },
];
/** 'a/b': the digits of each operand. */
const cell = (t: Task) =>
  t.prompt
    .slice(0, -1)
    .split('+')
    .map((x) => x.length)
    .join('/');
const share = (tasks: Task[], c: string) => tasks.filter((t) => cell(t) === c).length / tasks.length;

describe('pretrain corpus: mixtures, proposer examples and extra held-out sets', () => {
  it('draws each shipped config exactly as before (one cell makes no pick)', () => {
    for (const file of ['base-add2.yaml', 'base-sum3.yaml', 'base-sum3-working.yaml']) {
      const c = PretrainSchema.parse(parseYaml(readFileSync(join('configs', 'pretrain', file), 'utf8')));
      const corpus = pretrainCorpus(c);
      const split = disjointSplit(arithmetic, c.task.difficulty, c.corpus.train, c.corpus.heldOut, c.seed);
      expect(corpus.train, file).to.deep.equal(split.train);
      expect(corpus.test, file).to.deep.equal(split.test);
      expect(corpus.proposals).to.deep.equal([]);
      expect(corpus.sets).to.deep.equal({});
    }
  });

  it('draws the cells of a mixture in proportion to their weights, held-out set included', () => {
    const { train, test } = pretrainCorpus(PretrainSchema.parse({ ...base, mixture: easyHard }));
    expect(share(train, '1/1')).to.be.closeTo(0.75, 0.03);
    expect(share(train, '3/3')).to.be.closeTo(0.25, 0.03);
    expect(share(test, '1/1') + share(test, '3/3')).to.equal(1);
    expect(share(test, '3/3')).to.be.greaterThan(0.5); // few 1+1 prompts are left outside train
  });

  it('makes `share` of the examples proposer tasks, drawn from their own mixture', () => {
    const own = pretrainCorpus(
      PretrainSchema.parse({
        ...base,
        mixture: easyHard,
        proposer: { share: 0.2, mixture: [{ difficulty: { digits: 2, minDigits: 2 }, weight: 1 }] },
      }),
    );
    expect(own.proposals).to.have.length(800);
    expect(own.train).to.have.length(3200);
    expect(share(own.proposals, '2/2')).to.equal(1);
    expect(own.proposals.every((t) => t.answer !== undefined && t.target === undefined)).to.equal(true);
    const inherited = pretrainCorpus(PretrainSchema.parse({ ...base, mixture: easyHard, proposer: { share: 0.5 } }));
    expect(inherited.proposals).to.have.length(2000);
    expect(share(inherited.proposals, '3/3')).to.be.closeTo(0.25, 0.04);
  });

  it('draws extra held-out sets of distinct prompts, none in the corpus or its proposer completions', () => {
    const c = PretrainSchema.parse({
      ...base,
      mixture: easyHard,
      proposer: { share: 0.3 },
      heldOutSets: {
        harder: { difficulty: { minDigits: 3 }, count: 300 },
        easy: { difficulty: { digits: 2, minDigits: 2 }, count: 10 },
      },
    });
    const { train, proposals, sets } = pretrainCorpus(c);
    const corpus = new Set([...train, ...proposals].map((t) => t.prompt));
    for (const [name, n] of [
      ['harder', 300],
      ['easy', 10],
    ] as const) {
      expect(sets[name], name).to.have.length(n);
      expect(new Set(sets[name].map((t) => t.prompt)).size, name).to.equal(n);
      expect(
        sets[name].filter((t) => corpus.has(t.prompt)),
        name,
      ).to.deep.equal([]);
    }
    expect(sets.harder.every((t) => cell(t) === '3/3') && sets.easy.every((t) => cell(t) === '2/2')).to.equal(true);
    expect(sets.harder[0].id).to.equal('arithmetic-harder-0');
    expect(() =>
      pretrainCorpus(PretrainSchema.parse({ ...c, heldOutSets: { tiny: { difficulty: { digits: 1 }, count: 1 } } })),
    ).to.throw(/heldOutSets\.tiny: found only 0 of 1 prompts outside the corpus/);
  });

  it('keeps the held-out set of heldOutFile and its prompts out of every example, verdicts too', () => {
    // 2-digit sums, where a corpus of 4,000 covers most of the 8,100 prompts: a held-out set
    // drawn by another config would mostly be in this corpus
    const d = { digits: 2, operands: 2, operators: '+' };
    const first = pretrainCorpus(PretrainSchema.parse({ ...base, task: { family: 'arithmetic', difficulty: d } }));
    const dir = mkdtempSync(join(tmpdir(), 'heldout-file-'));
    const file = join(dir, 'heldout.jsonl');
    writeFileSync(file, first.test.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const other = {
      ...base,
      seed: 4,
      task: { family: 'arithmetic', difficulty: d },
      proposer: { share: 0.1 },
      verdicts: { share: 0.5, pairwise: 0 },
    };
    const drawn = pretrainCorpus(PretrainSchema.parse(other));
    const held = new Set(first.test.map((t) => t.prompt));
    const overlap = (c: typeof drawn) =>
      [...c.train, ...c.proposals, ...c.verdicts.map((v) => v.task)].filter((t) => held.has(t.prompt)).length;
    expect(overlap(drawn)).to.be.greaterThan(20);
    const kept = pretrainCorpus(
      PretrainSchema.parse({ ...other, corpus: { ...other.corpus, heldOut: 32, heldOutFile: file } }),
    );
    expect(kept.test.map((t) => t.prompt)).to.deep.equal(first.test.slice(0, 32).map((t) => t.prompt));
    expect(kept.test.map((t) => t.answer)).to.deep.equal(first.test.slice(0, 32).map((t) => t.answer));
    expect(
      new Set([...kept.train, ...kept.proposals, ...kept.verdicts.map((v) => v.task)].map((t) => t.prompt)).size,
    ).to.be.greaterThan(2000);
    // the first 32 are held out, so only the rest of the file may appear
    const first32 = new Set(first.test.slice(0, 32).map((t) => t.prompt));
    expect(
      [...kept.train, ...kept.proposals, ...kept.verdicts.map((v) => v.task)].filter((t) => first32.has(t.prompt)),
    ).to.have.length(0);
    expect(kept.verdictTest.every((v) => first32.has(v.task.prompt))).to.equal(true);
    expect(() =>
      pretrainCorpus(PretrainSchema.parse({ ...other, corpus: { ...other.corpus, heldOut: 65, heldOutFile: file } })),
    ).to.throw(/heldOutFile: .* has 64 tasks, fewer than corpus.heldOut \(65\)/);
  });

  it('names the field of a bad cell, set name or stop set', () => {
    expect(() =>
      pretrainCorpus(
        PretrainSchema.parse({
          ...base,
          mixture: [easyHard[0], { difficulty: { digits: 1, minDigits: 2 }, weight: 1 }],
        }),
      ),
    ).to.throw(/mixture\[1\]\.difficulty\.minDigits: must be at most digits \(1\), got 2/);
    expect(() =>
      pretrainCorpus(
        PretrainSchema.parse({
          ...base,
          proposer: { share: 0.1, mixture: [{ difficulty: { digitz: 2 }, weight: 1 }] },
        }),
      ),
    ).to.throw(/proposer\.mixture\[0\]\.difficulty\.digitz: unrecognized key \(did you mean "digits"\?\)/);
    expect(PretrainSchema.safeParse({ ...base, heldOutSets: { heldout: { count: 1 } } }).success).to.equal(false);
    expect(PretrainSchema.safeParse({ ...base, proposer: { share: 1 } }).success).to.equal(false);
    expect(PretrainSchema.safeParse({ ...base, mixture: [{ difficulty: {}, weight: 0 }] }).success).to.equal(false);
  });

  it('trains, logs each set and the proposer, and saves the sets beside the checkpoint', async function () {
    this.timeout(60000);
    const out = join(mkdtempSync(join(tmpdir(), 'coevolve-ptm-')), 'base');
    const lines: string[] = [];
    const c = PretrainSchema.parse({
      ...base,
      corpus: { train: 200, heldOut: 8 },
      mixture: easyHard,
      proposer: { share: 0.25, samples: 8 },
      heldOutSets: { harder: { difficulty: { minDigits: 3 }, count: 6 } },
      evalEvery: 1,
      out,
      outDir: join(out, '..', 'runs'),
    });
    const r = await pretrain(c, { log: (l) => lines.push(l) });
    const steps = lines.filter((l) => l.startsWith('step '));
    expect(steps).to.have.length(3); // before training, then after each step
    expect(lines[lines.length - 1]).to.match(/^base written to .*base \(2 steps\)$/);
    expect(steps[2]).to.match(
      /^step 2 loss=\S+ heldout_pass1=\S+ harder_pass1=\S+ proposer_valid=\S+ proposer_cells=\{.*\} \d+s$/,
    );
    expect(r.proposer?.samples).to.equal(8);
    expect(Object.keys(r.heldOutSets)).to.deep.equal(['harder']);
    const loaded = await loadModel(out);
    loaded.model.dispose();
    expect(Object.keys(loaded.attachments).sort()).to.deep.equal(['harder.jsonl', 'heldout.jsonl']);
    expect(readTasksJsonl(join(out, 'harder.jsonl'), 'arithmetic').map((t) => t.prompt)).to.deep.equal(
      pretrainCorpus(c).sets.harder.map((t) => t.prompt),
    );
    expect(loaded.extra.heldOutSets).to.have.property('harder');
    const bad = await pretrain({ ...c, stopOn: 'hardr', out: `${out}-2` }, { log: (l) => lines.push(`2: ${l}`) }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(bad?.message).to.match(
      /^stopOn: 'hardr' is not heldout, an eval\/ measure or a heldOutSets name \(harder\)/,
    );
    expect(lines.filter((l) => l.startsWith('2: '))).to.deep.equal([]);
  });
});
