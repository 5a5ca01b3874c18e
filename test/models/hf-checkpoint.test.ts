import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { seal } from '../../src/models/checkpoint.js';
import { loadHfPolicy, saveHfPolicy } from '../../src/models/hf/checkpoint.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import type { Policy } from '../../src/models/types.js';
import { TEST_BACKEND } from '../needs.js';
import { writeTinyHf } from './hf-tiny.js';

const inputs = [
  { prompt: [1, 2, 3], completion: [4, 5, 6] },
  { prompt: [7], completion: [8, 9] },
];
const loss = (p: Policy) => tf.tidy(() => p.score(inputs).logProbs.sum().dataSync()[0]);
const bump = (vs: tf.Variable[]) =>
  vs.forEach((v, i) => v.assign(v.add(tf.randomNormal(v.shape, 0, 0.05, 'float32', i))));

describe('Hugging Face models in run checkpoints', function () {
  this.timeout(60000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-hfck-'));
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  it('an adapter: the folder is a PEFT adapter and a checkpoint; it loads back the same, on the base it recorded', async () => {
    const baseDir = writeTinyHf(join(root, 'base-a'));
    const base = HfCausalLM.load(baseDir);
    const policy = new HfPolicy(base, new LoraAdapter(base.config, { r: 2, alpha: 4, targetModules: 'all-linear' }, 3));
    bump(policy.variables());
    const dir = join(root, 'ck-lora');
    await saveHfPolicy(dir, policy, { iteration: 2 }, { 'optimizer.json': '{}' });
    for (const f of ['adapter_config.json', 'adapter_model.safetensors', 'model.json', 'optimizer.json'])
      expect(existsSync(join(dir, f)), f).to.equal(true);
    expect(JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8')).base_model_name_or_path).to.equal(
      baseDir,
    );
    const back = await loadHfPolicy(dir);
    // the same sums, up to the last bits: in the full suite under load two evaluations of one
    // computation once differed by 1.4e-7 of the value (noted, not yet explained); an adapter lost
    // or changed moves it by far more, as the base alone shows
    const want = loss(policy);
    expect(loss(back.policy)).to.be.closeTo(want, 1e-6 * Math.abs(want));
    expect(Math.abs(loss(new HfPolicy(base)) - want)).to.be.above(1e-3 * Math.abs(want));
    expect(back.extra.iteration).to.equal(2);
    expect(new TextDecoder().decode(back.attachments['optimizer.json'])).to.equal('{}');
    // the base changed under the adapter: refused, naming it
    writeTinyHf(baseDir, { seed: 9 });
    const err = await loadHfPolicy(dir).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/trained on the base .*base-a with sha256 .* which now hashes .*: the base changed/);
  });

  it('fully fine-tuned: the folder is a Hugging Face directory transformers reads, and a checkpoint', async () => {
    const baseDir = writeTinyHf(join(root, 'base-f'));
    const policy = new HfPolicy(HfCausalLM.load(baseDir));
    bump(policy.variables());
    const dir = join(root, 'ck-full');
    await saveHfPolicy(dir, policy, {});
    for (const f of [
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
      'generation_config.json',
    ])
      expect(existsSync(join(dir, f)), f).to.equal(true);
    const asHf = new HfPolicy(HfCausalLM.load(dir)); // the ecosystem's view: config.json and model.safetensors
    expect(loss(asHf)).to.equal(loss(policy));
    const back = await loadHfPolicy(dir);
    expect(loss(back.policy)).to.equal(loss(policy));
    // a corrupt weights file is caught by the checkpoint's hashes
    writeFileSync(join(dir, 'model.safetensors'), 'x');
    expect(
      (
        await loadHfPolicy(dir).then(
          () => null,
          (e: Error) => e,
        )
      )?.message,
    ).to.match(/model\.safetensors has 1 bytes/);
  });

  it('a resealed checkpoint whose config differs from its base is refused before any weight is listed', async () => {
    const baseDir = writeTinyHf(join(root, 'base-l'));
    const dir = join(root, 'ck-layers');
    await saveHfPolicy(dir, new HfPolicy(HfCausalLM.load(baseDir)), {});
    // edited and sealed again, as only someone rewriting the hashes could: the seal no longer protects it
    const json = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8'));
    const config = { ...json.modelTopology.config, num_hidden_layers: 1e9 };
    const bytes = Buffer.from(JSON.stringify(config, null, 2));
    writeFileSync(join(dir, 'config.json'), bytes);
    json.modelTopology.config = config;
    json.integrity.files['config.json'] = {
      bytes: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
    writeFileSync(join(dir, 'model.json'), JSON.stringify(seal(json)));
    const err = await loadHfPolicy(dir).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(
      /ck-layers\/config\.json has num_hidden_layers 1000000000, its base .*base-l\/config\.json has \d+$/,
    );
  });
});
