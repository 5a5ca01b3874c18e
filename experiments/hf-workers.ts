/**
 * Worker-thread replicas of a Hugging Face policy (src/parallel), measured on a run config:
 *   npx tsx experiments/hf-workers.ts [--config configs/runs/hf/rlvr-lora.yaml] [--iterations 20] [--rounds 2] [--out runs/hf-workers] [--set key=value ...]
 * Runs the config for --iterations with `workers: 1` and `workers: 2`, alternating (w1, w2,
 * w1-r2, w2-r2, ...), same seed, so a busy machine slows both alike. Reports per condition
 * the median over iterations 2..N of rollout tokens/s and of each phase's seconds (rollout,
 * train, and the rest: scoring and advantages on the learner's thread alone; an iteration's
 * evaluation and checkpoint apart), iterations/min over the whole run (evaluations included),
 * and the held-out curve (every `eval/` metric);
 * then the ratios of two threads over one per round and their median. The load average is
 * recorded before and after each condition, and the cores it got (CPU seconds of all its
 * threads over wall seconds: on a machine busy with other sessions, Linux's autogroup
 * scheduling gives this process its share whatever its thread count). Writes results.json
 * under --out; resumable: a finished condition is read, not run again, and an unfinished one
 * resumes from its checkpoint.
 * The base must exist (configs/pretrain/qwen3-chat-add2.yaml makes the default config's):
 * the script does not pretrain one.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { runExperiment } from '../src/engine/experiment.js';
import { RunStore, type MetricsRow } from '../src/store/run.js';
import { arg } from './script.js';

const config = arg('config', 'configs/runs/hf/rlvr-lora.yaml');
const iterations = Number(arg('iterations', '20'));
const rounds = Number(arg('rounds', '2'));
const out = arg('out', 'runs/hf-workers');
for (const [name, n] of [
  ['iterations', iterations],
  ['rounds', rounds],
] as const)
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: a positive integer, got ${n}`);
const extra = process.argv.flatMap((a, i) => (a === '--set' ? [process.argv[i + 1]] : []));
mkdirSync(out, { recursive: true });

const round3 = (x: number) => Number(x.toFixed(3));
const load = () => loadavg().map((x) => Number(x.toFixed(2)));

/** Runs (or reads, when done; resumes, when cut) one condition. */
async function condition(
  name: string,
  workers: number,
): Promise<{ rows: MetricsRow[]; load: number[][]; cores?: number }> {
  const dir = join(out, name);
  const before = load();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  if (existsSync(join(dir, 'run.json'))) {
    const store = await RunStore.open(dir);
    if (store.record.status === 'done') return { rows: store.readMetrics(), load: [] };
  }
  const log = (line: string) => {
    if (/^(workers|run directory|note|warning)/.test(line)) console.error(`${name}: ${line}`);
  };
  const run = existsSync(join(dir, 'run.json'))
    ? runExperiment(undefined, { resume: dir, log })
    : runExperiment(config, {
        set: [`iterations=${iterations}`, `workers=${workers}`, ...extra],
        out: dir,
        log,
        makeBases: false,
      });
  const { metrics } = await run;
  // CPU time of every thread of this process over wall time: the cores the run got (the
  // scheduler shares a busy machine between sessions, however many threads each runs)
  const used = process.cpuUsage(cpu);
  const cores = round3((used.user + used.system) / 1000 / (performance.now() - t0));
  return { rows: metrics, load: [before, load()], cores };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

/** The figures of one condition's metrics (iteration 1 is left out of the medians: kernels warm up in it). */
function figures(rows: MetricsRow[]) {
  const trained = rows.filter((r) => r.iteration >= 1 && typeof r['time/iteration_s'] === 'number');
  const steady = trained.filter((r) => r.iteration >= 2);
  const med = (key: string) => round3(median(steady.map((r) => r[key] as number)));
  const total = trained.reduce((s, r) => s + (r['time/iteration_s'] as number), 0);
  const evaluated = (r: MetricsRow) => Object.keys(r).some((k) => k.startsWith('eval/'));
  // what an iteration spends beside rolling out and training: an evaluation (and checkpoint) when it has one, else scoring and advantages
  const rest = (rs: MetricsRow[]) =>
    round3(
      median(
        rs.map(
          (r) => (r['time/iteration_s'] as number) - (r['time/rollout_s'] as number) - (r['time/train_s'] as number),
        ),
      ),
    );
  return {
    rollout_tokens_per_s: med('time/rollout_tokens_per_s'),
    rollout_s: med('time/rollout_s'),
    train_s: med('time/train_s'),
    other_s: rest(steady.filter((r) => !evaluated(r))),
    evaluation_s: rest(trained.filter(evaluated)),
    iteration_s: med('time/iteration_s'),
    iterations_per_min: round3((60 * trained.length) / total),
    heldout: rows
      .filter(evaluated)
      .map((r) =>
        Object.fromEntries([['iteration', r.iteration], ...Object.entries(r).filter(([k]) => k.startsWith('eval/'))]),
      ),
  };
}

const results: Record<string, unknown> = { config, iterations, rounds, set: extra };
const speed: Record<string, ReturnType<typeof figures> & { load: number[][]; cores?: number }> = {};
const pairs: { tokens: number; iterations: number }[] = [];
for (let r = 0; r < rounds; r++) {
  const tag = r ? `-r${r + 1}` : '';
  for (const workers of [1, 2]) {
    const name = `w${workers}${tag}`;
    const got = await condition(name, workers);
    speed[name] = { ...figures(got.rows), load: got.load, cores: got.cores };
    const { heldout, ...brief } = speed[name];
    console.error(`${name}: ${JSON.stringify(brief)} heldout ${JSON.stringify(heldout)}`);
  }
  const [one, two] = [speed[`w1${tag}`], speed[`w2${tag}`]];
  pairs.push({
    tokens: round3(two.rollout_tokens_per_s / one.rollout_tokens_per_s),
    iterations: round3(two.iterations_per_min / one.iterations_per_min),
  });
}
results.speed = speed;
results.ratio_per_round = pairs;
results.rollout_tokens_ratio = round3(median(pairs.map((p) => p.tokens)));
results.iterations_per_min_ratio = round3(median(pairs.map((p) => p.iterations)));
results.load_at_end = load();
writeFileSync(join(out, 'results.json'), JSON.stringify(results, null, 2) + '\n');
console.log(
  JSON.stringify({
    rollout_tokens_ratio: results.rollout_tokens_ratio,
    iterations_per_min_ratio: results.iterations_per_min_ratio,
    per_round: pairs,
  }),
);
