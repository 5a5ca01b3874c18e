import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { writeMerged } from '../../src/models/hf/merge.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { readHeader, readSafetensors } from '../../src/models/hf/safetensors.js';
import { TEST_BACKEND } from '../needs.js';
import { FIXTURES, fixture, maxDiff } from './hf-fixtures.js';

const logitsOf = (m: HfCausalLM, ids: { shape: number[]; data: ArrayLike<number> }) => {
  const [B, T] = ids.shape;
  return tf.tidy(() =>
    m
      .logits(
        m.forward(
          tf.tensor2d(Int32Array.from(ids.data), [B, T], 'int32'),
          new Int32Array(B * T).map((_, i) => i % T),
          new Float32Array(B * T).fill(1),
        ).hidden,
      )
      .dataSync(),
  );
};

// A merged model is a plain directory of the base's architecture: transformers' file layout
// (the fixture's own tensor names and shapes) and PEFT's logits with the adapter.
describe('merging a LoRA adapter into its base', function () {
  this.timeout(60000);
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  for (const name of FIXTURES) {
    it(`${name}: the merged directory has transformers' layout and PEFT's logits`, () => {
      const base = HfCausalLM.load(fixture(name));
      const adapter = LoraAdapter.load(`${fixture(name)}/lora`, base.config);
      const out = join(mkdtempSync(join(tmpdir(), 'coevolve-merge-')), 'merged');
      writeMerged(out, base, adapter);
      const layout = (path: string) =>
        Object.fromEntries(Object.entries(readHeader(path).entries).map(([k, e]) => [k, [e.dtype, e.shape]]));
      expect(layout(join(out, 'model.safetensors'))).to.deep.equal(layout(`${fixture(name)}/model.safetensors`));
      expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).architectures).to.deep.equal(
        JSON.parse(readFileSync(`${fixture(name)}/config.json`, 'utf8')).architectures,
      );
      const ref = readSafetensors(`${fixture(name)}/reference.safetensors`).tensors;
      const merged = HfCausalLM.load(out);
      expect(maxDiff(logitsOf(merged, ref.ids), ref.lora_logits.data)).to.be.below(1e-4);
      expect(maxDiff(logitsOf(base, ref.ids), ref.logits.data), 'the base is left as it was').to.be.below(1e-4);
      tf.dispose([...merged.variables(), ...base.variables(), ...adapter.variables()]);
    });
  }
});
