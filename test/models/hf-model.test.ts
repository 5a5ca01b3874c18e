import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { generate } from '../../src/models/generate.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { weightSpecs } from '../../src/models/hf/layout.js';
import { parseHfConfig } from '../../src/models/hf/config.js';
import { readSafetensors, type StoredTensor } from '../../src/models/hf/safetensors.js';
import { TEST_BACKEND } from '../needs.js';
import { FIXTURES, fixture, maxDiff, rows } from './hf-fixtures.js';

/** The largest difference from transformers' left-padded logits, over the rows that are not padding. */
function paddedError(model: HfCausalLM, ref: Record<string, StoredTensor>): number {
  const [B, T] = ref.ids.shape;
  const mask = Float32Array.from(ref.pad_mask.data);
  const padded = tf.tidy(() =>
    model
      .logits(
        model.forward(
          tf.tensor2d(Int32Array.from(ref.pad_ids.data), [B, T], 'int32'),
          Int32Array.from(ref.pad_pos.data),
          mask,
        ).hidden,
      )
      .dataSync(),
  );
  const V = model.config.vocabSize;
  let worst = 0;
  for (let r = 0; r < B * T; r++)
    if (mask[r])
      worst = Math.max(
        worst,
        maxDiff(padded.subarray(r * V, (r + 1) * V), ref.pad_logits.data.subarray(r * V, (r + 1) * V)),
      );
  return worst;
}

// Each tiny checkpoint was written by transformers, with its logits, loss and gradients
// (test/fixtures/hf/README.md): the forward pass must give them, for the four families.
describe('Hugging Face decoders against transformers', function () {
  this.timeout(60000);
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  for (const name of FIXTURES) {
    describe(name, () => {
      let model: HfCausalLM;
      let ref: Record<string, StoredTensor>;
      before(() => {
        model = HfCausalLM.load(fixture(name));
        ref = readSafetensors(`${fixture(name)}/reference.safetensors`).tensors;
      });
      after(() => model.dispose());

      it("gives transformers' logits (1e-4), unpadded and left-padded", () => {
        const [B, T] = ref.ids.shape;
        const all = new Int32Array(B * T).map((_, i) => i % T);
        const logits = tf.tidy(() =>
          model
            .logits(
              model.forward(
                tf.tensor2d(Int32Array.from(ref.ids.data), [B, T], 'int32'),
                all,
                new Float32Array(B * T).fill(1),
              ).hidden,
            )
            .dataSync(),
        );
        expect(maxDiff(logits, ref.logits.data)).to.be.below(1e-4);
        expect(paddedError(model, ref)).to.be.below(1e-4);
      });

      it("generates transformers' greedy ids from left-padded prompts, with its key/value cache", () => {
        const mask = rows(ref.gen_prompt_mask);
        const prompts = rows(ref.gen_prompt_ids).map((r, b) => r.filter((_, t) => mask[b][t] === 1));
        expect(prompts.map((p) => p.length)).to.deep.equal([10, 10, 4]); // the fixture's left padding, so a padded row is generated
        const before = tf.memory().numTensors;
        const got = generate(model, prompts, { maxNewTokens: 12, temperature: 0 });
        expect(tf.memory().numTensors).to.equal(before);
        const P = ref.gen_prompt_ids.shape[1];
        expect(got.map((g) => g.tokens)).to.deep.equal(rows(ref.gen_ids).map((r) => r.slice(P)));
      });

      it('loaded frozen, its matrices outside the heap: the same padded logits and greedy ids, the same stored weights; no full fine-tuning', () => {
        const host = HfCausalLM.load(fixture(name), { frozen: true, host: true });
        try {
          expect(Object.keys(host.host).length).to.be.above(0);
          expect(paddedError(host, ref)).to.be.below(1e-4);
          const gm = rows(ref.gen_prompt_mask);
          const prompts = rows(ref.gen_prompt_ids).map((r, b) => r.filter((_, t) => gm[b][t] === 1));
          const P = ref.gen_prompt_ids.shape[1];
          expect(generate(host, prompts, { maxNewTokens: 12, temperature: 0 }).map((g) => g.tokens)).to.deep.equal(
            rows(ref.gen_ids).map((r) => r.slice(P)),
          );
          const a = host.storedTensors(),
            b = model.storedTensors();
          expect(Object.keys(a).sort()).to.deep.equal(Object.keys(b).sort());
          for (const k of Object.keys(b)) expect(maxDiff(a[k].data, b[k].data), k).to.equal(0);
          expect(() => new HfPolicy(host).variables()).to.throw(/loaded frozen/);
        } finally {
          host.dispose();
        }
      });

      it("gives transformers' loss (1e-5) and every gradient (1e-4 relative by norm)", () => {
        const [B, T] = ref.ids.shape;
        const ids = Array.from(ref.ids.data);
        const inputs = Array.from({ length: B }, (_, b) => ({
          prompt: ids.slice(b * T, b * T + 1),
          completion: ids.slice(b * T + 1, (b + 1) * T),
        }));
        const { value, grads } = tf.variableGrads(() => {
          const s = model.score(inputs);
          return s.logProbs.sum().neg().div(s.mask.sum()) as tf.Scalar;
        }, model.variables());
        expect(value.dataSync()[0]).to.be.closeTo(ref.loss.data[0], 1e-5);
        const linear = new Set(
          weightSpecs(model.config)
            .filter((s) => s.linear)
            .map((s) => s.name),
        );
        for (const [n, v] of Object.entries(model.weights)) {
          const g = grads[v.name];
          const mine = linear.has(n) ? g.transpose().dataSync() : g.dataSync();
          const theirs = ref[`grad.${n}`].data;
          let diff = 0,
            norm = 0;
          for (let i = 0; i < theirs.length; i++) {
            diff += (mine[i] - theirs[i]) ** 2;
            norm += theirs[i] ** 2;
          }
          expect(Math.sqrt(diff / norm), n).to.be.below(1e-4);
        }
        tf.dispose([value, ...Object.values(grads)]);
      });
    });
  }

  it('hands out a trainable weight of more than 2^24 values as stored (replicas copy a full fine-tuning base so)', () => {
    // SmolLM2's embedding has 28M values; tf.tidy walks a returned array into a Set of its distinct values
    const config = parseHfConfig({
      architectures: ['LlamaForCausalLM'],
      vocab_size: 2 ** 16 + 64,
      hidden_size: 256,
      intermediate_size: 32,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      max_position_embeddings: 64,
      tie_word_embeddings: true,
    });
    const tensors = Object.fromEntries(
      weightSpecs(config).map((w) => {
        const n = w.shape.reduce((a, b) => a * b, 1);
        return [w.name, { shape: w.shape, data: Float32Array.from({ length: n }, (_, i) => i / 2 ** 24) }];
      }),
    );
    const model = new HfCausalLM(config, tensors);
    try {
      const before = tf.memory().numTensors;
      const stored = model.storedTensors();
      expect(tf.memory().numTensors).to.equal(before);
      for (const [name, t] of Object.entries(tensors)) {
        expect(stored[name].shape, name).to.deep.equal(t.shape);
        expect(maxDiff(stored[name].data, t.data), name).to.equal(0);
      }
      expect(stored['model.embed_tokens.weight'].data.length).to.be.above(2 ** 24);
    } finally {
      model.dispose();
    }
  });
});
