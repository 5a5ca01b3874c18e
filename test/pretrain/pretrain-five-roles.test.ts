import { expect } from 'chai';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bankShowings, bankText, BankCorpusSchema } from '../../arenas/five-roles/corpus.js';
import { rightOp } from '../../arenas/five-roles/bank.js';
import { loadHfTokenizer } from '../../src/models/hf/text.js';
import { pretrain, pretrainCorpus, PretrainSchema } from '../../src/pretrain/index.js';
import { buildExamples, buildModel } from '../../src/pretrain/setup.js';
import { taskFamily } from '../../src/registry.js';
import { Rng } from '../../src/util/rng.js';
import type { Task } from '../../src/core/types.js';
import { tinyArchitecture, writeTinyHf } from '../models/hf-tiny.js';
import { TEST_BACKEND } from '../needs.js';

// One base for the five-roles arena: sums with working, the critic's turns (critic.share),
// solve-first verdicts on the working, proposals, and the manager's bank turns (bank:).
describe('a five-roles base', function () {
  this.timeout(180000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-five-'));
  const dir = writeTinyHf(join(root, 'tok'));
  const tk = loadHfTokenizer(dir);
  const config = (o: object = {}) =>
    PretrainSchema.parse({
      name: 'five',
      seed: 1,
      backend: TEST_BACKEND,
      workers: 1,
      task: { family: 'arithmetic', difficulty: { digits: 2, operands: 3, operators: '+', scratchpad: true } },
      corpus: { train: 40, heldOut: 8 },
      proposer: { share: 0.1 },
      verdicts: { share: 0.2, pairwise: 0, heldOut: 4, working: 'solve-first', slips: 0.5 },
      critic: { share: 0.25, checkFirst: true, perStep: true },
      bank: { share: 0.5, size: 3 },
      architecture: tinyArchitecture(dir, 320),
      train: { steps: 2, batchSize: 8, lr: 0.01 },
      evalEvery: 2,
      maxNewTokens: 20,
      out: join(root, 'base'),
      outDir: join(root, 'runs'),
      ...o,
    });

  it("the manager's showings follow the truth: the right operation keeps what most attempts missed", () => {
    const tasks: Task[] = Array.from({ length: 80 }, (_, i) => ({
      id: `t${i}`,
      family: 'arithmetic',
      prompt: `${10 + i}+20+30=`,
      answer: String(60 + i),
    }));
    const o = BankCorpusSchema.parse({ share: 0.5, size: 3, noise: 0 });
    const shown = bankShowings(tasks, o, new Rng(4));
    for (const s of shown) {
      const bank = s.observation.memory as string[];
      expect(bank.length).to.be.at.most(3);
      expect(new Set(bank).size).to.equal(bank.length);
      // without noise every mark is the truth: the judge's y's are a majority exactly when solved
      const [judge, critic] = (s.observation.fact as string).slice(s.task.prompt.length).split(':');
      expect(judge).to.equal(critic);
      expect(judge.split('').filter((c) => c === 'y').length * 2 > 4).to.equal(s.solved);
      const text = bankText(s, o);
      const op = rightOp(s.task, bank, 3, s.solved);
      expect(text.split(' ')[0]).to.equal(op);
      if (op === 'DELETE') expect(bank[Number(text.split(' ')[1])]).to.equal(s.task.prompt);
    }
    // every operation is taught
    expect(new Set(shown.map((s) => bankText(s, o).split(' ')[0]))).to.have.length(4);
    // retrieve: the same draws, each bank shown with the task's own entry last, which a DELETE then names
    const looked = bankShowings(tasks, { ...o, retrieve: 'last' }, new Rng(4));
    looked.forEach((s, i) => {
      const [before, after] = [shown[i].observation.memory as string[], s.observation.memory as string[]];
      expect([...after].sort()).to.deep.equal([...before].sort());
      expect(s.solved).to.equal(shown[i].solved);
      const own = after.indexOf(s.task.prompt);
      if (own >= 0) expect(own).to.equal(after.length - 1);
      else expect(after).to.deep.equal(before);
    });
    const deletes = looked.filter((s) => bankText(s, o).startsWith('DELETE'));
    expect(deletes).to.not.be.empty;
    // found: the same showings, each fact saying whether the task is in the bank shown
    const found = bankShowings(tasks, { ...o, retrieve: 'found' }, new Rng(4));
    found.forEach((s, i) => {
      expect(s.observation.memory).to.deep.equal(looked[i].observation.memory);
      const kept = (s.observation.memory as string[]).includes(s.task.prompt);
      expect(s.observation.fact).to.equal(`${looked[i].observation.fact as string}:${kept ? 'kept' : 'new'}`);
    });
    for (const s of deletes) expect(bankText(s, o)).to.equal(`DELETE ${(s.observation.memory as string[]).length - 1}`);
  });

  it('teaches all five formats beside each other, and measures the manager on held-out showings', async () => {
    const c = config();
    const trainee = await buildModel(c);
    const family = taskFamily('arithmetic');
    const corpus = pretrainCorpus(c, family);
    const { examples, probes } = await buildExamples(c, trainee, family, corpus, () => {});
    trainee.model.dispose();
    const texts = examples.map((e) => tk.decode(e.completion));
    expect(texts.filter((t) => /^(ADD it|UPDATE 0 it|DELETE \d|NOOP)$/.test(t))).to.have.length(20); // 0.5 x 40
    // solve-first verdicts: the judge's own turn is the task's working
    expect(corpus.verdicts.every((v) => v.own === v.task.target)).to.equal(true);
    expect(texts).to.include.members(corpus.verdicts.map((v) => v.task.target!));
    expect(probes.bank).to.have.length(8);
    expect(probes.critic!.slip.length).to.be.above(0);
    const issues = (o: object) => PretrainSchema.safeParse({ ...c, ...o }).error?.issues.map((x) => x.message);
    expect(issues({ memory: {} })).to.include('bank goes beside the solver corpus: drop memory');
    expect(issues({ critic: { checkFirst: true }, init: dir })).to.include(
      'bank goes beside the solver corpus: drop critic (or give critic.share)',
    );
  });

  it('pretrain records the held-out share of right operations beside the other roles', async () => {
    const e = await pretrain(config(), { log: () => {} });
    expect(e.bank).to.be.within(0, 1);
    expect(e.verdicts).to.be.within(0, 1);
    expect(e.heldOut!.pass1).to.be.within(0, 1);
    const record = JSON.parse(readFileSync(join(root, 'base', 'coevolve-pretrain.json'), 'utf8'));
    expect(record.bank).to.deep.include({ share: 0.5, size: 3, heldOutRightOp: e.bank });
  });
});
