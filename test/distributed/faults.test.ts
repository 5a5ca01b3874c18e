import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { stringify } from 'yaml';
import { initBackend } from '../../src/backend/index.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { queueName } from '../../src/distributed/jobs.js';
import { runExperiment } from '../../src/engine/experiment.js';
import { loadModel } from '../../src/models/store.js';
import { BatchingServer } from '../../src/serving/server.js';
import { RunStore } from '../../src/store/run.js';
import { tinyConfig } from '../engine/fixtures.js';
import { startRedis } from '../redis.js';
import { exactlyOnce, rows, startWorkerProcess, until } from './worker-process.js';
import { need, TEST_BACKEND } from '../needs.js';

/** Solver episodes on the shipped base, heavy enough (64 tasks x 8 answers per job) that a job lasts a while. */
function heavy(root: string, url: string, queue: string, over: Partial<ExperimentInput> = {}): ExperimentInput {
  return {
    ...tinyConfig(root),
    name: 'heavy',
    workers: 1,
    iterations: 6,
    checkpointEvery: 2,
    models: { main: { checkpoint: 'checkpoints/base-add2' } },
    tasks: {
      family: 'arithmetic',
      difficulty: { digits: 2, operands: 2, operators: '+' },
      train: { source: 'generate', count: 2000 },
      perIteration: 64,
    },
    arena: { groupSize: 8, maxNewTokens: 5 },
    eval: { every: 100 },
    rollout: { engine: 'redis', url, queue, jobEpisodes: 256 },
    ...over,
  };
}

describe('rollout faults: workers killed, Redis restarted, the learner resumed', function () {
  this.timeout(240000);
  let redis: Awaited<ReturnType<typeof startRedis>>;
  const children: ChildProcess[] = [];
  before(async function () {
    redis = await startRedis();
    if (!redis) need(this, 'redis');
  });
  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
  });
  after(async () => redis?.stop());

  it('a worker killed mid-job: another takes the job, and every episode is counted once', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-kill-'));
    const victim = await startWorkerProcess(redis!.url, 'kill');
    children.push(victim);
    const queue = new Queue(queueName('kill'), { connection: { url: redis!.url } });
    const run = runExperiment(heavy(root, redis!.url, 'kill', { iterations: 3 }), {
      out: join(root, 'run'),
      log: () => {},
    });
    // the moment the victim holds a job, kill it; then a second worker starts
    await until(async () => (await queue.getActiveCount()) > 0);
    const active = (await queue.getActive())[0];
    victim.kill('SIGKILL');
    children.push(await startWorkerProcess(redis!.url, 'kill'));
    await run;
    await exactlyOnce(join(root, 'run'), 3, 64 * 8);
    // the job the victim held was handed on by the stalled-job check and finished once
    const job = await queue.getJob(active.id!);
    expect(await job!.getState()).to.equal('completed');
    expect(job!.stalledCounter).to.be.at.least(1);
    await queue.close();
  });

  // A worker whose job stalls (here stopped by SIGSTOP; in practice killed, or its event loop
  // blocked past its lock): with --max-stalled 0 the first stall fails the job as stalled.
  const stalling = ['--lock-ms', '1000', '--stalled-ms', '300', '--max-stalled', '0'];
  const stallOne = async (queueId: string, over: Partial<ExperimentInput>) => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-stall-'));
    const victim = await startWorkerProcess(redis!.url, queueId, stalling);
    children.push(victim);
    const queue = new Queue(queueName(queueId), { connection: { url: redis!.url } });
    const out = join(root, 'run');
    const log: string[] = [];
    const run = runExperiment(heavy(root, redis!.url, queueId, over), { out, log: (l) => log.push(l) });
    const ended = run.then(
      () => null,
      (e: Error) => e,
    ); // settled here, so a failure while the test waits is never unhandled
    await until(async () => (await queue.getActiveCount()) > 0);
    victim.kill('SIGSTOP');
    children.push(await startWorkerProcess(redis!.url, queueId, stalling));
    const err = await ended;
    await queue.close();
    return { out, log, err };
  };

  it('a job stalled past the limit is queued again: the run goes on, every episode once', async () => {
    const { out, log, err } = await stallOne('stall', { iterations: 2 });
    expect(err, err?.message).to.equal(null);
    expect(
      log.some((l) => /job stalled more than allowable limit; queued again \(1 of 3\)/.test(l)),
      log.join('\n'),
    ).to.equal(true);
    await exactlyOnce(out, 2, 64 * 8);
  });

  it('a job that stalls more than rollout.jobRetries times stops the run, saying how to resume; resumed, it completes', async () => {
    const { out, err } = await stallOne('stall-stop', {
      iterations: 2,
      rollout: { engine: 'redis', url: redis!.url, queue: 'stall-stop', jobEpisodes: 256, jobRetries: 0 },
    });
    expect(err?.message).to.match(
      new RegExp(
        'rollout job .* failed 1 time, past rollout\\.jobRetries \\(0\\); the last time: job stalled more than allowable limit\\. ' +
          'The run stops; it resumes from its last checkpoint with: coevolve run --resume ',
      ),
    );
    expect((await RunStore.open(out)).record.status).to.equal('failed');
    await runExperiment(undefined, { resume: out, log: () => {} });
    await exactlyOnce(out, 2, 64 * 8);
  });

  it('Redis restarted mid-run: the learner waits, saying so, and continues; every episode once', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-restart-'));
    children.push(await startWorkerProcess(redis!.url, 'restart'));
    const out = join(root, 'run');
    const log: string[] = [];
    const run = runExperiment(heavy(root, redis!.url, 'restart'), { out, log: (l) => log.push(l) });
    await until(() => rows(out).some((r) => r.iteration === 2));
    const port = redis!.port;
    await redis!.stop();
    await new Promise((r) => setTimeout(r, 1500));
    redis = await startRedis(port);
    await run;
    expect(
      log.some((l) => /waiting for Redis at redis:\/\/127\.0\.0\.1:\d+\/?: connection lost/.test(l)),
      log.join('\n'),
    ).to.equal(true);
    expect(log.some((l) => /Redis at .* is back/.test(l))).to.equal(true);
    await exactlyOnce(out, 6, 64 * 8);
  });

  it('a worker says it lost Redis; stopped while Redis is gone it exits at once, saying so, where it used to wait for Redis forever', async () => {
    const own = (await startRedis())!;
    const worker = await startWorkerProcess(own.url, 'gone');
    children.push(worker);
    let err = '';
    worker.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await own.stop();
    await until(() => /lost Redis at .*; reconnecting/.test(err));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    worker.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 20000))]);
    expect(code, err).to.equal(0);
    expect(err).to.match(/Redis at redis:\/\/127\.0\.0\.1:\d+\/? is unreachable; stopping without it/);
  });

  it("the learner killed and resumed: a new session, the old one's jobs ignored, every episode once", async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-resume-'));
    children.push(await startWorkerProcess(redis!.url, 'resume'));
    const out = join(root, 'run');
    const config = join(root, 'c.yaml');
    writeFileSync(
      config,
      stringify(
        heavy(root, redis!.url, 'resume', {
          rollout: { engine: 'redis', url: redis!.url, queue: 'resume', jobEpisodes: 256, maxStaleness: 1 },
        }),
      ),
    );
    const learner = spawn(process.execPath, ['bin/coevolve.js', 'run', config, '--out', out], { stdio: 'ignore' });
    children.push(learner);
    await until(() => rows(out).some((r) => r.iteration === 3)); // a checkpoint at 2, iteration 4's jobs queued ahead
    const gone = new Promise((r) => learner.once('exit', r));
    learner.kill('SIGKILL');
    await gone;
    const log: string[] = [];
    await runExperiment(undefined, { resume: out, log: (l) => log.push(l) });
    expect(log.some((l) => /resuming after iteration 2/.test(l))).to.equal(true);
    await exactlyOnce(out, 6, 64 * 8);
  });

  it("stale rollouts: importance weights equal min(exp(old - behaviour), threshold), old from the learner's weights of the version before", async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-stale-'));
    children.push(await startWorkerProcess(redis!.url, 'stale'));
    const out = join(root, 'run');
    const { metrics } = await runExperiment(
      heavy(root, redis!.url, 'stale', {
        iterations: 3,
        checkpointEvery: 1,
        trainer: { lr: 0.003 },
        tasks: { ...heavy(root, '', '').tasks, perIteration: 8 },
        rollout: {
          engine: 'redis',
          url: redis!.url,
          queue: 'stale',
          jobEpisodes: 32,
          maxStaleness: 1,
          isThreshold: 1.05,
        },
      }),
      { out, log: () => {} },
    );
    expect(metrics.find((r) => r.iteration === 1)?.['rollout/staleness_max']).to.equal(0);
    expect(metrics.find((r) => r.iteration === 2)?.['rollout/staleness_max']).to.equal(1);
    await initBackend(TEST_BACKEND);
    const episodes = (await RunStore.open(out)).readEpisodes().filter((e) => e.iteration === 2);
    const loaded = await loadModel(join(out, 'checkpoints', 'iter-000001', 'main'));
    const server = new BatchingServer('check', loaded.model as never);
    let checked = 0;
    let capped = 0;
    for (const t of episodes.flatMap((e) => e.turns)) {
      expect(t.staleness).to.equal(1);
      if (!t.isWeights) continue;
      const old = await server.logProbs({ prompt: t.prompt, completion: t.completion }, 1);
      t.isWeights.forEach((w, k) => {
        const expected = Math.min(Math.exp(Math.max(-20, Math.min(20, old[k] - t.logProbs[k]))), 1.05);
        expect(w).to.be.closeTo(expected, 1e-5);
        if (expected === 1.05) capped++;
      });
      checked++;
    }
    expect(checked).to.be.above(0);
    expect(capped).to.be.above(0); // the learned step moved some tokens' probability up past the cap
  });
});
