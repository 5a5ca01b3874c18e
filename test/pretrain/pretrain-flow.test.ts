import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entryValue, rightSteps } from '../../arenas/flow.js';
import { FlowCorpusSchema, flowExamples, flowShowings } from '../../arenas/flow-corpus.js';
import { pretrain, PretrainSchema } from '../../src/pretrain/index.js';
import { loadModel } from '../../src/models/store.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { Rng } from '../../src/util/rng.js';
import { TEST_BACKEND } from '../needs.js';

describe('pretrain corpus for the flow planner', function () {
  this.timeout(120000);

  it("shows each planner turn of a flow played by random steps, and teaches that step after the proposer's token", async () => {
    const rng = new Rng(3);
    const d = arithmetic.validate({ digits: 2, operands: 3, operators: '+' });
    const tasks = Array.from({ length: 20 }, (_, i) => arithmetic.generate(rng, d, i));
    const seen = await flowShowings(tasks, FlowCorpusSchema.parse({}), new Rng(4));
    expect(seen).to.have.length(40); // two steps a sum: random steps always run
    const second = seen.filter((s) => (s.o.memory as string[]).length === 4);
    expect(second).to.have.length(20);
    for (const s of second) {
      const memory = s.o.memory as string[];
      expect(memory.slice(0, 3).join('+')).to.equal(s.o.task.prompt.slice(0, -1));
      const [i, j] = memory[3].split('=')[0].split('+').map(Number);
      expect(entryValue(memory[3])).to.equal(entryValue(memory[i]) + entryValue(memory[j]));
    }
    const tokenizer = new CharTokenizer();
    const examples = flowExamples(tokenizer, seen);
    expect(examples[1].prompt.slice(0, 2)).to.deep.equal([tokenizer.bos, tokenizer.roleToken('proposer')]);
    expect(tokenizer.decode(examples[1].prompt)).to.equal(
      `${(seen[1].o.memory as string[]).map((e, i) => `${i}:${e}`).join('|')}>`,
    );
    expect(tokenizer.decode(examples[1].completion)).to.equal(seen[1].text);
  });

  it('with right: 1 every taught step is right, so every flow of the corpus adds up; with right: 0 none is chosen for it', async () => {
    const rng = new Rng(5);
    const d = arithmetic.validate({ digits: 2, operands: 3, operators: '+' });
    const tasks = Array.from({ length: 30 }, (_, i) => arithmetic.generate(rng, d, i));
    const right = await flowShowings(tasks, FlowCorpusSchema.parse({ right: 1 }), new Rng(6));
    for (const task of tasks) {
      const last = right.filter((s) => s.o.task === task).at(-1)!;
      const memory = [...(last.o.memory as string[]), `${last.text}=0`];
      expect(rightSteps(memory, 3), `${task.prompt} ${memory.join('|')}`).to.deep.equal([true, true]);
      const [i, j] = last.text.split('+').map(Number);
      expect(String(entryValue(memory[i]) + entryValue(memory[j]))).to.equal(task.answer);
    }
    const random = await flowShowings(tasks, FlowCorpusSchema.parse({}), new Rng(6));
    const wrong = tasks.filter((task) => {
      const last = random.filter((s) => s.o.task === task).at(-1)!;
      const memory = last.o.memory as string[];
      const [i, j] = last.text.split('+').map(Number);
      return String(entryValue(memory[i]) + entryValue(memory[j])) !== task.answer;
    });
    expect(wrong.length, 'random steps mostly miss').to.be.greaterThan(20);
  });

  it('pretrain makes a planner base from scratch, measured by its valid steps, not by solving', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-ptflow-'));
    const config = {
      name: 'f',
      backend: TEST_BACKEND,
      workers: 1,
      task: { family: 'arithmetic', difficulty: { digits: 2, operands: 3, operators: '+' } },
      corpus: { train: 8, heldOut: 4 },
      model: { dModel: 8, nHeads: 2, nLayers: 1, context: 40 },
      flow: {},
      train: { steps: 2, batchSize: 8, lr: 0.001 },
      evalEvery: 2,
      out: join(root, 'flow'),
      outDir: join(root, 'runs'),
    };
    const base = await pretrain(PretrainSchema.parse(config), { log: () => {} });
    expect(base.heldOut, 'sums are not solved by a planner').to.equal(undefined);
    expect(base.flow).to.be.within(0, 1);
    const saved = await loadModel(join(root, 'flow'));
    expect((saved.extra.flow as { heldOutValid: number }).heldOutValid).to.equal(base.flow);
    saved.model.dispose();
    const issues = PretrainSchema.safeParse({ ...config, proposer: { share: 0.5 } }).error?.issues ?? [];
    expect(issues.map((i) => i.message)[0]).to.match(/a flow base teaches its role only/);
  });
});
