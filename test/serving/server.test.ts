import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { TinyLM } from '../../src/models/tinylm.js';
import type { PolicyInput } from '../../src/models/types.js';
import { BatchingServer } from '../../src/serving/server.js';
import { TEST_BACKEND } from '../needs.js';

/** Records the batch size of every model.score call until restored. */
function spyOnScore(model: TinyLM): { sizes: number[]; restore: () => void } {
  const sizes: number[] = [];
  const score = model.score.bind(model);
  model.score = (inputs, temperature) => {
    sizes.push(inputs.length);
    return score(inputs, temperature);
  };
  return {
    sizes,
    restore: () => {
      delete (model as Partial<TinyLM>).score;
    },
  };
}

function expectCloseRows(got: number[][], want: number[][], what: string): void {
  expect(
    got.map((r) => r.length),
    `${what}: lengths`,
  ).to.deep.equal(want.map((r) => r.length));
  got.forEach((row, i) =>
    row.forEach((x, j) => expect(x, `${what}: request ${i}, token ${j}`).to.be.closeTo(want[i][j], 1e-5)),
  );
}

describe('BatchingServer', () => {
  let model: TinyLM;
  before(async () => {
    await initBackend(TEST_BACKEND);
    model = new TinyLM({ vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 24, seed: 5 });
  });
  after(() => model.dispose());

  const prompts = [
    [1, 4, 5],
    [1, 6, 7, 8, 9, 10],
    [1, 11],
    [1, 12, 13, 4, 5],
  ];
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

  it('batched generation gives each request the log-probs it gets alone, not only the tokens', async () => {
    // guards against: batching that changes a row's numbers (padding or cache offsets) while the argmax survives
    const server = new BatchingServer('m', model);
    const together = await Promise.all(prompts.map((p) => server.generate(p, greedy)));
    const alone = [];
    for (const p of prompts) alone.push(await server.generate(p, greedy));
    expect(together.map((g) => g.tokens)).to.deep.equal(alone.map((g) => g.tokens));
    expectCloseRows(
      together.map((g) => g.logProbs),
      alone.map((g) => g.logProbs),
      'log-probs',
    );
    expectCloseRows(
      together.map((g) => g.entropy),
      alone.map((g) => g.entropy),
      'entropy',
    );
  });

  const scoreInputs: PolicyInput[] = [
    { prompt: [1, 4, 5], completion: [7, 8, 9, 3] },
    { prompt: [1, 6, 7, 8, 9, 10], completion: [2] },
    { prompt: [1, 11], completion: [12, 13] },
    { prompt: [1, 12, 13, 4, 5], completion: [6, 6, 6] },
    { prompt: [1, 2], completion: [3, 4, 5, 6, 7] },
  ];

  it('scores concurrent requests in one pass, each getting the log-probs it gets alone', async () => {
    // guards against: answering a batch's requests with another row's log-probs, or not batching them
    const server = new BatchingServer('m', model);
    const spy = spyOnScore(model);
    try {
      const together = await Promise.all(scoreInputs.map((r) => server.logProbs(r, 0.8)));
      expect(spy.sizes).to.deep.equal([5]);
      const alone = [];
      for (const r of scoreInputs) alone.push(await server.logProbs(r, 0.8));
      expect(spy.sizes).to.deep.equal([5, 1, 1, 1, 1, 1]);
      expectCloseRows(together, alone, 'batched scoring');
    } finally {
      spy.restore();
    }
  });

  it('splits requests into batches of at most maxBatch and serves every one', async function () {
    this.timeout(10_000); // a request left out of every batch never resolves
    // guards against: ignoring maxBatch, or slicing the queue so that a request is dropped or repeated
    const many = [...prompts, [1, 3, 3, 3]];
    const server = new BatchingServer('m', model, 0, 2);
    const together = await Promise.all(many.map((p) => server.generate(p, greedy)));
    expect(server.stats).to.deep.include({ batches: 3, requests: 5 });
    const alone = [];
    for (const p of many) alone.push(await new BatchingServer('m', model).generate(p, greedy));
    expect(together.map((g) => g.tokens)).to.deep.equal(alone.map((g) => g.tokens));
    expectCloseRows(
      together.map((g) => g.logProbs),
      alone.map((g) => g.logProbs),
      'log-probs',
    );
    const spy = spyOnScore(model);
    try {
      const scored = await Promise.all(scoreInputs.map((r) => server.logProbs(r, 1)));
      expect(spy.sizes).to.deep.equal([2, 2, 1]);
      const single = [];
      for (const r of scoreInputs) single.push(await server.logProbs(r, 1));
      expectCloseRows(scored, single, 'scoring in batches of 2');
    } finally {
      spy.restore();
    }
  });

  it('scores at two temperatures at once, each request at its own', async () => {
    // guards against: scoring a mixed queue in one batch at the first request's temperature
    const server = new BatchingServer('m', model);
    const temps = scoreInputs.map((_, i) => (i % 2 ? 0.5 : 1.5));
    const together = await Promise.all(scoreInputs.map((r, i) => server.logProbs(r, temps[i])));
    const alone = [];
    for (const [i, r] of scoreInputs.entries()) alone.push(await server.logProbs(r, temps[i]));
    expectCloseRows(together, alone, 'mixed temperatures');
    const other = await server.logProbs(scoreInputs[0], 0.5);
    expect(Math.abs(other[0] - together[0][0])).to.be.greaterThan(1e-3); // the temperature matters here
  });

  it('runs different sampling settings as separate batches', async () => {
    const server = new BatchingServer('m', model);
    await Promise.all([
      server.generate(prompts[0], greedy),
      server.generate(prompts[1], { maxNewTokens: 3, temperature: 1 }),
    ]);
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
    await bad.then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.match(/token id 99/),
    );
    expect((await good).tokens).to.have.length(6);
    await server.generate(new Array(20).fill(1), greedy).then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.match(/26 tokens exceed context 24/),
    );
  });
});
