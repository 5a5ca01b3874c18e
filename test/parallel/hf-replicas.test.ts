import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { generate } from '../../src/models/generate.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { describeCopies } from '../../src/parallel/copies.js';
import { Replicas } from '../../src/parallel/replicas.js';
import { JointTrainer, type TrainerConfig } from '../../src/rl/trainer.js';
import { BatchingServer } from '../../src/serving/server.js';
import { Rng } from '../../src/util/rng.js';
import { batch } from '../rl/fixtures.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { TEST_BACKEND } from '../needs.js';

const values = (m: HfPolicy) => m.variables().map((v) => v.dataSync() as Float32Array);
const worst = (a: Float32Array[], b: Float32Array[]) =>
  Math.max(...a.map((x, i) => x.reduce((w, y, j) => Math.max(w, Math.abs(y - b[i][j])), 0)));
const setup = { backend: TEST_BACKEND, accelerate: 'auto' as const };
// Adam's first step is about lr x sign(g): a larger epsilon keeps the float noise of near-zero gradients small
const config: Partial<TrainerConfig> = {
  lr: 0.05,
  epsilon: 1e-3,
  aggMode: 'seq-mean-token-mean',
  entropyCoef: 0.01,
  klCoef: 0.1,
};
const prompts = [
  [104, 105, 32],
  [257, 97],
  [120, 43, 121, 61],
  [50, 51, 52],
  [258, 65],
];
const tokens = (gs: { tokens: number[] }[]) => gs.map((g) => g.tokens);

/** Gives every adapter variable seeded random values (a new adapter's B is zero, so A would get no gradient). */
function randomise(adapter: LoraAdapter, seed: number): void {
  const rng = new Rng(seed);
  for (const v of adapter.variables())
    v.assign(
      tf.tensor(
        Float32Array.from({ length: v.size }, () => 0.3 * rng.normal()),
        v.shape,
      ),
    );
}

/**
 * The one-thread gradients of the fixture batch against those summed over three threads, then
 * the step, then what the replicas generate with the stepped weights: all as on one thread.
 */
function checkUpdate(solo: HfPolicy, shared: HfPolicy, replicas: Replicas): void {
  const one = new JointTrainer({ m: solo }, config);
  const three = new JointTrainer({ m: shared }, config, replicas);
  const a = one.gradients('m', batch());
  const b = three.gradients('m', batch());
  expect(b.loss).to.be.closeTo(a.loss, 1e-5);
  const grads = (m: HfPolicy, g: tf.NamedTensorMap) => m.variables().map((v) => g[v.name].dataSync() as Float32Array);
  const scale = Math.max(...grads(solo, a.grads).map((g) => Math.max(...g.map(Math.abs))));
  expect(scale, 'the gradients must not vanish for this check to mean anything').to.be.above(1e-3);
  expect(worst(grads(solo, a.grads), grads(shared, b.grads)), 'gradients').to.be.below(1e-5 + 1e-4 * scale);
  tf.dispose([...Object.values(a.grads), ...Object.values(b.grads)]);
  const greedy = { maxNewTokens: 6, temperature: 0 };
  const before = tokens(generate(shared, prompts, greedy));
  one.step(batch());
  three.step(batch());
  expect(worst(values(solo), values(shared)), 'weights after the step').to.be.below(1e-4);
  const after = tokens(generate(shared, prompts, greedy));
  expect(after, 'the step must change greedy output for the next check to mean anything').to.not.deep.equal(before);
  const [r1, r2] = replicas.generate('m', [prompts, prompts.slice(2)], [greedy, greedy])();
  expect(tokens(r1), 'replica 1 after the update').to.deep.equal(after);
  expect(tokens(r2), 'replica 2 after the update').to.deep.equal(after.slice(2));
  one.dispose();
  three.dispose();
}

describe('parallel/Replicas of Hugging Face policies', function () {
  this.timeout(180000);
  let dir: string;

  before(async () => {
    await initBackend(TEST_BACKEND);
    dir = writeTinyHf(join(mkdtempSync(join(tmpdir(), 'coevolve-hf-replicas-')), 'tiny'), { seed: 3 });
  });
  after(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  describe('LoRA on a frozen base, its matrices outside the heap', () => {
    let base: HfCausalLM;
    let solo: HfPolicy;
    let shared: HfPolicy;
    let replicas: Replicas;

    before(async () => {
      // host matrices whether or not a native sgemm is loaded (without one their products are a JS loop)
      base = HfCausalLM.load(dir, { frozen: true, host: true });
      const lora = { r: 4, alpha: 8, targetModules: 'all-linear' };
      solo = new HfPolicy(base, new LoraAdapter(base.config, lora, 5));
      shared = new HfPolicy(base, new LoraAdapter(base.config, lora, 5));
      randomise(solo.adapter!, 9);
      randomise(shared.adapter!, 9);
      replicas = await Replicas.start(2, setup, { m: shared });
    });
    after(async () => {
      await replicas.close();
      solo.dispose();
      shared.dispose();
      base.dispose();
    });

    it('the base is loaded onto shared memory and described once for the policies on it, its matrices adopted, not copied', () => {
      const names = Object.keys(base.host);
      expect(names).to.include('model.embed_tokens.weight');
      for (const n of names) expect(base.host[n].data.buffer, n).to.be.instanceOf(SharedArrayBuffer);
      const copies = describeCopies({ m: shared, n: solo });
      expect(copies.bases).to.have.length(1);
      expect(copies.models.n).to.deep.include({ kind: 'hf', base: 0, lora: solo.adapter!.config });
      for (const n of names) expect(copies.bases[0].tensors[n].data, n).to.equal(base.host[n].data);
    });

    it('replicas sample what this thread samples from the same seed, greedy or not', () => {
      for (const o of [
        { maxNewTokens: 6, temperature: 0 },
        { maxNewTokens: 6, temperature: 1, seed: 11 },
        { maxNewTokens: 6, temperature: 0.7, topP: 0.9, seed: 12 },
      ]) {
        const local = generate(shared, prompts, o);
        const [r1, r2] = replicas.generate('m', [prompts, prompts], [o, o])();
        expect(r1, JSON.stringify(o)).to.deep.equal(local);
        expect(r2, JSON.stringify(o)).to.deep.equal(local);
      }
    });

    it("a change to the base's matrices in this thread reaches the replicas with nothing published: they read the same memory", () => {
      const greedy = { maxNewTokens: 6, temperature: 0 };
      const before = tokens(generate(shared, prompts, greedy));
      const head = base.host['model.embed_tokens.weight'].data; // tied: the embeddings and the head
      const saved = head.slice();
      try {
        const rng = new Rng(4);
        for (let i = 0; i < head.length; i++) head[i] = 0.5 * rng.normal();
        const changed = tokens(generate(shared, prompts, greedy));
        expect(changed, 'the change must alter greedy output for this check to mean anything').to.not.deep.equal(
          before,
        );
        expect(tokens(replicas.generate('m', [prompts], [greedy])()[0])).to.deep.equal(changed);
      } finally {
        head.set(saved);
      }
      expect(tokens(replicas.generate('m', [prompts], [greedy])()[0])).to.deep.equal(before);
    });

    it("three threads' gradients add up to one thread's; after the step the replicas generate with the new adapter", () => {
      checkUpdate(solo, shared, replicas);
    });

    it('a batching server cuts each batch over the replicas and repeats itself from one seed', async () => {
      const ask = async (seed: number) => {
        const server = new BatchingServer('m', shared, seed, 512, replicas);
        const out = await Promise.all(prompts.map((p) => server.generate(p, { maxNewTokens: 5, temperature: 1 })));
        expect(server.stats.batches, 'one batch, cut over three threads').to.equal(1);
        return tokens(out);
      };
      const [x, y, z] = [await ask(5), await ask(5), await ask(6)];
      expect(y).to.deep.equal(x);
      expect(z).to.not.deep.equal(x);
    });
  });

  it('full fine-tuning: each replica holds its own base, and every weight is published after a step', async () => {
    const solo = new HfPolicy(HfCausalLM.load(dir));
    const shared = new HfPolicy(HfCausalLM.load(dir));
    expect(solo.base.frozen).to.equal(false);
    const copies = describeCopies({ m: shared });
    expect(copies.bases[0].host).to.equal(false);
    expect(copies.models.m.sizes).to.deep.equal(shared.base.variables().map((v) => v.size));
    const replicas = await Replicas.start(2, setup, { m: shared });
    try {
      checkUpdate(solo, shared, replicas);
    } finally {
      await replicas.close();
      solo.base.dispose();
      shared.base.dispose();
    }
  });

  it('a frozen base without host matrices (no native sgemm) is copied into each replica, and works the same', async () => {
    const base = HfCausalLM.load(dir, { frozen: true, host: false });
    expect(base.frozen).to.equal(false);
    // frozen all the same, so a replica's head (compact when made with sharedRows) and sampler are this thread's
    expect(describeCopies({ m: new HfPolicy(base) }).bases[0]).to.include({
      host: false,
      frozen: true,
      compactHead: true,
    });
    const lora = { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] };
    const solo = new HfPolicy(base, new LoraAdapter(base.config, lora, 1));
    const shared = new HfPolicy(base, new LoraAdapter(base.config, lora, 1));
    randomise(solo.adapter!, 2);
    randomise(shared.adapter!, 2);
    const replicas = await Replicas.start(2, setup, { m: shared });
    try {
      checkUpdate(solo, shared, replicas);
    } finally {
      await replicas.close();
      solo.dispose();
      shared.dispose();
      base.dispose();
    }
  });
});
