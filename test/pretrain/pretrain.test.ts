import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pretrain, PretrainSchema } from '../../src/pretrain/index.js';
import { loadModel } from '../../src/models/store.js';
import { readTasksJsonl } from '../../src/tasks/jsonl.js';
import { tinyPretrainInput } from '../engine/fixtures.js';

const config = (out: string) => PretrainSchema.parse(tinyPretrainInput(out));

describe('pretrain writes only its own checkpoint', function () {
  this.timeout(60000);
  const quiet = () => {};

  it('refuses an out: folder of other files before training, and keeps them', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'coevolve-pt-')), 'bases');
    mkdirSync(join(out, 'base-a'), { recursive: true });
    writeFileSync(join(out, 'notes.md'), 'keep me');
    const logged: string[] = [];
    const err = await pretrain(config(out), { log: (l) => logged.push(l) }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(
      /out: checkpoint: .*bases holds files that are not a checkpoint's \(base-a, notes\.md\).*--overwrite/,
    );
    expect(logged, 'no training step ran').to.deep.equal([]);
    expect(readdirSync(out).sort()).to.deep.equal(['base-a', 'notes.md']);
    expect(readFileSync(join(out, 'notes.md'), 'utf8')).to.equal('keep me');
  });

  it('replaces its own earlier checkpoint, held-out set included in the hashes; --overwrite replaces a foreign folder', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'coevolve-pt-')), 'base');
    await pretrain(config(out), { log: quiet });
    await pretrain({ ...config(out), seed: 3 }, { log: quiet });
    const loaded = await loadModel(out);
    expect(loaded.extra.steps).to.equal(2);
    expect(Object.keys(loaded.attachments)).to.deep.equal(['heldout.jsonl']);
    expect(readTasksJsonl(join(out, 'heldout.jsonl'), 'arithmetic')).to.have.length(6);
    loaded.model.dispose();
    writeFileSync(join(out, 'stray.txt'), 'x');
    await pretrain(config(out), { log: quiet, overwrite: true });
    expect(existsSync(join(out, 'stray.txt'))).to.equal(false);
  });
});

describe('pretrain on replicas (workers)', function () {
  this.timeout(120000);
  const weights = async (out: string) => {
    const loaded = await loadModel(out);
    const w = loaded.model.variables().map((v) => Array.from(v.dataSync()));
    loaded.model.dispose();
    return w;
  };

  it('2 workers repeat themselves from the seed and take the steps of one to float noise', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-ptw-'));
    const run = async (name: string, workers: number) => {
      await pretrain(
        { ...config(join(root, name)), workers, train: { steps: 3, batchSize: 9, lr: 0.001 } },
        { log: () => {} },
      );
      return weights(join(root, name));
    };
    const [one, two, again] = [await run('one', 1), await run('two', 2), await run('again', 2)];
    expect(again).to.deep.equal(two);
    const worst = Math.max(...one.flatMap((v, i) => v.map((x, j) => Math.abs(x - two[i][j]))));
    expect(worst).to.be.below(1e-5);
    expect(
      one.flat().some((x, k) => x !== two.flat()[k]),
      'the two paths round differently, so the check above compares two computations',
    ).to.equal(true);
  });
});
