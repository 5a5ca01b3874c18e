import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { seal } from '../../src/models/checkpoint.js';
import { MlpPolicy } from '../../src/models/mlp.js';
import { loadModel, saveModel } from '../../src/models/store.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';

const tokenizer = new CharTokenizer({ chars: '0123456789+=', roles: ['solver'] });
const config = { vocabSize: tokenizer.size, dModel: 16, nHeads: 2, nLayers: 1, context: 16, valueHead: true, seed: 3 };

describe('checkpoints', () => {
  let dir: string;
  before(async () => {
    await initBackend(TEST_BACKEND);
    dir = await mkdtemp(join(tmpdir(), 'coevolve-ckpt-'));
  });

  it('round-trips a TinyLM with its tokenizer in the model-artifacts layout', async () => {
    // guards against: a loader that ignores weights.bin and rebuilds the model from config.seed
    const m = new TinyLM(config);
    // move every weight off its seeded initial value, so only the saved file can restore it
    for (const v of m.variables())
      tf.tidy(() => v.assign(v.add(tf.sin(tf.range(1, v.size + 1).reshape(v.shape)).mul(0.1))));
    const saved = Object.fromEntries(Object.entries(m.weights).map(([k, v]) => [k, Array.from(v.dataSync())]));
    await saveModel(join(dir, 'lm'), m, tokenizer, { iteration: 7 });
    const manifest = JSON.parse(await readFile(join(dir, 'lm', 'model.json'), 'utf8'));
    expect(manifest.weightsManifest[0].paths).to.deep.equal(['weights.bin']);
    expect(JSON.parse(await readFile(join(dir, 'lm', 'config.json'), 'utf8'))).to.deep.equal(config);
    const loaded = await loadModel(join(dir, 'lm'));
    if (loaded.kind !== 'tinylm') throw new Error('wrong kind');
    expect(loaded.tokenizer!.encode('1+2=3')).to.deep.equal(tokenizer.encode('1+2=3'));
    expect(loaded.extra).to.deep.equal({ iteration: 7 });
    const fresh = new TinyLM(config);
    for (const [k, values] of Object.entries(saved)) {
      expect(Array.from(loaded.model.weights[k].dataSync()), k).to.deep.equal(values);
      expect(Array.from(fresh.weights[k].dataSync()), `${k} of a fresh model`).to.not.deep.equal(values);
    }
    const input = [{ prompt: tokenizer.prompt('1+2=', 'solver'), completion: tokenizer.encode('3') }];
    const [a, b] = [m, loaded.model].map((x) => tf.tidy(() => Array.from(x.score(input).logProbs.dataSync())));
    expect(b).to.deep.equal(a);
    m.dispose();
    fresh.dispose();
    loaded.model.dispose();
  });

  it('round-trips an MlpPolicy', async () => {
    const m = new MlpPolicy({ inputSize: 3, hiddenSizes: [8], numActions: 2, seed: 1 });
    await saveModel(join(dir, 'mlp'), m);
    const loaded = await loadModel(join(dir, 'mlp'));
    if (loaded.kind !== 'mlp') throw new Error(`loaded a ${loaded.kind}`);
    const f = tf.tensor2d([[0.1, -0.2, 0.3]]);
    expect(Array.from(loaded.model.logits(f).dataSync())).to.deep.equal(Array.from(m.logits(f).dataSync()));
    tf.dispose([f]);
    m.dispose();
    loaded.model.dispose();
  });

  it('refuses a checkpoint whose weights were corrupted', async () => {
    const m = new TinyLM(config);
    await saveModel(join(dir, 'bad'), m, tokenizer);
    const path = join(dir, 'bad', 'weights.bin');
    const bytes = await readFile(path);
    bytes[100] ^= 0xff;
    await writeFile(path, bytes);
    await expectReject(loadModel(join(dir, 'bad')), /weights.bin is corrupt/);
    await writeFile(path, bytes.subarray(0, 64));
    await expectReject(loadModel(join(dir, 'bad')), /has 64 bytes, model.json says/);
    m.dispose();
  });

  it('refuses a checkpoint whose config does not match its weights', async () => {
    const m = new TinyLM(config);
    await saveModel(join(dir, 'mismatch'), m, tokenizer);
    const path = join(dir, 'mismatch', 'model.json');
    const json = JSON.parse(await readFile(path, 'utf8'));
    json.modelTopology.config.dModel = 32;
    // sealed again, as a writer with a bug would: the shape checks stand behind the hashes
    const write = (j: typeof json) => writeFile(path, JSON.stringify(seal(j)));
    await write(json);
    await expectReject(
      loadModel(join(dir, 'mismatch')),
      /weight 'tok_emb' has shape \[\d+,16\], config needs \[\d+,32\]/,
    );
    json.modelTopology.config.dModel = 16;
    json.modelTopology.config.valueHead = false;
    await write(json);
    await expectReject(loadModel(join(dir, 'mismatch')), /weights this config does not use: value.w, value.b/);
    json.modelTopology.kind = 'rnn';
    await write(json);
    await expectReject(loadModel(join(dir, 'mismatch')), /unknown model kind 'rnn'; known: tinylm, mlp/);
    m.dispose();
  });

  it('names a missing checkpoint folder', async () => {
    await expectReject(loadModel(join(dir, 'nowhere')), /cannot read .*nowhere\/model.json/);
  });
});

async function expectReject(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await p;
  } catch (err) {
    expect((err as Error).message).to.match(pattern);
    return;
  }
  throw new Error(`expected rejection matching ${pattern}`);
}
