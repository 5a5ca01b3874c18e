/**
 * The self-play experiments of the README, resumable: every condition x seed is one run
 * directory under runs/selfplay/; a finished run is skipped, a killed one resumed. Prints and
 * writes (runs/selfplay/summary.md) harder-set accuracy per condition: the mean of each run's
 * last four evaluations, then the mean and spread (sd) over seeds, with the solver rollouts used.
 *
 *   npx tsx experiments/selfplay.ts [--seeds 1,2,3] [--parallel 2] [--only uniform,frozen] [--iterations 300] [--summary]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Overrides that give the proposer and the solver a model each, both from the base. */
const SEPARATE = [
  'models={proposer: {checkpoint: checkpoints/base-selfplay-add2}, solver: {checkpoint: checkpoints/base-selfplay-add2}}',
  'roles.proposer.model=proposer',
  'roles.solver.model=solver',
];

/** Each condition: a config, the overrides that make it, and the evaluator it is measured by (default `harder`). */
export const CONDITIONS: Record<string, { config: string; set: string[]; target?: string }> = {
  uniform: { config: 'configs/selfplay/uniform.yaml', set: [] },
  // the base's proposer, never trained: its own model, since a model shared with a training solver drifts
  frozen: { config: 'configs/selfplay/learnability.yaml', set: [...SEPARATE, 'roles.proposer.train=false'] },
  'frozen-shared': { config: 'configs/selfplay/learnability.yaml', set: ['roles.proposer.train=false'] },
  learnability: { config: 'configs/selfplay/learnability.yaml', set: [] },
  uncertainty: {
    config: 'configs/selfplay/learnability.yaml',
    set: ['judges.1={kind: uncertainty, options: {role: proposer, p: verifier}}'],
  },
  coverage: {
    config: 'configs/selfplay/learnability.yaml',
    set: ['judges.2={kind: coverage, weight: 0.5, options: {role: proposer}}'],
  },
  grounded: {
    config: 'configs/selfplay/learnability.yaml',
    set: ['judges.1={kind: grounded, options: {role: proposer, probe: configs/data/add2x2-probe-64.jsonl}}'],
  },
  'label-free': { config: 'configs/selfplay/label-free.yaml', set: [] },
  // on base-selfplay-sum3, whose own vote beats its greedy answer (see the config)
  'label-free-sum3': { config: 'configs/selfplay/label-free-sum3.yaml', set: [], target: 'heldout' },
  separate: { config: 'configs/selfplay/learnability.yaml', set: SEPARATE },
};

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const seeds = arg('seeds', '1,2,3').split(',').map(Number);
const parallel = Number(arg('parallel', '2'));
const only = arg('only', Object.keys(CONDITIONS).join(',')).split(',');
const iterations = arg('iterations', '');
const root = arg('out', 'runs/selfplay');
const bin = new URL('../bin/coevolve.js', import.meta.url).pathname;

interface Job {
  cond: string;
  seed: number;
  dir: string;
}

function status(dir: string): string | undefined {
  const f = join(dir, 'run.json');
  return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')).status : undefined;
}

function runJob(j: Job): Promise<void> {
  const c = CONDITIONS[j.cond];
  const s = status(j.dir);
  if (s === 'done') return Promise.resolve();
  const sets = [
    ...c.set,
    `seed=${j.seed}`,
    `name=${j.cond}-s${j.seed}`,
    ...(iterations ? [`iterations=${iterations}`] : []),
  ];
  const args = s ? ['run', '--resume', j.dir] : ['run', c.config, ...sets.flatMap((x) => ['--set', x]), '--out', j.dir];
  return new Promise((ok, fail) => {
    mkdirSync(root, { recursive: true });
    const log = join(root, `${j.cond}-s${j.seed}.log`);
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let text = '';
    child.stderr.on('data', (d) => {
      text += d;
    });
    child.on('exit', (code) => {
      writeFileSync(log, text);
      if (code === 0) ok();
      else fail(new Error(`${j.cond} seed ${j.seed} exited ${code}; see ${log}`));
    });
  });
}

/** The run's curve of one metric: [iteration, value] wherever it was measured. */
export function curve(dir: string, key: string): [number, number][] {
  const f = join(dir, 'metrics.jsonl');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .trim()
    .split('\n')
    .flatMap((l) => {
      try {
        const r = JSON.parse(l);
        return typeof r[key] === 'number' ? [[r.iteration, r[key]] as [number, number]] : [];
      } catch {
        return [];
      }
    });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) =>
  xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)) : 0;

/** Every finished run of the conditions asked for, whichever batch made it. */
function summary(): string {
  const jobs: Job[] = only.flatMap((cond) =>
    [1, 2, 3, 4, 5, 6, 7, 8, 9].map((seed) => ({ cond, seed, dir: join(root, `${cond}-s${seed}`) })),
  );
  const lines = [
    '| condition | seeds | set | at 0 | last 4 evals (mean ± sd over seeds) | easy, last 4 | proposed digits, first → last ' +
      '| distinct proposals, first → last | pseudo-label accuracy, first → last | solver rollouts |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const cond of only) {
    const runs = jobs.filter((j) => j.cond === cond && status(j.dir) === 'done');
    if (runs.length === 0) continue;
    const last4 = (dir: string, key: string) =>
      mean(
        curve(dir, key)
          .slice(-4)
          .map(([, v]) => v),
      );
    const target = `eval/${CONDITIONS[cond].target ?? 'harder'}/pass1`;
    const harder = runs.map((r) => last4(r.dir, target));
    const easy = runs.map((r) => last4(r.dir, 'eval/easy/pass1'));
    const start = mean(runs.map((r) => curve(r.dir, target)[0]?.[1] ?? NaN));
    /** first ten and last ten iterations of a per-iteration metric, averaged over the runs */
    const drift = (key: string, digits: number) => {
      const cs = runs.map((r) => curve(r.dir, key)).filter((c) => c.length > 0);
      return cs.length
        ? `${mean(cs.map((c) => mean(c.slice(0, 10).map(([, v]) => v)))).toFixed(digits)} → ${mean(cs.map((c) => mean(c.slice(-10).map(([, v]) => v)))).toFixed(digits)}`
        : '';
    };
    const rollouts = mean(runs.map((r) => curve(r.dir, 'turns/solver').reduce((n, [, v]) => n + v, 0)));
    const easyText = Number.isNaN(mean(easy)) ? '' : mean(easy).toFixed(3);
    lines.push(
      `| ${cond} | ${runs.length} | ${CONDITIONS[cond].target ?? 'harder'} | ${start.toFixed(3)} ` +
        `| ${mean(harder).toFixed(3)} ± ${sd(harder).toFixed(3)} | ${easyText} | ${drift('proposals/digits', 2)} ` +
        `| ${drift('proposals/distinct', 2)} | ${drift('ttrl/label_accuracy', 2)} | ${rollouts.toFixed(0)} |`,
    );
  }
  return [...lines, '', ...curves(jobs)].join('\n');
}

/** Each condition's curve on its own evaluator: the mean over finished seeds at every evaluation. */
function curves(jobs: Job[]): string[] {
  const rows: string[] = [];
  let header: number[] = [];
  for (const cond of only) {
    const runs = jobs.filter((j) => j.cond === cond && status(j.dir) === 'done');
    if (runs.length === 0) continue;
    const cs = runs.map((r) => curve(r.dir, `eval/${CONDITIONS[cond].target ?? 'harder'}/pass1`));
    const its = cs[0].map(([i]) => i);
    if (its.length > header.length) header = its;
    rows.push(
      `| ${cond} (${runs.length}) | ${its.map((_, k) => mean(cs.map((c) => c[k]?.[1] ?? NaN)).toFixed(3)).join(' | ')} |`,
    );
  }
  if (rows.length === 0) return [];
  return [`| condition (seeds) | ${header.join(' | ')} |`, `| --- | ${header.map(() => '---').join(' | ')} |`, ...rows];
}

async function main(): Promise<void> {
  if (process.argv.includes('--summary')) {
    console.log(summary()); // what has finished so far, without starting anything
    return;
  }
  for (const cond of only)
    if (!CONDITIONS[cond]) throw new Error(`unknown condition '${cond}'; known: ${Object.keys(CONDITIONS).join(', ')}`);
  // seed by seed, so a cut-short batch still has every condition at its first seeds
  const jobs: Job[] = seeds.flatMap((seed) =>
    only.map((cond) => ({ cond, seed, dir: join(root, `${cond}-s${seed}`) })),
  );
  const queue = [...jobs];
  const failures: Error[] = [];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let j = queue.shift(); j; j = queue.shift()) {
        const t0 = Date.now();
        await runJob(j).catch((e: Error) => failures.push(e));
        console.error(`${j.cond} seed ${j.seed}: ${status(j.dir)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      }
    }),
  );
  const table = summary();
  writeFileSync(join(root, 'summary.md'), table + '\n');
  console.log(table);
  for (const f of failures) console.error(f.message);
}

await main();
