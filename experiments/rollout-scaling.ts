/**
 * Rollouts on worker processes through Redis, measured on the default experiment:
 *   npx tsx experiments/rollout-scaling.ts --out runs/distributed [--config FILE] [--iterations 20] [--curve 200] [--seeds 1,2]
 *     [--gc parallel|single] [--repeats R] [--workers-only] [--pin] [--worker-threads N]
 * 1. Throughput: rollout tokens/s during rollout phases (median over iterations 3..N) with one
 *    and with two `coevolve worker` processes, beside in-process rollouts on one thread and
 *    on every core; the learner trains on one thread. The workload is the default experiment
 *    with --per-iteration seeds an iteration (default 8; the default's 1 makes a rollout phase
 *    of 0.1 s, where the queue's fixed costs are a third of it).
 *    With --repeats R, the one- and two-worker conditions run R times, alternating, and the
 *    ratio is reported per pair and as the median of the pairs (a run carries about 15% noise
 *    on this machine); --workers-only skips the in-process conditions; --pin runs worker k on
 *    core k only (taskset), its GC helper threads included; --worker-threads N gives each worker
 *    N native matrix-product threads (a Hugging Face model's products run there).
 *    --config configs/runs/hf/rlvr-lora.yaml measures a Hugging Face model (a LoRA adapter
 *    on the chat base) the same way. The machine's load averages, before and after, go in
 *    results.json: the machine may be shared; so do the workers' CPU seconds per generated token
 *    over iterations 3..N (read from /proc), which others' load on the machine blurs far less than wall time.
 * 2. With --curve K: the learning curve (the evaluators' held-out accuracy) over K
 *    iterations, in-process against two workers, for each seed.
 * Needs Debian's redis-server; starts it on a free loopback port and stops it. A worker that
 * dies mid-run ends the script with its stderr (the learner alone would wait for it forever).
 * Resumable: a condition whose run is done is read, not run again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { runExperiment } from '../src/engine/experiment.js';
import { RunStore, type MetricsRow } from '../src/store/run.js';
import { startRedis } from '../test/redis.js';
import { arg, flag } from './script.js';

const out = arg('out', 'runs/distributed');
const iterations = Number(arg('iterations', '20'));
const curve = Number(arg('curve', '0'));
const seeds = arg('seeds', '1').split(',').map(Number);
const config = arg('config', 'configs/default.yaml');
// the throughput workload: the default experiment with this many seeds per iteration (8: 2,048 solver answers and 256 proposals an iteration)
const perIteration = arg('per-iteration', '8');
const jobEpisodes = arg('job-episodes', '128');
// off: tfjs's own kernels everywhere (with native products a worker leans harder on V8's GC helper threads: docs/distributed.md)
const accelerate = arg('accelerate', 'auto');
// parallel: node's default GC helper threads; single: worker processes run V8 with --single-threaded-gc, so one worker stays on one core
const gc = arg('gc', 'parallel');
if (gc !== 'single' && gc !== 'parallel') throw new Error(`--gc: single or parallel, got '${gc}'`);
const repeats = Number(arg('repeats', '1'));
if (!Number.isInteger(repeats) || repeats < 1)
  throw new Error(`--repeats: a positive integer, got '${arg('repeats', '1')}'`);
const workersOnly = flag('workers-only');
const pin = flag('pin');
const workerThreads = arg('worker-threads', '');
mkdirSync(out, { recursive: true });

// the tests' throwaway server: it is waited for until it accepts connections, and a server that exits is an error, not a hang
const server = await startRedis();
if (!server) throw new Error('rollout-scaling needs redis-server on the PATH (apt-get install redis-server)');
const url = server.url;
// a script stopped from outside (a test's timeout, ^C) takes its workers and server with it
const children = new Set<ChildProcess>([server.process]);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    for (const c of children) c.kill('SIGKILL');
    process.exit(1);
  });

function startWorkers(n: number, queue: string): Promise<ChildProcess[]> {
  const started = Promise.all(
    Array.from(
      { length: n },
      (_, k) =>
        new Promise<ChildProcess>((resolve, reject) => {
          const node = [
            process.execPath,
            ...(gc === 'single' ? ['--single-threaded-gc'] : []),
            'bin/coevolve.js',
            'worker',
            '--redis',
            url,
            '--queue',
            queue,
            '--accelerate',
            accelerate,
            ...(workerThreads ? ['--threads', workerThreads] : []),
          ];
          // --pin: worker k and all its threads on core k (util-linux's taskset), so one worker is one core
          const [cmd, ...args] = pin ? ['taskset', '-c', String(k % availableParallelism()), ...node] : node;
          const w = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
          children.add(w);
          w.once('exit', () => children.delete(w));
          let err = '';
          w.stderr!.on('data', (d: Buffer) => {
            if (/taking rollout jobs/.test((err += d.toString()))) resolve(w);
          });
          w.once('exit', (c) => reject(new Error(`worker exited ${c}: ${err}`)));
        }),
    ),
  );
  const slow = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`${n} worker(s) not taking jobs after 120 s`)), 120000).unref(),
  );
  return Promise.race([started, slow]);
}

/** Rejects when any of `workers` exits before it is told to: the learner would otherwise wait for its jobs forever. */
function watch(workers: ChildProcess[]): Promise<never> {
  return new Promise((_, reject) => {
    for (const w of workers) {
      let err = '';
      w.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
      w.once('exit', (c, signal) => {
        if (!w.killed) reject(new Error(`a rollout worker exited (${c ?? signal}) during the run: ${err}`));
      });
    }
  });
}

/** The CPU seconds (user and system, every thread) `pids` have used, from /proc. */
function cpuSeconds(pids: number[]): number {
  const tick = 100; // USER_HZ on Linux
  return pids.reduce((sum, pid) => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) / tick; // utime, stime (fields 14 and 15 of stat)
  }, 0);
}

/**
 * The workers' CPU seconds over iterations 3..N (after their bases are loaded): beside wall
 * time, what a machine others share cannot blur (a worker's CPU per token is its own cost).
 */
const workerCpu: Record<string, number> = {};

/** Runs (or reads, when done) one condition; `workerProcesses` 0 is in-process. */
async function condition(name: string, set: string[], workerProcesses: number): Promise<MetricsRow[]> {
  const dir = join(out, name);
  if (existsSync(join(dir, 'run.json')) && (await RunStore.open(dir)).record.status === 'done')
    return (await RunStore.open(dir)).readMetrics();
  const workers = workerProcesses ? await startWorkers(workerProcesses, name) : [];
  const pids = workers.map((w) => w.pid!);
  let atTwo: number | undefined;
  const sampler = setInterval(() => {
    const done =
      existsSync(join(dir, 'metrics.jsonl')) &&
      /"iteration":2[,}]/.test(readFileSync(join(dir, 'metrics.jsonl'), 'utf8'));
    if (atTwo === undefined && done && pids.length) atTwo = cpuSeconds(pids);
  }, 50);
  try {
    const redisSet = workerProcesses
      ? ['rollout.engine=redis', `rollout.url=${url}`, `rollout.queue=${name}`, `rollout.jobEpisodes=${jobEpisodes}`]
      : [];
    const resume = existsSync(join(dir, 'run.json'));
    // the learner's own messages (a Redis outage, a job queued again) go to stderr; its progress lines do not
    const log = (line: string) => {
      if (line.startsWith('rollouts:')) console.error(`${name}: ${line}`);
    };
    const running = resume
      ? runExperiment(undefined, { resume: dir, log })
      : runExperiment(config, { set: [...set, ...redisSet], out: dir, log });
    const r = await Promise.race([running, watch(workers)]);
    if (atTwo !== undefined) workerCpu[name] = cpuSeconds(pids) - atTwo;
    return r.metrics;
  } finally {
    clearInterval(sampler);
    // gone before the next condition starts or the server stops: a stopping worker still talks to Redis
    await Promise.all(
      workers.map((w) =>
        w.exitCode === null && w.signalCode === null
          ? new Promise((r) => (w.once('exit', r), w.kill('SIGTERM')))
          : null,
      ),
    );
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
const phase = (rows: MetricsRow[], key: string) =>
  median(rows.filter((r) => r.iteration >= 3 && typeof r[key] === 'number').map((r) => r[key] as number));

const results: Record<string, unknown> = {
  config,
  iterations,
  machine: `${availableParallelism()} cores`,
  redis: 'local redis-server',
  loadBefore: loadavg(),
};
try {
  const brief = [
    `iterations=${iterations}`,
    'eval.every=100000',
    'evaluators=[]',
    'checkpointEvery=100000',
    `tasks.perIteration=${perIteration}`,
    `accelerate=${accelerate}`,
  ];
  const conditions: Array<[string, string[], number]> = workersOnly
    ? []
    : [
        ['inproc-1thread', [...brief, 'workers=1'], 0],
        ['inproc-2threads', [...brief, 'workers=2'], 0],
      ];
  // the pairs' names: redis-1worker, redis-2workers, then -r2, -r3, ... appended
  const tags = Array.from({ length: repeats }, (_, i) => (i ? `-r${i + 1}` : ''));
  for (const tag of tags)
    conditions.push(
      [`redis-1worker${tag}`, [...brief, 'workers=1'], 1],
      [`redis-2workers${tag}`, [...brief, 'workers=1'], 2],
    );
  const speed: Record<string, Record<string, number>> = {};
  for (const [name, set, n] of conditions) {
    const rows = await condition(name, set, n);
    speed[name] = {
      rollout_tokens_per_s: phase(rows, 'time/rollout_tokens_per_s'),
      rollout_s: phase(rows, 'time/rollout_s'),
      train_s: phase(rows, 'time/train_s'),
      iteration_s: phase(rows, 'time/iteration_s'),
      job_s: phase(rows, 'time/rollout_job_s'),
    };
    if (workerCpu[name] !== undefined) {
      // tokens of iterations 3..N: each rollout phase's rate times its length
      const tokens = rows
        .filter((r) => r.iteration >= 3)
        .reduce((n, r) => n + Number(r['time/rollout_tokens_per_s'] ?? 0) * Number(r['time/rollout_s'] ?? 0), 0);
      speed[name].worker_cpu_s = workerCpu[name];
      speed[name].worker_cpu_ms_per_token = (1000 * workerCpu[name]) / tokens;
    }
    console.error(`${name}: ${JSON.stringify(speed[name])}`);
  }
  results.speed = speed;
  results.perIteration = perIteration;
  results.accelerate = accelerate;
  results.jobEpisodes = jobEpisodes;
  results.workerGc = gc;
  results.pinned = pin;
  results.workerThreads = workerThreads || '1 (the default)';
  results.loadAfter = loadavg();
  const pairs = tags.map(
    (t) => speed[`redis-2workers${t}`].rollout_tokens_per_s / speed[`redis-1worker${t}`].rollout_tokens_per_s,
  );
  results.scaling_2_over_1_workers = median(pairs);
  results.scaling_per_pair = pairs;
  if (curve > 0) {
    const curves: Record<string, Array<Record<string, number>>> = {};
    for (const seed of seeds) {
      for (const [name, n] of [
        [`curve-inproc-s${seed}`, 0],
        [`curve-redis2-s${seed}`, 2],
      ] as const) {
        const rows = await condition(name, [`iterations=${curve}`, `seed=${seed}`, 'workers=1'], n);
        curves[name] = rows
          .filter((r) => Object.keys(r).some((k) => k.startsWith('eval/')))
          .map(
            (r) =>
              Object.fromEntries(
                Object.entries(r).filter(
                  ([k]) => k === 'iteration' || /^eval\/.*\/(pass1)$|^eval\/proposer\/valid_rate$/.test(k),
                ),
              ) as Record<string, number>,
          );
        console.error(`${name}: ${JSON.stringify(curves[name][curves[name].length - 1])}`);
      }
    }
    results.curves = curves;
  }
  writeFileSync(join(out, 'results.json'), JSON.stringify(results, null, 2));
  console.log(JSON.stringify(results, null, 2));
} finally {
  await server.stop();
}
