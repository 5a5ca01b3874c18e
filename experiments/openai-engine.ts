/**
 * Rollouts on an inference server against rollouts in this process, on one config and seed:
 *   npx tsx experiments/openai-engine.ts [--config configs/runs/hf/rlvr-lora.yaml] [--out runs/openai-engine]
 *     [--iterations 20] [--eval-every 5] [--first openai|local]
 * Starts `coevolve serve <the config's base> --enable-lora` on a free loopback port, runs the
 * config with `rollout: { engine: openai }` against it and with in-process rollouts, one after
 * the other (--first picks the order; on a shared machine, run it twice swapped), and reports
 * the held-out curves (eval/pass1 at each evaluation), the median seconds an iteration took,
 * how long each update's adapter took to reach the server (write, load, unload the old:
 * time/adapter_publish_s), and how far the server's log-probs were from the learner's
 * (rollout_is/logprob_gap, rollout_is/mean). The two runs sample differently (one server
 * process batches the requests as they arrive), so the curves agree in trend, not token by
 * token. Writes <out>/summary.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { runExperiment } from '../src/engine/experiment.js';
import type { MetricsRow } from '../src/store/run.js';
import { arg } from './script.js';

const config = arg('config', 'configs/runs/hf/rlvr-lora.yaml');
const out = arg('out', 'runs/openai-engine');
const iterations = arg('iterations', '20');
const evalEvery = arg('eval-every', '5');
const first = arg('first', 'openai');
if (first !== 'openai' && first !== 'local') throw new Error(`--first: openai or local, got '${first}'`);
mkdirSync(out, { recursive: true });

const base = loadConfig(config).models;
const paths = [...new Set(Object.values(base).map((m) => m.path))];
if (paths.length !== 1 || !paths[0])
  throw new Error(`${config}: expected one Hugging Face base, got ${paths.join(', ')}`);

/** `coevolve serve BASE --enable-lora` on a free port, resolved with its URL. */
function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['bin/coevolve.js', 'serve', paths[0]!, '--enable-lora', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      child.kill('SIGKILL');
      process.exit(1);
    });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      const m = /serving '.*' at (\S+)/.exec((err += d.toString()));
      if (m) resolve({ url: m[1], child });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN;
};
const values = (rows: MetricsRow[], key: string) =>
  rows.filter((r) => r.iteration > 0 && typeof r[key] === 'number').map((r) => r[key] as number);

const server = await startServer();
console.error(`server: ${server.url}`);
const results: Record<string, MetricsRow[]> = {};
try {
  for (const engine of first === 'openai' ? ['openai', 'local'] : ['local', 'openai']) {
    const set = [
      `iterations=${iterations}`,
      `eval.every=${evalEvery}`,
      `checkpointEvery=${iterations}`,
      ...(engine === 'openai' ? ['rollout.engine=openai', `rollout.url=${server.url}`] : []),
    ];
    const load = loadavg()[0];
    const t0 = performance.now();
    const { metrics } = await runExperiment(config, { set, out: join(out, engine), log: (l) => console.error(l) });
    console.error(`${engine}: ${((performance.now() - t0) / 1000).toFixed(0)}s, load before ${load.toFixed(2)}`);
    results[engine] = metrics;
  }
} finally {
  server.child.kill('SIGTERM');
}

const evals = (rows: MetricsRow[]) =>
  Object.fromEntries(
    rows.filter((r) => typeof r['eval/pass1'] === 'number').map((r) => [r.iteration, r['eval/pass1']]),
  );
const summary = {
  config,
  iterations: Number(iterations),
  load: loadavg(),
  pass1: { openai: evals(results.openai), local: evals(results.local) },
  iterationSeconds: {
    openai: median(values(results.openai, 'time/iteration_s')),
    local: median(values(results.local, 'time/iteration_s')),
  },
  rolloutSeconds: {
    openai: median(values(results.openai, 'time/rollout_s')),
    local: median(values(results.local, 'time/rollout_s')),
  },
  adapterPublishSeconds: {
    median: median(values(results.openai, 'time/adapter_publish_s')),
    max: Math.max(...values(results.openai, 'time/adapter_publish_s')),
  },
  logprobGap: median(values(results.openai, 'rollout_is/logprob_gap')),
  isMean: median(values(results.openai, 'rollout_is/mean')),
  accuracyTrain: {
    openai: values(results.openai, 'accuracy/train'),
    local: values(results.local, 'accuracy/train'),
  },
};
writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
console.log(JSON.stringify(summary));
