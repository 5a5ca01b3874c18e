// `npm run bench`: generated and trained tokens per second on the reference workload
// (../shared/bench/README.md), with 1 worker and with one per core (data-parallel training,
// generation split over the workers); and, where Debian's python3-torch is installed,
// PyTorch's figures and our ratio to them. By default only what a user would pick: the
// fast paths (tfjs-node where it installs, else wasm; native products when a library
// loads). `--all` adds tfjs's plain cpu backend, every backend with native products off and
// the real-architecture workload (`--hf` alone adds that).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../util/worker.js';
import type { BackendChoice } from '../backend/index.js';
import type { Accelerate } from '../backend/accelerate.js';
import { weightShapes } from '../models/tinylm.js';
import { share } from './share.js';
import { REFERENCE_JOBS, REFERENCE_MODEL } from './workload.js';

type Job = 'generate' | 'train';
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const all = args.includes('--all');
const backends = option('backends', all ? 'node,wasm,cpu' : 'node,wasm').split(',') as BackendChoice[];
const accelerations = option('accelerate', all ? 'auto,off' : 'auto').split(',') as Accelerate[];
const workerCounts = [
  ...new Set(
    option('workers', `1,${Math.max(1, cpus().length)}`)
      .split(',')
      .map(Number),
  ),
];
if (workerCounts.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error(`bench: --workers takes positive integers separated by commas, got '${option('workers', '')}'`);
// threads per native product: `auto` shares the cores among the workers (1 each with one per core)
const threadChoices = option('native-threads', 'auto').split(',');
const threadsFor = (choice: string, workers: number) =>
  choice === 'auto' ? Math.max(1, Math.floor(cpus().length / workers)) : Number(choice);
if (threadChoices.some((c) => c !== 'auto' && !(Number.isInteger(Number(c)) && Number(c) >= 1)))
  throw new Error(`bench: --native-threads takes auto or positive integers, got '${option('native-threads', '')}'`);
const reps = Number(option('reps', String(REFERENCE_JOBS.reps)));
// Rounds alternate our measurements with PyTorch's, so that a slow spell of a shared machine
// falls on both sides of a ratio; the summary is each ratio's median over the rounds.
const rounds = Number(option('rounds', '3'));
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`bench: --rounds takes a positive integer, got '${option('rounds', '')}'`);
const torchRef = resolve(option('torch-ref', '../shared/bench/torch_ref.py'));

function start(
  backend: BackendChoice,
  accelerate: Accelerate,
  index: number,
  workers: number,
  threads: number,
  shared: SharedArrayBuffer,
  sync: SharedArrayBuffer,
): Promise<{ w: Worker; native?: string; fused?: boolean }> {
  const w = startTsWorker(new URL('./worker.ts', import.meta.url), {
    backend,
    accelerate,
    index,
    workers,
    threads,
    total: REFERENCE_JOBS.batch,
    shared,
    sync,
  });
  return new Promise((ok, fail) => {
    w.once('message', (m: { native?: string; fused?: boolean }) => ok({ w, native: m.native, fused: m.fused }));
    w.once('error', fail);
  });
}

function ask(w: Worker, job: Job | 'checksum', batch: number): Promise<Record<string, number>> {
  return new Promise((ok, fail) => {
    const onMessage = (m: Record<string, number>) => {
      w.off('error', onError);
      ok(m);
    };
    const onError = (e: Error) => {
      w.off('message', onMessage);
      fail(e);
    };
    w.once('message', onMessage);
    w.once('error', onError);
    w.postMessage({ job, batch });
  });
}

/** Wall time of one job split over all workers. */
async function once(pool: Worker[], job: Job): Promise<number> {
  const t0 = performance.now();
  await Promise.all(pool.map((w, i) => ask(w, job, share(REFERENCE_JOBS.batch, pool.length, i))));
  return (performance.now() - t0) / 1000;
}

async function measure(
  backend: BackendChoice,
  accelerate: Accelerate,
  workers: number,
  threads: number,
): Promise<Record<Job, number> | undefined> {
  const params = Object.values(weightShapes(REFERENCE_MODEL)).reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
  const shared = new SharedArrayBuffer(workers * params * 4);
  const sync = new SharedArrayBuffer(8); // the workers' barrier: [arrived, generation]
  let pool: Worker[];
  let native: string | undefined;
  let fused: boolean | undefined;
  try {
    const started = await Promise.all(
      Array.from({ length: workers }, (_, i) => start(backend, accelerate, i, workers, threads, shared, sync)),
    );
    pool = started.map((s) => s.w);
    native = started[0].native;
    fused = started[0].fused;
  } catch (err) {
    console.log(JSON.stringify({ backend, accelerate, skipped: String((err as Error).message ?? err).split('\n')[0] }));
    return undefined;
  }
  // `auto` with nothing to accelerate (a backend the fast paths do not address) is the `off` path again
  if (accelerate === 'auto' && !native && !fused) {
    console.log(JSON.stringify({ backend, accelerate, skipped: 'no fast path serves this backend' }));
    await Promise.all(pool.map((w) => w.terminate()));
    return undefined;
  }
  if (accelerate === 'auto' && !native)
    console.log(
      JSON.stringify({
        backend,
        note: 'no native library loaded (apt-get install libopenblas0-pthread): fused kernels only',
      }),
    );
  const out = {} as Record<Job, number>;
  for (const job of ['generate', 'train'] as Job[]) {
    await once(pool, job); // warm-up
    let seconds = 0;
    for (let r = 0; r < reps; r++) seconds += await once(pool, job);
    seconds /= reps;
    const tokens = REFERENCE_JOBS.batch * (job === 'generate' ? REFERENCE_JOBS.newTokens : REFERENCE_JOBS.seq);
    out[job] = tokens / seconds;
    console.log(
      JSON.stringify({
        job,
        backend,
        fused: Boolean(fused),
        native: native ?? 'off',
        workers,
        threads: native ? threads : undefined,
        batch: REFERENCE_JOBS.batch,
        reps,
        seconds: +seconds.toFixed(5),
        tokens_per_s: Math.round(out[job]),
      }),
    );
  }
  const sums = await Promise.all(pool.map((w) => ask(w, 'checksum', 0)));
  if (new Set(sums.map((s) => s.checksum.toFixed(4))).size !== 1)
    throw new Error(`bench: replicas diverged: ${JSON.stringify(sums)}`);
  await Promise.all(pool.map((w) => w.terminate()));
  return out;
}

function pytorch(): Record<Job, number> | undefined {
  if (!existsSync('/usr/bin/python3') || !existsSync(torchRef)) return undefined;
  try {
    const text = execFileSync('/usr/bin/python3', [torchRef, '--threads', '1', '--reps', String(reps)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const l of lines) console.log(JSON.stringify({ ...l, backend: 'pytorch' }));
    return Object.fromEntries(lines.map((l) => [l.job, l.tokens_per_s])) as Record<Job, number>;
  } catch {
    return undefined; // python3 without torch: no comparison
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ratios = new Map<string, { job: Job; backend: string; workers: number; values: number[] }>();
let compared = false;
for (let round = 1; round <= rounds; round++) {
  const results: { backend: string; workers: number; r: Record<Job, number> }[] = [];
  for (const b of backends) {
    for (const a of accelerations) {
      for (const workers of workerCounts) {
        // thread counts matter only to native products
        for (const choice of a === 'off' ? ['auto'] : threadChoices) {
          const threads = threadsFor(choice, workers);
          const r = await measure(b, a, workers, threads);
          const label = a === 'off' ? b : threadChoices.length > 1 ? `${b}+fast/${threads}t` : `${b}+fast`;
          if (r) results.push({ backend: label, workers, r });
        }
      }
    }
  }
  const torch = pytorch();
  if (!torch) continue;
  compared = true;
  for (const { backend, workers, r } of results) {
    for (const job of ['generate', 'train'] as Job[]) {
      const ratio = r[job] / torch[job];
      console.log(JSON.stringify({ round, job, backend, workers, vs: 'pytorch-1-thread', ratio: +ratio.toFixed(3) }));
      const key = `${job} ${backend} ${workers}`;
      if (!ratios.has(key)) ratios.set(key, { job, backend, workers, values: [] });
      ratios.get(key)!.values.push(ratio);
    }
  }
}
if (compared) {
  for (const { job, backend, workers, values } of ratios.values()) {
    console.log(
      JSON.stringify({
        summary: 'median over rounds',
        job,
        backend,
        workers,
        vs: 'pytorch-1-thread',
        ratio: +median(values).toFixed(3),
        rounds: values.map((v) => +v.toFixed(3)),
      }),
    );
  }
} else {
  console.log(JSON.stringify({ note: `no PyTorch comparison: needs /usr/bin/python3 with torch and ${torchRef}` }));
}

// `--hf` (and `--all`) also run the real-architecture workload, SmolLM2-135M's shape against
// PyTorch in src/bench/torch_hf.py (src/bench/hf.ts, about 5 minutes): the same run prints its three ratios.
if (args.includes('--hf') || all) {
  const { spawnSync } = await import('node:child_process');
  const hf = spawnSync(
    process.execPath,
    ['--import', 'tsx', new URL('./hf.ts', import.meta.url).pathname, '--reps', '1'],
    { stdio: 'inherit' },
  );
  if (hf.status !== 0)
    console.log(JSON.stringify({ note: `the real-architecture workload ended with status ${hf.status}` }));
}
