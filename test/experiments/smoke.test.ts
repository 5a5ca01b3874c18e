import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { hfSolverConfig, tinyPretrainInput } from '../engine/fixtures.js';
import { need } from '../needs.js';
import { writeTinyHf } from '../models/hf-tiny.js';

/**
 * Each script under experiments/ run for a few iterations with tiny arguments, as a user runs
 * it (its own process, tsx), and checked for the output it exists to make. The scripts are not
 * shipped, so nothing else would notice one that stopped running.
 */
const run = promisify(execFile);

/** Runs `experiments/<script>.ts` with `args`; its stdout, split into lines. */
async function script(name: string, args: string[], timeout = 0): Promise<string[]> {
  try {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--conditions', 'coevolve-source', join('experiments', `${name}.ts`), ...args],
      { maxBuffer: 1 << 26, timeout },
    );
    return stdout.trim().split('\n');
  } catch (e) {
    // what the script said on stderr is the only clue to why it failed or hung
    const { stderr, killed } = e as { stderr?: string; killed?: boolean };
    throw new Error(
      `${name} ${killed ? `still running after ${timeout} ms` : 'failed'}:\n${(stderr ?? '').slice(-4000)}`,
    );
  }
}

/** What a script recorded in the checkpoint it saved (read as a file: the test process loads no model). */
const recorded = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).userDefinedMetadata.extra as Record<string, unknown>;

/** The JSON lines of a script's output. */
const json = (lines: string[]) => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

describe('the experiment scripts run', function () {
  this.timeout(60000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-experiments-'));
  const at = (f: string) => join(root, f);
  // eight held-out tasks of each shipped base, so that every pass over them is short
  const add2 = at('add2-8.jsonl');
  const sum3 = at('sum3-8.jsonl');
  before(() => {
    const head = (f: string) => readFileSync(f, 'utf8').trim().split('\n').slice(0, 8).join('\n') + '\n';
    writeFileSync(add2, head('checkpoints/base-add2/heldout.jsonl'));
    writeFileSync(sum3, head('checkpoints/base-sum3-working/heldout.jsonl'));
  });

  it('tournament-bound prints the best expected Spearman of each verdict budget', async () => {
    const rows = json(await script('tournament-bound', ['--n', '3']));
    expect(rows.map((r) => r.verdicts)).to.include(2);
    for (const r of rows) expect(r.bestExpectedSpearman).to.be.within(-1, 1);
    // more verdicts never rank worse
    const rhos = rows.map((r) => r.bestExpectedSpearman);
    expect(rhos).to.deep.equal([...rhos].sort((a, b) => a - b));
  });

  it('tournament-ranks prints a bracket against a round robin for each judge', async () => {
    const rows = json(await script('tournament-ranks', ['--groups', '10']));
    expect(new Set(rows.map((r) => r.judge)).size).to.equal(4);
    for (const r of rows) expect(r.spearman).to.be.within(-1, 1);
  });

  it('memory-ceiling prints each manager accuracy per horizon', async () => {
    const [row] = json(await script('memory-ceiling', ['--horizons', '4', '--count', '3']));
    expect(row.sessions).to.equal(4);
    for (const k of ['rule manager', 'always-add', 'keep-last', 'none']) expect(row[k], k).to.be.within(0, 1);
  });

  it('mmd-tabular writes a policy table that fit-table fits an MLP to', async () => {
    const table = at('kuhn-table.json');
    const mmd = json(await script('mmd-tabular', ['--game', 'kuhn', '--iterations', '10', '--out', table]));
    expect(mmd.at(-1).exploitability).to.be.at.least(0);
    const rows = Object.values(JSON.parse(readFileSync(table, 'utf8'))) as Record<string, number>[];
    expect(rows).to.have.length(12); // Kuhn's information states
    for (const row of rows) expect(Object.values(row).reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-9);
    const fit = json(await script('fit-table', ['--game', 'kuhn', '--table', table, '--steps', '10', '--hidden', '8']));
    expect(fit[0]).to.include({ game: 'kuhn', states: 12 });
    expect(fit.at(-1).step).to.equal(10);
    expect(fit.at(-1).exploitability).to.be.at.least(0);
  });

  it('game-pg trains an MLP by self-play, logs its progress and saves a checkpoint it resumes from', async () => {
    const out = at('pg');
    const args = ['--game', 'kuhn', '--episodes', '16', '--every', '1', '--save-every', '2'];
    await script('game-pg', [...args, '--iterations', '2', '--out', out]);
    expect(existsSync(join(out, 'checkpoint'))).to.equal(true);
    const lines = () => json(readFileSync(join(out, 'progress.jsonl'), 'utf8').trim().split('\n'));
    expect(lines().filter((l) => typeof l.iteration === 'number').length).to.be.at.least(1);
    await script('game-pg', ['--resume', out, '--iterations', '3']);
    expect(lines().some((l) => l.resumed === out)).to.equal(true);
  });

  it('big-update times one update in micro-batches and prints the peak RSS', async () => {
    const text = (await script('big-update', ['--samples', '8', '--micro-batch', '4'])).join('\n');
    expect(text).to.match(/update: [\d.]+ s \(\d+ tokens\/s\), loss -?[\d.]+/);
    expect(text).to.match(/peak RSS: \d+ MB/);
  });

  it("critic-heldout keeps a solver's own wrong working per task", async () => {
    const out = at('errors.jsonl');
    const [r] = json(
      await script('critic-heldout', [
        '--from',
        'checkpoints/base-sum3-working',
        '--tasks',
        sum3,
        '--tries',
        '4',
        '--out',
        out,
      ]),
    );
    expect(r.tasks).to.equal(8);
    const kept = readFileSync(out, 'utf8').trim().split('\n').filter(Boolean);
    expect(kept).to.have.length(r.kept);
    for (const l of kept) expect(JSON.parse(l)).to.have.keys('id', 'prompt', 'answer', 'working');
  });

  it('judge-capacity trains on the right verdicts and prints held-out accuracy', async () => {
    const rows = json(
      await script('judge-capacity', [
        '--from',
        'checkpoints/base-add2',
        '--tasks',
        'configs/data/add2-unseen.jsonl',
        '--heldout',
        add2,
        '--steps',
        '2',
        '--every',
        '1',
      ]),
    );
    expect(rows[0].step).to.equal(0);
    expect(rows.at(-1)).to.include({ step: 2 });
    for (const r of rows) expect(r.heldout_accuracy).to.be.within(0, 1);
  });

  it('judge-probe prints where a judge errs by the kind of answer shown', async () => {
    const lines = await script('judge-probe', [
      '--judge',
      'checkpoints/base-add2',
      '--solver',
      'checkpoints/base-add2',
      '--heldout',
      add2,
      '--samples',
      '2',
    ]);
    expect(json(lines)[0].own_right).to.be.within(0, 1);
    expect(lines.filter((l) => / wrong [\d.]+ of \d+$/.test(l)).length).to.be.above(1);
  });

  it('peer-base teaches a judge to answer again and saves it', async () => {
    const out = at('peer');
    const rows = json(
      await script('peer-base', [
        '--from',
        'checkpoints/base-add2',
        '--heldout',
        add2,
        '--steps',
        '2',
        '--every',
        '1',
        '--out',
        out,
      ]),
    );
    expect(rows.map((r) => r.step)).to.deep.equal([0, 1, 2]);
    for (const r of rows) expect(r.solver).to.be.within(0, 1);
    expect(recorded(out).from).to.equal('checkpoints/base-add2');
  });

  it('pretrain-speed times a pretrain config on one thread and on every core, alternating', async () => {
    const config = at('tiny-pretrain.yaml');
    writeFileSync(config, stringify(tinyPretrainInput(at('tiny-base'))));
    const rows = json(await script('pretrain-speed', ['--config', config, '--steps', '1', '--rounds', '2']));
    expect(rows.filter((r) => r.round !== undefined)).to.have.length(4);
    const summary = rows.at(-1);
    expect(summary.oneThread).to.be.above(0);
    expect(summary.ratio).to.be.closeTo(summary.everyCore / summary.oneThread, 0.01);
  });

  it('rollout-scaling measures one and two rollout workers through Redis', async function () {
    need(this, 'redis', 'the script starts a redis-server');
    // 15 to 35 s on 2 cores; it is stopped (workers and server too) well before mocha gives up on it
    this.timeout(300000);
    const out = at('scaling');
    await script(
      'rollout-scaling',
      ['--workers-only', '--iterations', '3', '--per-iteration', '1', '--out', out],
      240000,
    );
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(Object.keys(results.speed)).to.deep.equal(['redis-1worker', 'redis-2workers']);
    expect(results.scaling_2_over_1_workers).to.be.above(0);
    expect(readdirSync(out)).to.include.members(['redis-1worker', 'redis-2workers']);
  });

  it('openai-engine runs a LoRA config against coevolve serve and in process, and reports both', async function () {
    this.timeout(180000);
    const base = writeTinyHf(at('oa-base'));
    const config = at('oa.yaml');
    writeFileSync(
      config,
      stringify(
        hfSolverConfig(root, base, {
          name: 'oa',
          seed: 1,
          tasks: {
            family: 'arithmetic',
            difficulty: { digits: 1, operands: 2, operators: '+' },
            train: { source: 'generate', count: 20 },
            eval: { source: 'generate', count: 4 },
            perIteration: 2,
          },
          arena: { groupSize: 2, maxNewTokens: 3, temperature: 1 },
          eval: { samples: 1 },
        }),
      ),
    );
    const out = at('openai-engine');
    const [summary] = json(
      await script(
        'openai-engine',
        ['--config', config, '--iterations', '2', '--eval-every', '2', '--out', out],
        150000,
      ),
    );
    expect(Object.keys(summary.pass1.openai)).to.deep.equal(['0', '2']);
    expect(Object.keys(summary.pass1.local)).to.deep.equal(['0', '2']);
    expect(summary.adapterPublishSeconds.median).to.be.above(0);
    expect(summary.logprobGap).to.be.below(1e-3);
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))).to.deep.equal(summary);
  });

  it('generate-speed times generation on a Hugging Face base and prints the medians', async () => {
    const lines = json(
      await script('generate-speed', [
        '--base',
        writeTinyHf(at('speed-hf')),
        '--rows',
        '3',
        '--new',
        '2',
        '--reps',
        '2',
      ]),
    );
    expect(lines.map((l) => l.rep)).to.deep.equal([0, 1, 2, undefined]);
    const summary = lines.at(-1);
    expect(summary).to.include({ rows: 3, newTokens: 2 });
    expect(summary.cpu_s).to.be.oneOf([lines[1].cpu_s, lines[2].cpu_s]);
    expect(summary.tokens_per_cpu_s).to.be.closeTo(6 / summary.cpu_s, 0.1 + 0.001 * summary.tokens_per_cpu_s);
  });

  it('hf-workers runs a Hugging Face config on one and two threads, alternating, and reads a finished condition again', async function () {
    this.timeout(180000);
    const out = at('hf-workers');
    const args = [
      ...['--iterations', '2', '--rounds', '1', '--out', out],
      ...['--set', `models.main.path=${writeTinyHf(at('tiny-hf'))}`, '--set', `tasks.eval.path=${add2}`],
      ...['--set', 'tasks.perIteration=2', '--set', 'arena.groupSize=2', '--set', 'eval.every=1'],
    ];
    const [summary] = json(await script('hf-workers', args));
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(Object.keys(results.speed)).to.deep.equal(['w1', 'w2']);
    for (const c of ['w1', 'w2']) {
      expect(results.speed[c].rollout_tokens_per_s, c).to.be.above(0);
      expect(results.speed[c].cores, c).to.be.above(0);
      expect(
        results.speed[c].heldout.map((r: { iteration: number }) => r.iteration),
        c,
      ).to.deep.equal([0, 1, 2]);
    }
    expect(summary.rollout_tokens_ratio).to.be.closeTo(
      results.speed.w2.rollout_tokens_per_s / results.speed.w1.rollout_tokens_per_s,
      0.01,
    );
    // run again: both conditions are read, not run (their load is recorded only when run)
    await script('hf-workers', args);
    const again = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(again.speed.w1.load).to.deep.equal([]);
    expect(again.speed.w1.cores).to.equal(undefined);
    expect(again.speed.w1.rollout_tokens_per_s).to.equal(results.speed.w1.rollout_tokens_per_s);
  });

  it('spy-vote-mix trains on a spy corpus mix and measures a base', async function () {
    this.timeout(180000); // 24 s with native matrices on a free machine; wasm alone, beside other jobs, over 60 s
    const trained = await script('spy-vote-mix', ['--corpus', '{"oddVotes":0.5}', '--n', '200', '--steps', '250']);
    expect(trained.at(-1)).to.match(/"oddVotes":0\.5.*step 250: loss [\d.]+, odd-letter held-out [01]\.\d{3}/);
    const measured = await script('spy-vote-mix', ['--base', 'checkpoints/base-spy-informed']);
    expect(measured).to.have.length(2);
    expect(measured[1]).to.match(/temperature 1: odd-letter votes \d+\/\d+ = [01]\.\d{3}; legal clues/);
  });

  it("spy-ceiling measures a base's clue policies and prints the vote ceilings", async () => {
    const out = await script('spy-ceiling', [
      '--civ',
      'uniform',
      '--spy',
      'checkpoints/base-spy-informed',
      '--samples',
      '40',
    ]);
    const m = out
      .at(-1)!
      .match(/spy blends ([\d.]+); vote accuracy ceilings: bayes ([\d.]+), rule ([\d.]+), team ([\d.]+)/);
    expect(m, out.at(-1)).to.not.equal(null);
    const [blend, bayes, rule, team] = m!.slice(1).map(Number);
    expect(blend).to.be.within(0, 1);
    expect(bayes).to.be.at.least(rule);
    expect(team).to.be.at.least(1 / 3);
  });
});
