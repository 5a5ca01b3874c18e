import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { Queue } from 'bullmq';
import { initBackend } from '../../src/backend/index.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { BaseRefused, encodeHfWeights, HfWorkerModels, parseBaseMaps } from '../../src/distributed/hf-weights.js';
import { queueName } from '../../src/distributed/jobs.js';
import { runExperiment } from '../../src/engine/experiment.js';
import { baseSha256, loadHfPolicy } from '../../src/models/hf/checkpoint.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { BatchingServer } from '../../src/serving/server.js';
import { RunStore } from '../../src/store/run.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { need, TEST_BACKEND } from '../needs.js';
import { hfSolverConfig } from '../engine/fixtures.js';
import { startRedis } from '../redis.js';
import { exactlyOnce, rows, startWorkerProcess, until } from './worker-process.js';

/** Every weight of `p` moved by noise, as an update would move it. */
function perturb(p: HfPolicy, seed: number): void {
  for (const v of Object.values(p.weights))
    v.assign(tf.tidy(() => v.add(tf.randomNormal(v.shape, 0, 0.05, 'float32', seed++))));
}

const values = (p: HfPolicy) => Object.fromEntries(Object.entries(p.weights).map(([n, v]) => [n, [...v.dataSync()]]));

/** The log-probs `p` gives a fixed completion after a fixed prompt. */
const logProbs = (p: HfPolicy) =>
  new BatchingServer('check', p).logProbs({ prompt: [49, 43, 50, 61], completion: [51, 258] }, 1);

describe('Hugging Face weights for rollout workers', function () {
  this.timeout(60000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-hfw-'));
  const base = writeTinyHf(join(root, 'base'));
  const other = writeTinyHf(join(root, 'other'), { seed: 9 });
  before(() => initBackend(TEST_BACKEND));

  it("LoRA: the worker's adapter equals the learner's after each publish, written in place, and scores alike; the base never travels", () => {
    const frozen = HfCausalLM.load(base, { frozen: true });
    const learner = new HfPolicy(
      frozen,
      new LoraAdapter(frozen.config, { r: 2, alpha: 4, targetModules: 'all-linear' }, 5),
    );
    perturb(learner, 1);
    const blob = encodeHfWeights(learner);
    const adapterBytes = Object.values(learner.weights).reduce((n, v) => n + 4 * v.size, 0);
    expect(blob.length).to.be.below(adapterBytes + 4096); // the adapter and a header, no base
    const worker = new HfWorkerModels();
    const played = worker.decode('main', blob);
    expect(values(played.model)).to.deep.equal(values(learner));
    const fresh = new HfPolicy(learner.base, new LoraAdapter(learner.config, learner.adapter!.config, 5));
    return (async () => {
      const [mine, theirs, untrained] = await Promise.all([logProbs(played.model), logProbs(learner), logProbs(fresh)]);
      mine.forEach((x, k) => expect(x).to.be.closeTo(theirs[k], 1e-5));
      expect(Math.max(...mine.map((x, k) => Math.abs(x - untrained[k])))).to.be.above(1e-3); // the adapter matters to what is played
      perturb(learner, 100); // the next version
      const adapter = played.model.adapter;
      expect(worker.loadInto(played, encodeHfWeights(learner))).to.equal(true);
      expect(played.model.adapter).to.equal(adapter);
      expect(values(played.model)).to.deep.equal(values(learner));
    })();
  });

  it('two adapters on one base (roles with adapters of their own): the worker loads the base once for both', () => {
    const frozen = HfCausalLM.load(base, { frozen: true });
    const lora = { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] };
    const [a, b] = [1, 2].map((seed) => new HfPolicy(frozen, new LoraAdapter(frozen.config, lora, seed)));
    const worker = new HfWorkerModels();
    const [pa, pb] = [
      worker.decode('main-proposer', encodeHfWeights(a)),
      worker.decode('main-solver', encodeHfWeights(b)),
    ];
    expect(pa.model.base).to.equal(pb.model.base);
    expect(values(pa.model)).to.deep.equal(values(a));
    expect(values(pb.model)).to.deep.equal(values(b));
    expect(values(pa.model)).not.to.deep.equal(values(pb.model));
  });

  it("full fine-tuning: every weight travels, and the worker holds the learner's", () => {
    const learner = new HfPolicy(HfCausalLM.load(base));
    perturb(learner, 7);
    const played = new HfWorkerModels().decode('main', encodeHfWeights(learner));
    expect(played.model.adapter).to.equal(undefined);
    expect(Object.keys(played.model.weights)).to.deep.equal(Object.keys(learner.weights));
    expect(values(played.model)).to.deep.equal(values(learner));
  });

  it("refuses a base whose sha256 differs from the learner's, naming both; --base maps a path, or a folder above it", () => {
    const blob = encodeHfWeights(new HfPolicy(HfCausalLM.load(base)));
    const mapped = new HfWorkerModels(parseBaseMaps([`${base}=${other}`]));
    expect(mapped.local(base)).to.equal(other);
    expect(() => mapped.decode('main', blob))
      .to.throw(BaseRefused)
      .with.property('message')
      .that.includes(`has sha256 ${baseSha256(other)}`)
      .and.includes(`the learner's base ${base} has sha256 ${baseSha256(base)}`);
    const above = new HfWorkerModels(parseBaseMaps([`${root}=/scratch/bases`, `${root}/base=/elsewhere`]));
    expect(above.local(join(root, 'other'))).to.equal('/scratch/bases/other');
    expect(above.local(base)).to.equal('/elsewhere'); // the longer match wins
    expect(above.local('/not/mapped')).to.equal('/not/mapped');
    expect(() => new HfWorkerModels(parseBaseMaps([`${base}=/nowhere`])).decode('main', blob)).to.throw(
      BaseRefused,
      /the learner's base .* is not at \/nowhere \(mapped by --base from .*\) on this worker/,
    );
    expect(() => parseBaseMaps(['no-equals'])).to.throw(/--base takes FROM=TO/);
  });
});

/** RL on a tiny Qwen3-architecture base through a LoRA adapter, rolled out by workers. */
function hfRun(
  root: string,
  base: string,
  url: string,
  queue: string,
  over: Partial<ExperimentInput> = {},
): ExperimentInput {
  return hfSolverConfig(root, base, {
    name: 'hf-workers',
    iterations: 3,
    tasks: {
      family: 'arithmetic',
      difficulty: { digits: 1, operands: 2, operators: '+' },
      train: { source: 'generate', count: 400 },
      perIteration: 8,
    },
    judges: [{ kind: 'self-certainty' }], // a random base never answers right: its own certainty varies, so updates move it
    trainer: { lr: 0.05 },
    eval: { every: 100 },
    rollout: { engine: 'redis', url, queue, jobEpisodes: 16 },
    ...over,
  });
}

describe('Hugging Face models on rollout workers through Redis', function () {
  this.timeout(240000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-hfredis-'));
  const base = writeTinyHf(join(root, 'base'));
  let redis: Awaited<ReturnType<typeof startRedis>>;
  const children: ChildProcess[] = [];
  before(async function () {
    redis = await startRedis();
    if (!redis) need(this, 'redis');
    await initBackend(TEST_BACKEND);
  });
  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
  });
  after(async () => redis?.stop());

  it("LoRA: a worker reading the base from its own copy (--base) plays each iteration with the learner's adapter of the version before, and the run learns", async () => {
    const copy = join(root, 'copy');
    cpSync(base, copy, { recursive: true });
    children.push(await startWorkerProcess(redis!.url, 'lora', ['--base', `${base}=${copy}`]));
    const out = join(root, 'lora');
    const { metrics } = await runExperiment(hfRun(root, base, redis!.url, 'lora'), { out, log: () => {} });
    await exactlyOnce(out, 3, 32);
    expect(metrics.find((r) => r.iteration === 3)?.['losses/main/loss']).to.be.a('number');
    // iteration 3 was played with version 2, the adapter after two updates: the log-probs the worker
    // recorded are what the learner's checkpoint of iteration 2 gives, and not what iteration 1's gives
    const episodes = (await RunStore.open(out)).readEpisodes().filter((e) => e.iteration === 3);
    const at = async (it: number) =>
      new BatchingServer('check', (await loadHfPolicy(join(out, 'checkpoints', `iter-00000${it}`, 'main'))).policy);
    const [v2, v1] = [await at(2), await at(1)];
    let far = 0;
    for (const t of episodes.flatMap((e) => e.turns)) {
      expect(t.staleness).to.equal(0);
      const [same, before] = await Promise.all([
        v2.logProbs({ prompt: t.prompt, completion: t.completion }, 1),
        v1.logProbs({ prompt: t.prompt, completion: t.completion }, 1),
      ]);
      same.forEach((x, k) => expect(x).to.be.closeTo(t.logProbs[k], 1e-4));
      far = Math.max(far, ...before.map((x, k) => Math.abs(x - t.logProbs[k])));
    }
    expect(far, 'versions 1 and 2 differ where played').to.be.above(1e-2);
  });

  it('the same run on one worker and on two: the same episodes and the same adapter (a job depends on its seed and version, not on its worker)', async () => {
    const run = async (name: string, n: number) => {
      for (let k = 0; k < n; k++) children.push(await startWorkerProcess(redis!.url, name));
      const out = join(root, name);
      await runExperiment(
        hfRun(root, base, redis!.url, name, {
          iterations: 3,
          rollout: { engine: 'redis', url: redis!.url, queue: name, jobEpisodes: 8 },
        }),
        { out, log: () => {} },
      );
      for (const c of children.splice(0)) c.kill('SIGKILL');
      const episodes = (await RunStore.open(out))
        .readEpisodes()
        .map((e) => [e.iteration, e.id, e.turns.map((t) => t.text)]);
      const adapter = (await loadHfPolicy(join(out, 'checkpoints', 'iter-000003', 'main'))).policy;
      return { episodes, weights: Object.values(adapter.weights).map((v) => [...v.dataSync()]) };
    };
    const one = await run('same-1', 1);
    const two = await run('same-2', 2);
    expect(one.episodes).to.have.length(3 * 32);
    expect(two.episodes).to.deep.equal(one.episodes);
    expect(two.weights).to.deep.equal(one.weights);
  });

  it("refuses, naming both hashes, a worker's base that is not the learner's: the run stops", async () => {
    const other = writeTinyHf(join(root, 'not-base'), { seed: 9 });
    children.push(await startWorkerProcess(redis!.url, 'sha', ['--base', `${base}=${other}`]));
    const err = await runExperiment(hfRun(root, base, redis!.url, 'sha', { iterations: 1 }), {
      out: join(root, 'sha'),
      log: () => {},
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.include(
      `this worker's base ${other} (mapped by --base from ${base}) has sha256 ${baseSha256(other)}`,
    );
    expect(err?.message).to.include(`the learner's base ${base} has sha256 ${baseSha256(base)}`);
  });

  /** Heavier jobs (64 episodes of 8 tokens each), so a job lasts long enough to be caught. */
  const heavy = (queue: string, iterations: number): ExperimentInput =>
    hfRun(root, base, redis!.url, queue, {
      iterations,
      checkpointEvery: 2,
      tasks: { ...hfRun(root, base, '', '').tasks, perIteration: 32 },
      arena: { groupSize: 4, maxNewTokens: 8, temperature: 1 },
      rollout: { engine: 'redis', url: redis!.url, queue, jobEpisodes: 64 },
    });

  it('a worker killed mid-job: another takes the job, and every episode is counted once', async () => {
    const victim = await startWorkerProcess(redis!.url, 'hf-kill');
    children.push(victim);
    const queue = new Queue(queueName('hf-kill'), { connection: { url: redis!.url } });
    const run = runExperiment(heavy('hf-kill', 2), { out: join(root, 'kill'), log: () => {} });
    await until(async () => (await queue.getActiveCount()) > 0);
    const active = (await queue.getActive())[0];
    victim.kill('SIGKILL');
    children.push(await startWorkerProcess(redis!.url, 'hf-kill'));
    await run;
    await exactlyOnce(join(root, 'kill'), 2, 128);
    const job = await queue.getJob(active.id!);
    expect(await job!.getState()).to.equal('completed');
    expect(job!.stalledCounter).to.be.at.least(1);
    await queue.close();
  });

  it('Redis restarted mid-run, adapters up to a version stale: the learner waits and continues; every episode once, stale ones corrected', async () => {
    children.push(await startWorkerProcess(redis!.url, 'hf-restart'));
    const out = join(root, 'restart');
    const log: string[] = [];
    const config = heavy('hf-restart', 4);
    config.rollout = { ...config.rollout, maxStaleness: 1 }; // stale adapters, corrected as TinyLM's are
    const run = runExperiment(config, { out, log: (l) => log.push(l) });
    await until(() => rows(out).some((r) => r.iteration === 1));
    const port = redis!.port;
    await redis!.stop();
    await new Promise((r) => setTimeout(r, 1500));
    redis = await startRedis(port);
    const { metrics } = await run;
    expect(
      log.some((l) => /waiting for Redis at .*: connection lost/.test(l)),
      log.join('\n'),
    ).to.equal(true);
    expect(log.some((l) => /Redis at .* is back/.test(l))).to.equal(true);
    await exactlyOnce(out, 4, 128);
    const stale = metrics.map((r) => Number(r['rollout/staleness_max'] ?? 0));
    expect(Math.max(...stale)).to.equal(1);
    expect(metrics.some((r) => Number(r['rollout_is/tokens'] ?? 0) > 0)).to.equal(true);
  });
});
