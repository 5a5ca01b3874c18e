import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { loadNative } from '../../src/backend/native/library.js';
import { TinyLM, type TinyLMConfig } from '../../src/models/tinylm.js';
import { need } from '../needs.js';

// TinyLM.score on the native path (forward and backward on plain arrays, src/models/native)
// against tfjs's autodiff of the same model: log-probs, entropy, values and every gradient.
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).to.equal(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

// padded prompts of four lengths, completions of several lengths (one empty)
const INPUTS = [
  { prompt: [1, 2, 3], completion: [4, 5, 6, 7] },
  { prompt: [1, 9], completion: [3, 3, 8, 2, 2, 1] },
  { prompt: [1, 4, 4, 5, 6, 7], completion: [2] },
  { prompt: [1], completion: [] },
  { prompt: [1, 5, 5, 5], completion: [9, 9, 0] },
];

/** Scores, and the gradient of a loss that weights every output channel at every position. */
function compute(config: TinyLMConfig, temperature: number): Record<string, Float32Array> {
  return tf.tidy(() => {
    const out: Record<string, Float32Array> = {};
    const model = new TinyLM(config);
    const { value, grads } = tf.variableGrads(() => {
      const s = model.score(INPUTS, temperature);
      const [B, T] = s.logProbs.shape;
      out.logProbs = s.logProbs.dataSync() as Float32Array;
      out.entropy = s.entropy.dataSync() as Float32Array;
      out.values = s.values!.dataSync() as Float32Array;
      out.mask = s.mask.dataSync() as Float32Array;
      const r = (seed: number) => tf.randomNormal([B, T], 0, 1, 'float32', seed);
      return s.logProbs
        .mul(r(1))
        .add(s.entropy.mul(r(2)))
        .add(s.values!.mul(r(3)))
        .sum() as tf.Scalar;
    }, model.variables());
    out.loss = value.dataSync() as Float32Array;
    for (const [n, g] of Object.entries(grads)) out[`grad ${n.split('/')[1]}`] = g.dataSync() as Float32Array;
    model.dispose();
    return out;
  });
}

describe('native TinyLM scoring', () => {
  before(function () {
    need(this, 'native');
  });

  const configs: [string, TinyLMConfig][] = [
    [
      'width 32 (SIMD layer norms)',
      { vocabSize: 12, dModel: 32, nHeads: 4, nLayers: 2, context: 24, valueHead: true, seed: 3 },
    ],
    [
      'width 30 in 3 heads (plain-loop layer norms)',
      { vocabSize: 12, dModel: 30, nHeads: 3, nLayers: 1, context: 24, valueHead: true, seed: 4 },
    ],
  ];
  for (const backend of ['cpu', 'wasm'] as const) {
    for (const [name, config] of configs) {
      for (const temperature of [1, 0.7]) {
        it(`agrees with tfjs's autodiff on ${backend}, ${name}, temperature ${temperature}: log-probs, entropy, values, every gradient`, async () => {
          await initBackend(backend, 'off');
          const reference = compute(config, temperature);
          await initBackend(backend, 'auto');
          const fast = compute(config, temperature);
          for (const key of Object.keys(reference)) expect(maxDiff(fast[key], reference[key]), key).to.be.below(1e-4);
          expect(Object.keys(reference).filter((k) => k.startsWith('grad ')).length).to.equal(
            Object.keys(new TinyLM(config).weights).length,
          );
          // the native pass really ran: it rounds differently from tfjs
          expect(Object.keys(reference).some((k) => maxDiff(fast[k], reference[k]) > 0)).to.equal(true);
        });
      }
    }
  }

  it('holds no tensors after a train step once warm, taped or not', async () => {
    await initBackend('wasm', 'auto');
    const model = new TinyLM({ vocabSize: 12, dModel: 32, nHeads: 4, nLayers: 2, context: 24, seed: 1 });
    const step = () => {
      const { value, grads } = tf.variableGrads(
        () => model.score(INPUTS).logProbs.sum() as tf.Scalar,
        model.variables(),
      );
      tf.dispose([value, ...Object.values(grads)]);
      tf.tidy(() => {
        model.score(INPUTS);
      }); // no tape: the pass keeps nothing
    };
    step();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) step();
    expect(tf.memory().numTensors).to.equal(before);
    model.dispose();
  });

  it('refuses rows beyond the context, naming the length', async () => {
    await initBackend('wasm', 'auto');
    const model = new TinyLM({ vocabSize: 12, dModel: 32, nHeads: 4, nLayers: 1, context: 8, seed: 1 });
    expect(() => model.score([{ prompt: [1, 2, 3, 4], completion: [1, 2, 3, 4, 5, 6] }])).to.throw(
      /sequence of 9 tokens exceeds context 8/,
    );
    model.dispose();
  });
});
