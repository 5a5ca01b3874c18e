import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { KeptProducts } from '../../src/models/hf/recompute.js';
import { attendsNatively } from '../../src/models/hf/attention-native.js';
import { readSafetensors } from '../../src/models/hf/safetensors.js';
import { TEST_BACKEND } from '../needs.js';
import { fixture, maxDiff } from './hf-fixtures.js';

// A checkpointed training pass keeps its products outside the heap for the backward pass's
// recomputation, up to model.keepProductBytes: the gradients must not depend on how many were
// kept, and the recomputation must take them when they were.
describe('the products a checkpointed pass keeps for its recomputation', function () {
  this.timeout(60000);
  let taken = 0;
  const names = new Set<string>();
  const take = KeptProducts.prototype.take;
  before(async () => {
    await initBackend(TEST_BACKEND);
    KeptProducts.prototype.take = function (this: KeptProducts, name: string) {
      const got = take.call(this, name);
      if (got) {
        taken++;
        names.add(name.replace(/\d+/g, 'N'));
      }
      return got;
    };
  });
  after(() => {
    KeptProducts.prototype.take = take;
  });

  // gpt2: Conv1D layouts and biases; llama-tied: nn.Linear layouts, grouped-query attention
  for (const name of ['llama-tied', 'gpt2'])
    for (const lora of [false, true]) {
      it(`${name}${lora ? ', an adapter on the base outside the heap' : ', every weight training'}: the same gradients with all, some and none kept`, () => {
        const model = HfCausalLM.load(fixture(name), { frozen: lora, host: lora });
        const adapter = lora ? LoraAdapter.load(`${fixture(name)}/lora`, model.config) : undefined;
        const ids = readSafetensors(`${fixture(name)}/reference.safetensors`).tensors.ids;
        const [B, T] = ids.shape;
        const all = Array.from(ids.data);
        const inputs = Array.from({ length: B }, (_, b) => ({
          prompt: all.slice(b * T, b * T + 1),
          completion: all.slice(b * T + 1, (b + 1) * T),
        }));
        const vars = adapter ? adapter.variables() : model.variables();
        const run = (bytes: number) => {
          model.keepProductBytes = bytes;
          taken = 0;
          names.clear();
          const { grads } = tf.variableGrads(
            () => model.score(inputs, 1, adapter).logProbs.sum().neg() as tf.Scalar,
            vars,
          );
          const out = vars.map((v) => grads[v.name].dataSync() as Float32Array);
          tf.dispose(Object.values(grads));
          return { out, taken, names: [...names] };
        };
        try {
          const none = run(0);
          const every = run(Infinity);
          // room for two [rows, hidden] outputs: some blocks keep theirs, the rest recompute
          const some = run(2 * 4 * B * T * model.config.hidden);
          expect(none.taken).to.equal(0);
          expect(some.taken).to.be.above(0);
          expect(every.taken).to.be.above(some.taken);
          // on wasm with a native sgemm the attention's probabilities and output are kept too
          if (attendsNatively()) expect(every.names.filter((n) => n.endsWith('attn.probs'))).to.not.be.empty;
          for (let i = 0; i < vars.length; i++) {
            expect(maxDiff(every.out[i], none.out[i]), vars[i].name).to.be.below(1e-6);
            expect(maxDiff(some.out[i], none.out[i]), vars[i].name).to.be.below(1e-6);
          }
        } finally {
          adapter?.dispose();
          model.dispose();
        }
      });
    }
});
