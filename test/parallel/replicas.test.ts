import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { generate } from '../../src/models/generate.js';
import { SupervisedTrainer } from '../../src/rl/supervised.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { Replicas } from '../../src/parallel/replicas.js';
import type { AggMode } from '../../src/rl/loss.js';
import { JointTrainer, type TrainerConfig } from '../../src/rl/trainer.js';
import { BatchingServer } from '../../src/serving/server.js';
import { batch, small } from '../rl/fixtures.js';
import { TEST_BACKEND } from '../needs.js';

const MODES: AggMode[] = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'];
const values = (m: TinyLM) => m.variables().map((v) => v.dataSync() as Float32Array);
const worst = (a: Float32Array[], b: Float32Array[]) =>
  Math.max(...a.map((x, i) => x.reduce((w, y, j) => Math.max(w, Math.abs(y - b[i][j])), 0)));

describe('parallel/Replicas: data-parallel updates and sharded rollouts', function () {
  this.timeout(120000);
  // two models with the same starting weights: `solo` trains on this thread alone, `shared` with two replicas
  let solo: TinyLM;
  let shared: TinyLM;
  let replicas: Replicas;

  before(async () => {
    await initBackend(TEST_BACKEND);
    solo = new TinyLM(small);
    shared = new TinyLM(small, solo.weights);
    replicas = await Replicas.start(2, { backend: TEST_BACKEND, accelerate: 'auto' }, { m: shared });
  });
  after(async () => {
    await replicas.close();
    solo.dispose();
    shared.dispose();
  });

  const config = (aggMode: AggMode, over: Partial<TrainerConfig> = {}): Partial<TrainerConfig> => ({
    lr: 1e-2,
    epsilon: 1e-3,
    aggMode,
    entropyCoef: 0.01,
    valueCoef: 0.5,
    klCoef: 0.1,
    maxGradNorm: 0.5,
    ...over,
  });

  for (const mode of MODES) {
    it(`${mode}: three threads (shards of 3, 2 and 2 samples) give the one-thread loss, statistics, gradients and step`, () => {
      const one = new JointTrainer({ m: solo }, config(mode));
      const three = new JointTrainer({ m: shared }, config(mode), replicas);
      const a = one.gradients('m', batch());
      const b = three.gradients('m', batch());
      expect(b.loss).to.be.closeTo(a.loss, 1e-5);
      for (const role of ['proposer', 'solver']) expect(b.roleLoss[role], role).to.be.closeTo(a.roleLoss[role], 1e-5);
      for (const key of ['clipfrac', 'ppoKl', 'entropy', 'kl', 'valueLoss'] as const)
        expect(b[key], key).to.be.closeTo(a[key]!, 1e-5);
      expect(Object.keys(b.grads).length).to.equal(Object.keys(a.grads).length);
      const names = solo.variables().map((v) => v.name),
        other = shared.variables().map((v) => v.name);
      expect(
        worst(
          names.map((n) => a.grads[n].dataSync() as Float32Array),
          other.map((n) => b.grads[n].dataSync() as Float32Array),
        ),
        'gradients',
      ).to.be.below(1e-5);
      tf.dispose([...Object.values(a.grads), ...Object.values(b.grads)]);
      // the step is the same, and the replicas act with the stepped weights afterwards
      one.step(batch());
      three.step(batch());
      expect(worst(values(solo), values(shared)), 'parameters after the step').to.be.below(1e-5);
      one.dispose();
      three.dispose();
    });
  }

  it('with micro-batches inside each shard the sums still agree, and no tensor is left behind', () => {
    const one = new JointTrainer({ m: solo }, config('seq-mean-token-mean'));
    const split = new JointTrainer({ m: shared }, config('seq-mean-token-mean', { microBatch: 1 }), replicas);
    const a = one.gradients('m', batch()),
      b = split.gradients('m', batch());
    expect(b.loss).to.be.closeTo(a.loss, 1e-5);
    const [ga, gb] = [solo, shared].map((m, k) =>
      m.variables().map((v) => [a, b][k].grads[v.name].dataSync() as Float32Array),
    );
    expect(worst(ga, gb)).to.be.below(1e-5);
    tf.dispose([...Object.values(a.grads), ...Object.values(b.grads)]);
    split.step(batch()); // Adam's moments now exist
    const before = tf.memory().numTensors;
    split.step(batch());
    expect(tf.memory().numTensors).to.equal(before);
    one.dispose();
    split.dispose();
  });

  it('supervised training: three threads take the one-thread steps', () => {
    shared.variables().forEach((v, i) => v.assign(solo.variables()[i]));
    replicas.publish('m');
    const examples = batch().filter((e) => e.completion.length > 0);
    const o = { batchSize: 5, lr: 1e-3, seed: 4 }; // Adam's first steps are lr x sign(g) where g is near 0: a small lr keeps float noise small
    const one = new SupervisedTrainer(solo, examples, o);
    const three = new SupervisedTrainer(shared, examples, o, { replicas, id: 'm' });
    for (let k = 0; k < 3; k++) expect(three.step(), `loss of step ${k}`).to.be.closeTo(one.step(), 1e-5);
    expect(worst(values(solo), values(shared)), 'parameters after three steps').to.be.below(1e-5);
    one.dispose();
    three.dispose();
  });

  it("replicas generate with the weights published last: greedy shards equal this thread's own", () => {
    const prompts = [
      [1, 3, 4],
      [1, 5],
      [1, 6, 7, 8],
    ];
    const greedy = { maxNewTokens: 5, temperature: 0, seed: 1 };
    const [r1, r2] = replicas.generate('m', [prompts, prompts.slice(1)], [greedy, greedy])();
    const local = generate(shared, prompts, greedy);
    expect(r1.map((g) => g.tokens)).to.deep.equal(local.map((g) => g.tokens));
    expect(r2.map((g) => g.tokens)).to.deep.equal(local.slice(1).map((g) => g.tokens));
    // a weight change reaches the replicas only when published
    tf.tidy(() => shared.variables()[0].assign(shared.variables()[0].mul(-3)));
    const changed = generate(shared, prompts, greedy);
    expect(
      changed.map((g) => g.tokens),
      'the change must alter greedy output for this check to mean anything',
    ).to.not.deep.equal(local.map((g) => g.tokens));
    expect(
      replicas
        .generate('m', [prompts], [greedy])()[0]
        .map((g) => g.tokens),
    ).to.deep.equal(local.map((g) => g.tokens));
    replicas.publish('m');
    expect(
      replicas
        .generate('m', [prompts], [greedy])()[0]
        .map((g) => g.tokens),
    ).to.deep.equal(changed.map((g) => g.tokens));
  });

  it('a batching server cuts a batch over the replicas: answers in request order, the same twice from one seed', async () => {
    const prompts = Array.from({ length: 10 }, (_, i) => [1, 3 + (i % 7), 3 + ((i * 5) % 7)]);
    const ask = async (seed: number, temperature: number) => {
      const server = new BatchingServer('m', shared, seed, 512, replicas);
      const out = await Promise.all(prompts.map((p) => server.generate(p, { maxNewTokens: 4, temperature })));
      expect(server.stats.batches, 'one batch, cut over three threads').to.equal(1);
      return out;
    };
    const greedy = await ask(1, 0);
    prompts.forEach((p, i) =>
      expect(greedy[i].tokens, `prompt ${i}`).to.deep.equal(
        generate(shared, [p], { maxNewTokens: 4, temperature: 0 })[0].tokens,
      ),
    );
    const [x, y, z] = [await ask(5, 1), await ask(5, 1), await ask(6, 1)];
    expect(y).to.deep.equal(x);
    expect(z.map((g) => g.tokens)).to.not.deep.equal(x.map((g) => g.tokens));
  });

  it('an error inside a replica comes back with its name; unknown models and counts are refused', async () => {
    expect(() => replicas.generate('m', [[[]]], [{ maxNewTokens: 2, temperature: 0 }])()).to.throw(
      /replica 1: .*prompt 0 is empty/,
    );
    // the link is free again after an error, and after a call whose answer nobody waited for
    expect(replicas.generate('m', [[[1, 3]]], [{ maxNewTokens: 2, temperature: 0 }])()[0]).to.have.length(1);
    replicas.generate('m', [[[1, 4]]], [{ maxNewTokens: 2, temperature: 0 }]);
    expect(
      replicas.generate('m', [[[1, 3]]], [{ maxNewTokens: 2, temperature: 0 }])()[0][0].tokens,
    ).to.have.length.within(1, 2);
    expect(() => replicas.publish('other')).to.throw(/no replica of model 'other'; replicated: m/);
    expect(() => replicas.generate('m', [[[1]], [[1]], [[1]]], [])).to.throw(/3 shards for 2 replicas/);
    for (const bad of [0, 1.5]) {
      let err: Error | undefined;
      await Replicas.start(bad, { backend: TEST_BACKEND, accelerate: 'auto' }, { m: shared }).catch((e: Error) => {
        err = e;
      });
      expect(err?.message).to.match(/count must be a positive integer/);
    }
  });
});
