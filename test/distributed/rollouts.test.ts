import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExperiment } from '../../src/engine/experiment.js';
import { RunStore } from '../../src/store/run.js';
import { tinyConfig } from '../engine/fixtures.js';
import { startRedis } from '../redis.js';
import { need } from '../needs.js';
import { startWorkerProcess } from './worker-process.js';

describe('rollouts on worker processes through Redis', function () {
  this.timeout(180000);
  let redis: Awaited<ReturnType<typeof startRedis>>;
  const workers: ChildProcess[] = [];
  before(async function () {
    redis = await startRedis();
    if (!redis) need(this, 'redis');
  });
  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await redis?.stop();
  });

  it('two workers play every episode exactly once (groups split across jobs), and the run trains on them', async () => {
    workers.push(await startWorkerProcess(redis!.url, 'two'), await startWorkerProcess(redis!.url, 'two'));
    const root = mkdtempSync(join(tmpdir(), 'coevolve-redis-'));
    const out = join(root, 'run');
    const { metrics } = await runExperiment(
      { ...tinyConfig(root), workers: 1, rollout: { engine: 'redis', url: redis!.url, queue: 'two', jobEpisodes: 3 } },
      { out, log: () => {} },
    );
    const episodes = (await RunStore.open(out)).readEpisodes();
    for (let it = 1; it <= 4; it++) {
      const mine = episodes.filter((e) => e.iteration === it);
      expect(mine).to.have.length(16);
      expect(new Set(mine.map((e) => e.id)).size).to.equal(16);
      expect(mine.every((e) => e.turns.every((t) => t.staleness === 0))).to.equal(true);
    }
    expect(metrics.find((r) => r.iteration === 4)?.['losses/main/loss']).to.be.a('number');
  });
});
