/** Helpers of the rollout-worker tests: a `coevolve worker` process, and the run's episodes counted. */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunStore } from '../../src/store/run.js';
import { TEST_BACKEND } from '../needs.js';

/** A `coevolve worker` process on `url`, resolved once it takes jobs (bin/coevolve.js: `npm run build` first). */
export function startWorkerProcess(url: string, queue: string, extra: string[] = []): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      'bin/coevolve.js',
      'worker',
      '--redis',
      url,
      '--queue',
      queue,
      '--backend',
      TEST_BACKEND,
      '--lock-ms',
      '2000',
      '--stalled-ms',
      '500',
      ...extra,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      if (/taking rollout jobs/.test((err += d.toString()))) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${err}`)));
  });
}

/** Every iteration 1..n holds exactly `per` episodes, no id twice. */
export async function exactlyOnce(dir: string, n: number, per: number): Promise<void> {
  const episodes = (await RunStore.open(dir)).readEpisodes();
  for (let it = 1; it <= n; it++) {
    const mine = episodes.filter((e) => e.iteration === it);
    expect(mine, `iteration ${it}`).to.have.length(per);
    expect(new Set(mine.map((e) => e.id)).size, `iteration ${it}`).to.equal(per);
  }
  expect(episodes.filter((e) => e.iteration > n)).to.have.length(0);
}

/** The metrics rows written so far. */
export const rows = (dir: string) =>
  existsSync(join(dir, 'metrics.jsonl'))
    ? readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

/** Resolves once `ok` holds (polled every 5 ms); rejects after `ms`. */
export const until = async (ok: () => boolean | Promise<boolean>, ms = 60000) => {
  for (const t0 = Date.now(); !(await ok());) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};
