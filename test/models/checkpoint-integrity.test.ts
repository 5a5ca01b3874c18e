import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { loadModel, saveModel } from '../../src/models/store.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { encodeOptimizerState, restoreOptimizerState } from '../../src/rl/optimizer-state.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';

const tokenizer = new CharTokenizer({ chars: '0123456789+=', roles: ['solver'] });
const config = { vocabSize: tokenizer.size, dModel: 8, nHeads: 2, nLayers: 1, context: 8, seed: 1 };

async function rejects(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err?.message ?? 'no error').to.match(pattern);
}

describe('checkpoints are checked whole', () => {
  let root: string;
  let model: TinyLM;
  before(async () => {
    await initBackend(TEST_BACKEND);
    model = new TinyLM(config);
  });
  after(() => model.dispose());
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'coevolve-whole-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('refuses a model.json whose tokenizer was altered', async () => {
    const dir = join(root, 'm');
    await saveModel(dir, model, tokenizer);
    const json = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    json.userDefinedMetadata.tokenizer.chars = '9876543210+=';
    writeFileSync(join(dir, 'model.json'), JSON.stringify(json, null, 2));
    await rejects(loadModel(dir), /m\/model\.json was altered/);
  });

  it('refuses an altered config.json or tokenizer.json beside the model, naming it', async () => {
    for (const file of ['config.json', 'tokenizer.json']) {
      const dir = join(root, file);
      await saveModel(dir, model, tokenizer);
      writeFileSync(join(dir, file), readFileSync(join(dir, file), 'utf8').replace('8', '9'));
      await rejects(loadModel(dir), new RegExp(`${file.replace('.', '\\.')} (is corrupt|has \\d+ bytes)`));
    }
  });

  it('hashes attachments with the model: a changed or missing one is refused, naming it', async () => {
    const dir = join(root, 'a');
    await saveModel(dir, model, tokenizer, {}, { 'notes.txt': 'seed 1' });
    expect((await loadModel(dir)).attachments['notes.txt']).to.deep.equal(new TextEncoder().encode('seed 1'));
    writeFileSync(join(dir, 'notes.txt'), 'seed 2');
    await rejects(loadModel(dir), /notes\.txt is corrupt/);
    unlinkSync(join(dir, 'notes.txt'));
    await rejects(loadModel(dir), /notes\.txt is missing/);
  });

  it('refuses a checkpoint written before files were hashed whole', async () => {
    const dir = join(root, 'old');
    await saveModel(dir, model, tokenizer);
    const json = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    delete json.integrity;
    writeFileSync(join(dir, 'model.json'), JSON.stringify(json));
    await rejects(loadModel(dir), /records no hashes of its files/);
  });

  it('never replaces a folder of other files; replaces an older checkpoint', async () => {
    const dir = join(root, 'mine');
    mkdirSync(dir);
    writeFileSync(join(dir, 'thesis.tex'), 'years of work');
    await rejects(saveModel(dir, model, tokenizer), /holds files that are not a checkpoint's \(thesis\.tex\)/);
    expect(readFileSync(join(dir, 'thesis.tex'), 'utf8')).to.equal('years of work');
    const ckpt = join(root, 'ckpt');
    await saveModel(ckpt, model, tokenizer, { v: 1 }, { 'optimizer.json': '{}' });
    await saveModel(ckpt, model, tokenizer, { v: 2 });
    expect((await loadModel(ckpt)).extra).to.deep.equal({ v: 2 });
    expect(existsSync(join(ckpt, 'optimizer.json')), 'the old checkpoint went whole').to.equal(false);
  });

  it('an optimizer state round-trips as attachments; none at all is refused, naming the checkpoint', async () => {
    const opt = tf.train.adam(0.1);
    const v = tf.variable(tf.tensor1d([1, 2]));
    opt.minimize(() => v.square().sum() as tf.Scalar, false, [v]);
    const files = await encodeOptimizerState(opt);
    const again = tf.train.adam(0.1);
    const bytes = Object.fromEntries(
      Object.entries(files).map(([k, b]) => [k, typeof b === 'string' ? new TextEncoder().encode(b) : b]),
    );
    await restoreOptimizerState('ck/main', bytes, again);
    const [a, b] = [await opt.getWeights(), await again.getWeights()];
    expect(b.map((w) => w.name)).to.deep.equal(a.map((w) => w.name));
    b.forEach((w, i) => expect(Array.from(w.tensor.dataSync())).to.deep.equal(Array.from(a[i].tensor.dataSync())));
    await rejects(restoreOptimizerState('ck/main', {}, again), /ck\/main holds no optimizer state .*--fresh-optimizer/);
    const cut = { ...bytes, 'optimizer.bin': bytes['optimizer.bin'].subarray(0, 8) };
    await rejects(
      restoreOptimizerState('ck/main', cut, again),
      /ck\/main\/optimizer\.json: cannot read the optimizer state: optimizer\.bin has 8 bytes/,
    );
    tf.dispose([v]);
    opt.dispose();
    again.dispose();
  });
});
