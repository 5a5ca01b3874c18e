import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { readTaskFile } from '../../src/tasks/dataset.js';
import { math } from '../../src/tasks/math/index.js';
import { gsm8kSplit, shortSolution, wordProblem, wordProblems } from '../../src/tasks/word-problems.js';
import { loadPretrainConfig } from '../../src/pretrain/schema.js';
import { pretrainCorpus } from '../../src/pretrain/corpus.js';
import { taskFamily } from '../../src/registry.js';
import { Rng } from '../../src/util/rng.js';

const gsmFields = { prompt: 'question', answer: { field: 'answer', after: '####' } };
const d = wordProblems.defaults;

/** The calculator annotations of a GSM8K solution, `<<a op b=v>>`, checked by plain integer arithmetic. */
function annotations(solution: string): { a: number; op: string; b: number; v: number }[] {
  return [...solution.matchAll(/<<(\d+)([-+*/])(\d+)=(\d+)>>/g)].map((m) => ({
    a: Number(m[1]),
    op: m[2],
    b: Number(m[3]),
    v: Number(m[4]),
  }));
}
const apply = (a: number, op: string, b: number) =>
  op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : a / b;

describe('tasks/word-problems', () => {
  it('is a registered family whose difficulty is checked', () => {
    expect(taskFamily('word-problems')).to.equal(wordProblems);
    expect(() => wordProblems.validate({ steps: 3 })).to.throw(/steps/);
    expect(() => wordProblems.validate({ maxNumber: 20, colour: 1 })).to.throw(/colour|unrecognized/i);
  });

  it('writes GSM8K rows: sentences with right calculator annotations, then #### and the answer', () => {
    const { train } = gsm8kSplit(3, d, { train: 300, test: 0 });
    let twoSteps = 0;
    for (const row of train) {
      const lines = row.answer.split('\n');
      const last = /^#### (\d+)$/.exec(lines.at(-1)!);
      expect(last, row.answer).to.not.equal(null);
      const calcs = annotations(row.answer);
      expect(calcs.length)
        .to.equal(lines.length - 1)
        .and.to.be.within(1, 2);
      if (calcs.length === 2) twoSteps++;
      for (const c of calcs) {
        expect(apply(c.a, c.op, c.b), row.answer).to.equal(c.v);
        expect(c.v).to.be.at.least(0);
      }
      expect(calcs.at(-1)!.v).to.equal(Number(last![1]));
    }
    // both kinds are drawn, and every template (its operations in order) shows up
    expect(twoSteps).to.be.within(60, 240);
    const shapes = new Set(
      train.map((r) =>
        annotations(r.answer)
          .map((c) => c.op)
          .join(''),
      ),
    );
    expect([...shapes].sort()).to.deep.equal(['*', '*+', '*-', '+', '+-', '-', '/', '/+']);
  });

  it('keeps to one operation with steps: 1', () => {
    const rng = new Rng(5);
    for (let i = 0; i < 100; i++) expect(wordProblem(rng, { steps: 1, maxNumber: 20 }).steps).to.have.length(1);
  });

  it('is seeded: the same seed draws the same split, another seed another', () => {
    const a = gsm8kSplit(11, d, { train: 40, test: 20 });
    expect(gsm8kSplit(11, d, { train: 40, test: 20 })).to.deep.equal(a);
    expect(gsm8kSplit(12, d, { train: 40, test: 20 }).train).to.not.deep.equal(a.train);
    const rng = () => new Rng(4);
    const [x, y] = [rng(), rng()];
    expect(wordProblems.generate(x, d, 0)).to.deep.equal(wordProblems.generate(y, d, 0));
  });

  it('keeps held-out questions out of the training rows and out of `exclude`', () => {
    const first = gsm8kSplit(2, d, { train: 0, test: 50 });
    const exclude = new Set(first.test.slice(0, 25).map((r) => r.question));
    const split = gsm8kSplit(2, d, { train: 100, test: 50 }, exclude);
    const train = new Set(split.train.map((r) => r.question));
    expect(train.size).to.equal(100);
    expect(new Set(split.test.map((r) => r.question)).size).to.equal(50);
    for (const r of split.test) expect(train.has(r.question) || exclude.has(r.question), r.question).to.equal(false);
    expect(() => gsm8kSplit(1, { steps: 1, maxNumber: 10 }, { train: 1e5, test: 0 })).to.throw(/distinct problems/);
  });

  it('verifies by the math rules: the short solution, the GSM8K solution and the bare answer are right', () => {
    const rng = new Rng(9);
    for (let i = 0; i < 50; i++) {
      const t = wordProblems.generate(rng, d, i);
      expect(t.target).to.match(/\n#### \d+$/);
      expect(wordProblems.verify(t, t.target!)).to.equal(true);
      expect(wordProblems.verify(t, `The answer is ${t.answer}.`)).to.equal(true);
      expect(wordProblems.verify(t, `#### ${Number(t.answer) + 1}`)).to.equal(false);
      expect(wordProblems.parseAnswer(t.target!).value).to.equal(t.answer);
    }
    const p = wordProblem(new Rng(1), d);
    expect(shortSolution(p).split('\n').slice(0, -1)).to.deep.equal(p.steps.map((s) => `${s.expr}=${s.value}`));
    expect(() => wordProblems.verify({ id: 'x', family: 'math', prompt: '', answer: '1' }, '1')).to.throw(
      /family 'math'/,
    );
  });

  describe('the shipped files (configs/data/gsm8k-*)', () => {
    const path = (split: string, ext: string) => `configs/data/gsm8k-${split}.${ext}`;

    it('read through the GSM8K field map, as JSONL and as Parquet alike, and each solution verifies', async () => {
      for (const split of ['train', 'test']) {
        const jsonl = await readTaskFile(path(split, 'jsonl'), 'math', { fields: gsmFields });
        const parquet = await readTaskFile(path(split, 'parquet'), 'math', { fields: gsmFields });
        expect(parquet.map((t) => [t.prompt, t.answer])).to.deep.equal(jsonl.map((t) => [t.prompt, t.answer]));
        expect(jsonl.length).to.equal(split === 'train' ? 500 : 200);
        const rows = readFileSync(path(split, 'jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { question: string; answer: string });
        expect(Object.keys(rows[0]).sort()).to.deep.equal(['answer', 'question']);
        rows.forEach((r, i) => {
          expect(math.verify(jsonl[i], r.answer), r.answer).to.equal(true);
          expect(jsonl[i].answer).to.match(/^\d+$/);
        });
      }
    });

    it("are the script's output: the split of seed 7, held out from the base's pretraining corpus", () => {
      const corpus = pretrainCorpus(loadPretrainConfig('configs/pretrain/qwen3-chat-gsm.yaml'));
      const seen = new Set(corpus.train.map((t) => t.prompt));
      const split = gsm8kSplit(7, d, { train: 500, test: 200 }, seen);
      for (const name of ['train', 'test'] as const) {
        const rows = split[name];
        const shipped = readFileSync(path(name, 'jsonl'), 'utf8');
        expect(shipped).to.equal(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      }
      for (const r of split.test) expect(seen.has(r.question)).to.equal(false);
    });
  });
});
