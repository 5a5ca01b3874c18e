import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { jsonRows } from '../jsonl.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import * as tf from '@tensorflow/tfjs';
import { parseConfig } from '../../src/config/load.js';
import { runExperiment } from '../../src/engine/experiment.js';
import { loadModels } from '../../src/engine/models.js';
import { activeSgemm } from '../../src/backend/native/index.js';
import { loadHfPolicy } from '../../src/models/hf/checkpoint.js';
import type { HfPolicy } from '../../src/models/hf/policy.js';
import { RunStore } from '../../src/store/run.js';
import { exportRun, readTrajectories } from '../../src/export/trajectories.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { hfSolverConfig } from './fixtures.js';

/** RLVR on a tiny Qwen3-architecture directory: its own byte-level tokenizer, its eos, its weights. */
/** The shared solver config with `model`'s settings (lora, adapter) on the base. */
const hfConfig = (root: string, base: string, model: Record<string, unknown>, over: Partial<ExperimentInput> = {}) =>
  hfSolverConfig(root, base, {
    models: { main: { kind: 'hf', path: base, ...model } },
    ...over,
  } as Partial<ExperimentInput>);

const bin = new URL('../../bin/coevolve.js', import.meta.url).pathname;
const rows = (dir: string) => jsonRows<{ iteration: number; [k: string]: unknown }>(join(dir, 'metrics.jsonl'));

/** The coevolve command; killed (resolving null) once `killWhen` holds. */
function cli(args: string[], killWhen?: () => boolean): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    const timer =
      killWhen &&
      setInterval(() => {
        if (killWhen()) child.kill('SIGKILL');
      }, 20);
    child.on('exit', (code, signal) => {
      if (timer) clearInterval(timer);
      if (code) reject(new Error(`exit ${code}: ${err}`));
      else resolve(signal === 'SIGKILL' ? null : code);
    });
  });
}

describe('a run on a Hugging Face model', function () {
  this.timeout(120000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-hfrun-'));
  const base = writeTinyHf(join(root, 'base'));

  it('LoRA: trains the adapter only, never writes the base, and checkpoints a PEFT adapter', async () => {
    const out = join(root, 'lora');
    const weights = readFileSync(join(base, 'model.safetensors'));
    const { metrics } = await runExperiment(hfConfig(root, base, { lora: { r: 2, alpha: 4 } }), { out, log: () => {} });
    const last = metrics.find((r) => r.iteration === 2)!;
    expect(last['turns/solver']).to.equal(16);
    expect(last['losses/main/loss']).to.be.a('number');
    expect(last['eval/pass1']).to.be.within(0, 1);
    expect(readFileSync(join(base, 'model.safetensors')).equals(weights), 'the base is never written').to.equal(true);
    const ck = join(out, 'checkpoints', 'iter-000002', 'main');
    for (const f of ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.bin'])
      expect(existsSync(join(ck, f)), f).to.equal(true);
    expect((await RunStore.open(out)).record.iterations).to.equal(2);
  });

  it("LoRA: a run killed after a checkpoint resumes, and its later iterations equal an uninterrupted run's", async () => {
    const config = join(root, 'resume.yaml');
    writeFileSync(
      config,
      stringify(hfConfig(root, base, { lora: { r: 2, alpha: 4 } }, { iterations: 6, checkpointEvery: 2 })),
    );
    const whole = join(root, 'whole');
    await cli(['run', config, '--out', whole]);
    const cut = join(root, 'cut');
    expect(await cli(['run', config, '--out', cut], () => rows(cut).some((r) => r.iteration >= 3))).to.equal(null);
    await cli(['run', '--resume', cut]);
    const keys = ['reward/solver', 'losses/main/loss', 'rollout/entropy'];
    const pick = (dir: string) =>
      rows(dir)
        .filter((r) => r.iteration > 4)
        .map((r) => keys.map((k) => r[k]));
    expect(pick(cut)).to.have.length(2);
    expect(pick(cut)).to.deep.equal(pick(whole));
  });

  it('LoRA with a moving KL reference (trainer.refSync): a resume reads the reference the checkpoint saved', async () => {
    const out = join(root, 'refsync');
    // an entropy bonus gives a gradient whatever the untrained model's rewards are, so the policy moves
    const c = hfConfig(
      root,
      base,
      { lora: { r: 2, alpha: 4 }, reference: true },
      { trainer: { lr: 1e-2, klCoef: 0.1, entropyCoef: 0.1, refSync: { steps: 1, mixupAlpha: 0.5 } } },
    );
    await runExperiment(c, { out, log: () => {} });
    const ck = join(out, 'checkpoints', 'iter-000002');
    const loaded = await loadModels((await RunStore.open(out)).config, ck);
    const saved = (await loadHfPolicy(join(ck, 'main.reference'))).policy;
    const values = (p: { weights: Record<string, tf.Variable> }) =>
      Object.values(p.weights).flatMap((v) => [...v.dataSync()]);
    expect(values(loaded.references.main as HfPolicy)).to.deep.equal(values(saved));
    // and it is not the starting adapter a fresh run's reference is: refSync moved it
    const fresh = await loadModels((await RunStore.open(out)).config);
    expect(values(fresh.references.main as HfPolicy)).to.not.deep.equal(values(saved));
  });

  it('full fine-tuning: the checkpoint is a Hugging Face directory', async () => {
    const out = join(root, 'full');
    await runExperiment(hfConfig(root, base, {}, { iterations: 1 }), { out, log: () => {} });
    const ck = join(out, 'checkpoints', 'iter-000001', 'main');
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'optimizer.bin'])
      expect(existsSync(join(ck, f)), f).to.equal(true);
  });

  it('an adapter per role on one base: one copy of the base, two PEFT adapters, each trained by its own role only', async () => {
    const out = join(root, 'adapters');
    const c = hfConfig(
      root,
      base,
      { lora: { r: 2, alpha: 4 } },
      {
        iterations: 1,
        roles: {
          proposer: { kind: 'proposer', model: 'main', adapter: 'proposer' },
          solver: { kind: 'solver', model: 'main', adapter: 'solver', train: false },
        },
        tasks: {
          family: 'arithmetic',
          difficulty: { digits: 1, operands: 2, operators: '+' },
          train: { source: 'generate', count: 40 },
          perIteration: 2,
        },
        arena: { kind: 'propose-solve', groupSize: 2, maxNewTokens: 4, temperature: 1, options: { attempts: 2 } },
        // an untrained proposer writes invalid tasks (the penalty, all alike): the entropy bonus still moves it
        judges: [
          { kind: 'verifier', options: { role: 'solver' } },
          { kind: 'uncertainty', options: { role: 'proposer' } },
        ],
        trainer: { lr: 1e-2, entropyCoef: 0.1 },
        eval: { every: 100 },
      },
    );
    await runExperiment(c, { out, log: () => {} });
    const config = (await RunStore.open(out)).config;
    expect(Object.keys(config.models).sort()).to.deep.equal(['main-proposer', 'main-solver']);
    const loaded = await loadModels(config, join(out, 'checkpoints', 'iter-000001'));
    const [p, s] = [loaded.models['main-proposer'], loaded.models['main-solver']] as HfPolicy[];
    expect(p.base, 'one base in memory').to.equal(s.base);
    // a shared base is loaded frozen: outside the heap when a native sgemm serves the products
    expect(p.base.frozen).to.equal(activeSgemm() !== undefined);
    const values = (x: HfPolicy) => Object.values(x.weights).flatMap((v) => [...v.dataSync()]);
    const fresh = await loadModels(config);
    // the proposer's adapter moved; the solver's (train: false) is as it started
    expect(values(p)).to.not.deep.equal(values(fresh.models['main-proposer'] as HfPolicy));
    expect(values(s)).to.deep.equal(values(fresh.models['main-solver'] as HfPolicy));
    for (const m of ['main-proposer', 'main-solver'])
      expect(existsSync(join(out, 'checkpoints', 'iter-000001', m, 'adapter_model.safetensors')), m).to.equal(true);
    // a later run starts its proposer from that trained adapter (the base's `adapters`), its solver anew
    const next = parseConfig(
      hfConfig(
        root,
        base,
        { lora: { r: 2, alpha: 4 }, adapters: { proposer: join(out, 'checkpoints', 'iter-000001', 'main-proposer') } },
        { roles: c.roles },
      ),
    );
    const started = await loadModels(next);
    expect(values(started.models['main-proposer'] as HfPolicy)).to.deep.equal(values(p));
    expect(values(started.models['main-solver'] as HfPolicy)).to.deep.equal(values(s));
  });

  it("speaks through the chat template, and exports the turns as text and as conversations (TRL's formats)", async () => {
    const out = join(root, 'chat');
    await runExperiment(
      hfConfig(
        root,
        base,
        { lora: { r: 2, alpha: 4 } },
        { iterations: 1, roles: { solver: { kind: 'solver', model: 'main', system: 'Add the numbers.' } } },
      ),
      { out, log: () => {} },
    );
    const plain = join(root, 'chat.jsonl'),
      chat = join(root, 'chat-messages.jsonl');
    const n = await exportRun(out, plain);
    expect(await exportRun(out, chat, { chat: true })).to.equal(n);
    const a = readTrajectories(plain),
      b = readTrajectories(chat, true);
    expect(n).to.equal(16);
    a.forEach((row, i) => {
      expect(row.prompt).to.match(/^\d\+\d=$/); // what the solver was shown: the task, no template around it
      expect(b[i].prompt).to.deep.equal([
        { role: 'system', content: 'Add the numbers.' },
        { role: 'user', content: row.prompt },
      ]);
      expect(b[i].completion).to.deep.equal([{ role: 'assistant', content: row.completion }]);
      expect({ ...b[i], prompt: row.prompt, completion: row.completion }).to.deep.equal(row);
    });
  });

  it('refuses a missing directory, an unreachable Redis for its workers, and a missing adapter', async () => {
    const err = await runExperiment(hfConfig(root, join(root, 'nope'), {}), {
      out: join(root, 'bad'),
      log: () => {},
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/models\.main\.path: .*nope does not exist/);
    const redis = await runExperiment(
      hfConfig(root, base, {}, { rollout: { engine: 'redis', url: 'redis://127.0.0.1:1' } }),
      { out: join(root, 'bad2'), log: () => {} },
    ).then(
      () => null,
      (e: Error) => e,
    );
    // a Hugging Face model goes to rollout workers (test/distributed/hf-workers.test.ts): the config passes, the unreachable Redis does not
    expect(redis?.message).to.match(/rollout\.url: cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    const adapter = await runExperiment(hfConfig(root, base, { adapter: join(root, 'no-adapter') }), {
      out: join(root, 'bad3'),
      log: () => {},
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(adapter?.message).to.match(/models\.main\.adapter: .*no-adapter has no adapter_config\.json/);
    expect(existsSync(join(root, 'bad'))).to.equal(false);
  });
});
