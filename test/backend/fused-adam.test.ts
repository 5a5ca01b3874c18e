import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { adam } from '../../src/backend/fused/adam.js';
import { fusedKernelsActive } from '../../src/backend/fused/index.js';

/** Runs four Adam steps on fresh variables, the rate changing between steps; returns the variables and the optimizer's weights. */
async function steps(make: () => tf.Optimizer, tag: string): Promise<Record<string, Float32Array>> {
  const shapes = [[37], [5, 8], [3]];
  const vars = shapes.map((s, i) => tf.variable(tf.randomNormal(s, 0, 1, 'float32', 10 + i), true, `${tag}/w${i}`));
  const opt = make();
  for (let t = 0; t < 4; t++) {
    (opt as unknown as { learningRate: number }).learningRate = 0.01 * (t + 1);
    const grads: tf.NamedTensorMap = {};
    vars.forEach((v, i) => {
      grads[v.name] = tf.randomNormal(v.shape, 0, 3, 'float32', 100 * t + i + 1);
    }); // seed 0 would mean unseeded
    opt.applyGradients(grads);
    tf.dispose(Object.values(grads));
  }
  const out: Record<string, Float32Array> = {
    start: tf.randomNormal([37], 0, 1, 'float32', 10).dataSync() as Float32Array,
  };
  vars.forEach((v, i) => {
    out[`w${i}`] = v.dataSync() as Float32Array;
  });
  for (const w of await opt.getWeights()) out[`opt ${w.name.replace(tag, '')}`] = w.tensor.dataSync() as Float32Array;
  tf.dispose(vars);
  opt.dispose();
  return out;
}

describe('FusedAdam', () => {
  after(async () => {
    await initBackend('cpu');
  });
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`is tf.train.adam bit for bit on ${backend}: values, moments, bias corrections, a changing rate`, async () => {
      await initBackend(backend, 'auto');
      expect(fusedKernelsActive()).to.equal(true);
      const reference = await steps(() => tf.train.adam(0.01, 0.9, 0.999, 1e-8), `ref${backend}`);
      const fused = await steps(() => adam(0.01, 0.9, 0.999, 1e-8), `fused${backend}`);
      expect(Object.keys(fused)).to.deep.equal(Object.keys(reference));
      for (const k of Object.keys(reference)) expect(Array.from(fused[k]), k).to.deep.equal(Array.from(reference[k]));
      expect(Array.from(fused.w0), 'the steps moved the weights').to.not.deep.equal(Array.from(fused.start));
    });
  }

  it('restores from the weights of a tf.train.adam and continues identically', async () => {
    await initBackend('wasm', 'auto');
    const v1 = tf.variable(tf.tensor1d([1, -2, 3, 0.5, 7]), true, 'resume/a');
    const v2 = tf.variable(tf.tensor1d([1, -2, 3, 0.5, 7]), true, 'resume/b');
    const g = () => tf.tensor1d([0.3, -1, 2, 0, -0.25]);
    const ref: tf.Optimizer = tf.train.adam(0.05);
    ref.applyGradients({ 'resume/a': g() } as tf.NamedTensorMap);
    const fused: tf.Optimizer = adam(0.05);
    fused.applyGradients({ 'resume/b': g() } as tf.NamedTensorMap); // creates its slots, then takes ref's state
    await fused.setWeights(
      (await ref.getWeights()).map((w) => ({ name: w.name.replace('resume/a', 'resume/b'), tensor: w.tensor })),
    );
    v2.assign(v1);
    ref.applyGradients({ 'resume/a': g() } as tf.NamedTensorMap);
    fused.applyGradients({ 'resume/b': g() } as tf.NamedTensorMap);
    expect(Array.from(v2.dataSync())).to.deep.equal(Array.from(v1.dataSync()));
    tf.dispose([v1, v2]);
  });
});
