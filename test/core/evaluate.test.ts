import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import type { Task } from '../../src/core/types.js';
import { evaluateSolver, solveEpisodes } from '../../src/core/evaluate.js';
import { evaluateNll, trainSupervised } from '../../src/rl/supervised.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { arithmetic } from '../../src/tasks/index.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';

// A tiny model is taught, by supervised training, to answer 8 sums: the first 4 with the right
// answer, the next 3 with a wrong one (answer + 1), and the last with the right digits but no
// end of sequence within maxNewTokens (an invalid action). Greedy and sampled answers are then
// the taught ones, so pass@1 and maj@N are both exactly 4 / 8 and 7 of 8 answers are valid.
describe('engine/evaluateSolver', () => {
  const tokenizer = new CharTokenizer({ chars: '0123456789+=', roles: ['solver'] });
  const sums = [
    [1, 2],
    [3, 4],
    [5, 1],
    [2, 7],
    [4, 4],
    [6, 3],
    [8, 1],
    [999, 1],
  ];
  const tasks: Task[] = sums.map(([a, b], i) => ({
    id: `sum-${i}`,
    family: 'arithmetic',
    prompt: `${a}+${b}=`,
    answer: String(a + b),
  }));
  const taught = sums.map(([a, b], i) => String(a + b + (i >= 4 && i < 7 ? 1 : 0)));
  const stops = tasks.map((_, i) => i < 7); // '1000' fills all 4 new tokens: no room for EOS
  const maxNewTokens = 4;
  let model: TinyLM;

  before(async function () {
    this.timeout(60_000);
    await initBackend(TEST_BACKEND);
    model = new TinyLM({ vocabSize: tokenizer.size, dModel: 16, nHeads: 2, nLayers: 1, context: 12, seed: 1 });
    const examples = tasks.map((t, i) => ({
      prompt: tokenizer.prompt(t.prompt, 'solver'),
      completion: [...tokenizer.encode(taught[i]), ...(stops[i] ? [tokenizer.eos] : [])],
    }));
    trainSupervised(model, examples, { steps: 100, batchSize: 8, lr: 3e-2, seed: 1 });
    expect(evaluateNll(model, examples), 'the model has learned the taught answers').to.be.below(0.01);
  });
  after(() => model.dispose());

  it('the greedy answers are the taught ones (the premise of the other tests)', async () => {
    const episodes = await solveEpisodes(model, tokenizer, arithmetic, tasks, 1, { temperature: 0, maxNewTokens });
    const byTask = new Map(episodes.map((e) => [e.task.id, e.turns[0]]));
    expect(tasks.map((t) => byTask.get(t.id)!.text)).to.deep.equal(taught);
    expect(tasks.map((t) => byTask.get(t.id)!.action.valid)).to.deep.equal(stops);
  });

  it('pass@1, maj@N and mean@N count the valid right answers: 4 of 8', async () => {
    // guards against: hard-coding pass1 or majN (e.g. to 0), and counting the unfinished '1000' as right
    const r = await evaluateSolver(model, tokenizer, arithmetic, tasks, {
      samples: 5,
      maxNewTokens,
      temperature: 1,
      seed: 2,
    });
    const { meanN, ...rest } = r;
    expect(rest).to.deep.equal({ tasks: 8, pass1: 0.5, majN: 0.5, samples: 5, validRate: 7 / 8 });
    // each of the 40 sampled answers counted: the taught ones are nearly certain, so about half are right
    expect(meanN).to.be.closeTo(0.5, 0.05);
    // and at a temperature that flattens the answers, fewer are right than the majority gets
    const hot = await evaluateSolver(model, tokenizer, arithmetic, tasks, {
      samples: 5,
      maxNewTokens,
      temperature: 50,
      seed: 2,
    });
    expect(hot.meanN).to.be.below(0.3);
  });

  it('without samples there is no maj@N, and an empty task list is refused', async () => {
    const r = await evaluateSolver(model, tokenizer, arithmetic, tasks.slice(0, 4), { samples: 0, maxNewTokens });
    expect(r).to.deep.equal({ tasks: 4, pass1: 1, samples: 0, validRate: 1 });
    await evaluateSolver(model, tokenizer, arithmetic, [], { samples: 0, maxNewTokens }).then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.match(/no tasks/),
    );
  });
});
