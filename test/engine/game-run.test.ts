import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { exportPolicyCommand, type ExportedPolicy } from '../../src/cli/export-policy.js';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { exploitability, fromTable, informationStates } from '../../src/games/exploitability.js';
import { kuhnPoker } from '../../src/games/kuhn.js';
import { textPolicyTable } from '../../src/engine/evaluators/exploitability.js';
import { EloEvaluator } from '../../src/engine/evaluators/elo.js';
import { arithmetic } from '../../src/tasks/index.js';
import { loadModel } from '../../src/models/store.js';
import { checkpointName } from '../../src/store/run.js';
import { PlayerRole } from '../../roles/player.js';
import { initBackend } from '../../src/backend/index.js';
import { TEST_BACKEND } from '../needs.js';

const BASE = 'checkpoints/base-kuhn-text';

/** A few iterations of Kuhn self-play by text from the shipped text base. */
function kuhnRun(out: string): ExperimentInput {
  return {
    name: 'kt',
    seed: 3,
    backend: TEST_BACKEND,
    iterations: 2,
    outDir: out,
    models: { main: { checkpoint: BASE } },
    roles: { seat0: { kind: 'player', model: 'main' }, seat1: { kind: 'player', model: 'main' } },
    tasks: { family: 'arithmetic', train: { source: 'none' }, perIteration: 8 },
    arena: { kind: 'game', groupSize: 2, maxNewTokens: 2, temperature: 1, options: { game: 'kuhn' } },
    judges: [{ kind: 'outcome', options: { role: ['seat0', 'seat1'] } }],
    trainer: { lr: 1e-3 },
    evaluators: [
      { kind: 'exploitability', name: 'kuhn' },
      { kind: 'elo', name: 'league', every: 1, options: { games: 40, poolSize: 2 } },
    ],
    eval: { every: 2 },
    checkpointEvery: 2,
  };
}

describe('a game run and its exported policy', function () {
  this.timeout(240000);

  it('trains both seats on their game returns, logs exploitability, and export-policy writes the same policy as a table', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-game-'));
    const path = join(root, 'c.yaml');
    writeFileSync(path, stringify(kuhnRun(root)));
    await runCommand(path, { set: [] });
    const dir = join(root, 'kt');
    const rows = readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = rows.find((r) => r.iteration === 2);
    expect(last['reward/seat0']).to.be.a('number');
    expect(last['reward/seat1']).to.be.a('number');
    expect(last['eval/kuhn/exploitability']).to.be.within(0, 1);
    expect(last['eval/kuhn/legal_mass']).to.be.above(0.9); // the base writes legal moves
    // Elo against the run's own past policies: the pool grows by one per evaluation, to its size
    expect(rows.filter((r) => 'eval/league/pool_size' in r).map((r) => r['eval/league/pool_size'])).to.deep.equal([
      0, 1, 2,
    ]);
    expect(last['eval/league/elo']).to.be.a('number').and.satisfy(Number.isFinite);
    expect(last['eval/league/score_vs_random']).to.be.within(0, 1);
    expect(last['eval/league/score_vs_pool']).to.be.within(0, 1);
    // the checkpoint keeps the pool (the two newest tables: it1 and it2), so a resumed run rates the same
    const loop = JSON.parse(readFileSync(join(dir, 'checkpoints', checkpointName(2), 'loop.json'), 'utf8'));
    expect(loop.evaluators.league.snapshots.map((x: { name: string }) => x.name)).to.deep.equal(['it1', 'it2']);
    const file = join(root, 'policy.json');
    const summary = await exportPolicyCommand(dir, { out: file });
    const exported = JSON.parse(readFileSync(file, 'utf8')) as ExportedPolicy;
    expect(exported.game).to.equal('kuhn');
    expect(exported.keyFormat).to.match(/card .*p \(pass\).*b \(bet\)/);
    // every information state once, each row a distribution over the legal moves
    expect(
      Object.keys(exported.policy)
        .map((k) => `${k.length % 2 ? 0 : 1}:${k}`)
        .sort(),
    ).to.deep.equal(informationStates(kuhnPoker));
    for (const row of Object.values(exported.policy))
      expect(Object.values(row).reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-9);
    // the file's own numbers: the evaluator's measure at the checkpoint, and recomputable from the table
    expect(exported.exploitability).to.be.closeTo(last['eval/kuhn/exploitability'], 1e-9);
    expect(exploitability(kuhnPoker, fromTable(exported.policy))).to.be.closeTo(exported.exploitability!, 1e-12);
    expect(summary.out).to.equal(file);
    // --iteration picks a checkpoint: the only one here is the last; another is refused, listing what is held
    const named = await exportPolicyCommand(dir, { out: join(root, 'p2.json'), iteration: 2 });
    expect(named.exploitability).to.equal(exported.exploitability);
    const missing = await exportPolicyCommand(dir, { out: join(root, 'p1.json'), iteration: 1 }).then(
      () => null,
      (e: Error) => e,
    );
    expect(missing?.message).to.match(/no checkpoint of iteration 1; held: iter-000002/);
  });

  it('a text policy table is scored at the sampling temperature: greedy play is one move per state', async () => {
    await initBackend(TEST_BACKEND);
    const loaded = await loadModel(BASE);
    if (loaded.kind !== 'tinylm' || !loaded.tokenizer) throw new Error(`${BASE} is not a text model`);
    const seats = [0, 1].map(() => ({ role: new PlayerRole(), model: loaded.model }));
    const sampled = textPolicyTable(kuhnPoker, seats, loaded.tokenizer!, 1);
    const greedy = textPolicyTable(kuhnPoker, seats, loaded.tokenizer!, 0);
    expect(sampled.legalMass).to.be.above(0.9);
    for (const [key, row] of Object.entries(greedy.table)) {
      expect(Object.values(row).sort()).to.deep.equal([0, 1]);
      // the greedy move is the sampled table's likelier one
      const likelier = Object.entries(sampled.table[key]).sort((a, b) => b[1] - a[1])[0][0];
      expect(row[likelier]).to.equal(1);
    }
    loaded.model.dispose();
  });

  it('an Elo pool restored from its state rates as the uninterrupted one, and a malformed state is refused', async () => {
    await initBackend(TEST_BACKEND);
    const loaded = await loadModel(BASE);
    if (loaded.kind !== 'tinylm' || !loaded.tokenizer) throw new Error(`${BASE} is not a text model`);
    const seats = ['seat0', 'seat1'].map((roleId) => ({ roleId, role: new PlayerRole(), model: 'main' }));
    const o = { temperature: 1, games: 40, poolSize: 3, snapshotEvery: 2 };
    const ctx = (iteration: number) => ({
      models: { main: loaded.model },
      tokenizer: loaded.tokenizer!,
      family: arithmetic,
      iteration,
      thorough: false,
    });
    const whole = new EloEvaluator('league', 1, kuhnPoker, seats, o);
    const a = [];
    for (const it of [0, 1, 2, 3]) a.push(await whole.run(ctx(it)));
    // snapshots every second evaluation: it0 then it2
    expect(a.map((m) => m.pool_size)).to.deep.equal([0, 1, 1, 2]);
    const first = new EloEvaluator('league', 1, kuhnPoker, seats, o);
    await first.run(ctx(0));
    await first.run(ctx(1));
    const resumed = new EloEvaluator('league', 1, kuhnPoker, seats, o);
    resumed.restore(JSON.parse(JSON.stringify(first.state())));
    expect([await resumed.run(ctx(2)), await resumed.run(ctx(3))]).to.deep.equal(a.slice(2));
    expect(() => resumed.restore({ snapshots: 'none' })).to.throw(/league.*snapshot pool is malformed/);
    loaded.model.dispose();
  });

  it('refuses a folder that is not a run, before any work', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-game-'));
    const err = await exportPolicyCommand(root, { out: join(root, 'p.json') }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/is not a run directory/);
  });
});
