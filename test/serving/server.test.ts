import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { BatchingServer } from '../../src/serving/server.js';

describe('BatchingServer', () => {
  let model: TinyLM;
  before(async () => {
    await initBackend('cpu');
    model = new TinyLM({ vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 24, seed: 5 });
  });
  after(() => model.dispose());

  const prompts = [[1, 4, 5], [1, 6, 7, 8, 9, 10], [1, 11], [1, 12, 13, 4, 5]];
  const greedy = { maxNewTokens: 6, temperature: 0 };

  it('gathers concurrent requests into one batch and answers each', async () => {
    const server = new BatchingServer('m', model);
    const out = await Promise.all(prompts.map((p) => server.generate(p, greedy)));
    expect(server.stats.batches).to.equal(1);
    expect(server.stats.requests).to.equal(4);
    expect(out.every((g) => g.tokens.length === 6)).to.equal(true);
  });

  it('gives the same greedy tokens batched as one by one', async () => {
    const batched = await Promise.all(prompts.map((p) => new BatchingServer('m', model).generate(p, greedy)));
    const server = new BatchingServer('m', model);
    const single = [];
    for (const p of prompts) single.push(await server.generate(p, greedy));
    expect(server.stats.batches).to.equal(4);
    const together = await Promise.all(prompts.map((p) => server.generate(p, greedy)));
    expect(together.map((g) => g.tokens)).to.deep.equal(single.map((g) => g.tokens));
    expect(batched.map((g) => g.tokens)).to.deep.equal(single.map((g) => g.tokens));
  });

  it('runs different sampling settings as separate batches', async () => {
    const server = new BatchingServer('m', model);
    await Promise.all([server.generate(prompts[0], greedy), server.generate(prompts[1], { maxNewTokens: 3, temperature: 1 })]);
    expect(server.stats.batches).to.equal(2);
  });

  it('scores completions in batches and rejects bad requests without stopping others', async () => {
    const server = new BatchingServer('m', model);
    const g = await server.generate(prompts[1], { maxNewTokens: 4, temperature: 0.8 });
    const [lp, badScore] = await Promise.allSettled([
      server.logProbs({ prompt: prompts[1], completion: g.tokens }, 0.8),
      server.logProbs({ prompt: prompts[1], completion: [1, 77] }, 0.8),
    ]);
    expect(badScore.status).to.equal('rejected');
    expect((badScore as PromiseRejectedResult).reason.message).to.match(/token id 77 outside vocabulary/);
    if (lp.status !== 'fulfilled') throw new Error('scoring failed');
    lp.value.forEach((x, i) => expect(x).to.be.closeTo(g.logProbs[i], 1e-4)); // the sampler's log-probs, recomputed
    const bad = server.generate([1, 99], greedy);
    const good = server.generate([1, 2, 3], greedy);
    await bad.then(() => expect.fail('should reject'), (e: Error) => expect(e.message).to.match(/token id 99/));
    expect((await good).tokens).to.have.length(6);
    await server.generate(new Array(20).fill(1), greedy).then(() => expect.fail('should reject'), (e: Error) => expect(e.message).to.match(/26 tokens exceed context 24/));
  });
});
