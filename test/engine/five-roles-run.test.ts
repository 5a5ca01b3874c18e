import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import { pretrain, PretrainSchema } from '../../src/pretrain/index.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { tinyArchitecture, writeTinyHf } from '../models/hf-tiny.js';
import { TEST_BACKEND } from '../needs.js';

// The shipped five-roles run, on a tiny base made by the shipped pretrain config's sections
// (2 steps): five adapters on one base, one joint update, the bank carried in the checkpoint,
// and each role's held-out measure.
describe('a five-roles run', function () {
  this.timeout(300000);

  it('trains five adapters on one base and measures each role on its held-out set', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-five-run-'));
    const tok = writeTinyHf(join(root, 'tok'));
    const shipped = parse(readFileSync('configs/pretrain/qwen3-five-roles.yaml', 'utf8'));
    const base = join(root, 'base');
    await pretrain(
      PretrainSchema.parse({
        ...shipped,
        backend: TEST_BACKEND,
        corpus: { train: 40, heldOut: 6 },
        verdicts: { ...shipped.verdicts, heldOut: 4 },
        architecture: tinyArchitecture(tok, 320),
        init: undefined,
        train: { steps: 2, batchSize: 8, lr: 0.01 },
        evalEvery: 2,
        sharedRows: false,
        out: base,
        outDir: join(root, 'runs'),
      }),
      { log: () => {} },
    );
    const c = parse(readFileSync('configs/runs/hf/five-roles.yaml', 'utf8')) as ExperimentInput;
    const heldout = join(base, 'heldout.jsonl');
    Object.assign(c, {
      backend: TEST_BACKEND,
      iterations: 2,
      outDir: root,
      checkpointEvery: 1,
      eval: { every: 2 },
    });
    c.models.base = { ...c.models.base, path: base, lora: { r: 2, alpha: 4 } } as (typeof c.models)['base'];
    c.tasks.perIteration = 2;
    c.evaluators = (c.evaluators ?? []).map((e) =>
      e.kind === 'proposals'
        ? { ...e, options: { samples: 4 } }
        : { ...e, options: { ...(e.options as object), data: heldout } },
    );
    const path = join(root, 'c.yaml');
    writeFileSync(path, stringify(c));
    await runCommand(path, { set: [] });
    const dir = join(root, 'hf-five-roles');
    const rows = readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = rows.find((r) => r.iteration === 2);
    // an untrained base writes few valid sums: the proposer still acts on every seed, and the bank is counted
    expect(last['turns/proposer']).to.equal(4);
    expect(last['bank/size']).to.be.within(0, 4);
    for (const k of [
      'eval/solver/pass1',
      'eval/judge/accuracy',
      'eval/critic/planted_accuracy',
      'eval/manager/right_op',
      'eval/proposer/valid',
    ])
      expect(last[k], k).to.be.within(0, 1);
    // five adapters on one base, each saved
    const ck = join(dir, 'checkpoints', 'iter-000002');
    for (const a of ['proposer', 'solver', 'critic', 'judge', 'manager'])
      expect(existsSync(join(ck, `base-${a}`, 'adapter_model.safetensors')), a).to.equal(true);
    // the bank is in the checkpoint's loop state, so a resumed run goes on with it
    const loop = JSON.parse(readFileSync(join(ck, 'loop.json'), 'utf8'));
    expect(loop.carried.entries).to.be.an('array');
  });
});
