import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { fusedKernelsActive, setFusedKernels } from '../../src/backend/fused/index.js';
import { compileSimd } from '../../src/backend/simd/build.js';
import { SIMD_BINARY } from '../../src/backend/simd/binary.js';
import { gelu, layerNorm } from '../../src/models/ops.js';
import { TinyLM } from '../../src/models/tinylm.js';

// The fused kernels must compute what tfjs's own compute, to 1e-4, forward and backward,
// on both backends; turning them off must restore tfjs's results exactly.
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).to.equal(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};
const rand = (shape: number[], seed: number, scale = 1) => tf.randomNormal(shape, 0, scale, 'float32', seed);

function compute(): Record<string, Float32Array> {
  return tf.tidy(() => {
    const out: Record<string, Float32Array> = {};
    // lengths that leave every tail (a vector loop of 16 or 8, then 1 to 15 singles)
    for (const n of [1, 3, 16, 37, 1000]) {
      const x = rand([n], n, 4);
      const dy = rand([n], n + 1);
      const g = tf.grad((t: tf.Tensor) => gelu(t).mul(dy).sum())(x);
      out[`gelu ${n}`] = gelu(x).dataSync() as Float32Array;
      out[`gelu grad ${n}`] = g.dataSync() as Float32Array;
    }
    // far tails: exp underflow and the clamped erf
    const far = tf.tensor1d([-1e4, -30, -12, -9, -5, -4.1, 0, 4.1, 5, 9, 12, 30, 1e4]);
    out['gelu far'] = gelu(far).dataSync() as Float32Array;
    out['gelu far exact'] = gelu(tf.tensor1d([-1e4, -300, 300, 1e4])).dataSync() as Float32Array;
    out['gelu grad far'] = tf
      .grad((t: tf.Tensor) => gelu(t).sum())(far)
      .dataSync() as Float32Array;
    // layer norm: a fused width (8, 128), a width tfjs keeps (6), rows of mixed scale
    for (const [rows, d] of [
      [5, 8],
      [3, 128],
      [4, 6],
    ]) {
      const x = rand([rows, d], d, 3).add(rand([rows, 1], d + 1, 5));
      const gain = rand([d], d + 2).add(1),
        bias = rand([d], d + 3);
      const dy = rand([rows, d], d + 4);
      const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => layerNorm(a, b, c).mul(dy).sum();
      const [gx, gg, gb] = tf.grads(f)([x, gain, bias]);
      out[`ln ${rows}x${d}`] = layerNorm(x, gain, bias).dataSync() as Float32Array;
      out[`ln dx ${rows}x${d}`] = gx.dataSync() as Float32Array;
      out[`ln dg ${rows}x${d}`] = gg.dataSync() as Float32Array;
      out[`ln db ${rows}x${d}`] = gb.dataSync() as Float32Array;
    }
    // exp over its whole range: overflow, underflow, NaN, and the tail of a vector
    const e = tf.tensor1d([-200, -100, -87.5, -87, -20, -1, -1e-3, 0, 1e-3, 1, 5, 20, 80, 88, 88.7, 89, 200, NaN, 0.5]);
    const ev = tf.exp(e).dataSync() as Float32Array;
    // NaN as -1 and infinity as -2, so that the comparison sees them; finite values relative to Math.exp
    out['exp relative'] = ev.map((v, i) =>
      Number.isNaN(v) ? -1 : v === Infinity ? -2 : v === 0 ? 0 : v / Math.exp(e.dataSync()[i]),
    );
    out['exp grad'] = tf
      .grad((t: tf.Tensor) => tf.exp(t).sum())(rand([37], 7))
      .dataSync() as Float32Array;
    // sums over leading axes (ours), others (tfjs's), keepDims
    const s = rand([6, 7, 9], 9);
    out['sum 0'] = s.sum(0).dataSync() as Float32Array;
    out['sum 0,1 keep'] = s.sum([0, 1], true).dataSync() as Float32Array;
    out['sum 1,0'] = s.sum([1, 0]).dataSync() as Float32Array;
    out['sum 2'] = s.sum(2).dataSync() as Float32Array;
    out['sum all'] = s.sum().dataSync() as Float32Array;
    out['sum -3'] = s.sum(-3).dataSync() as Float32Array;
    // a whole model, forward and every gradient
    const model = new TinyLM({ vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 24, seed: 3 });
    const inputs = [
      { prompt: [1, 2, 3], completion: [4, 5, 6, 7] },
      { prompt: [1, 9], completion: [3, 3, 8, 2, 2, 1] },
    ];
    const { value, grads } = tf.variableGrads(() => {
      const sc = model.score(inputs);
      out.logProbs = sc.logProbs.dataSync() as Float32Array;
      const [B, T] = sc.logProbs.shape;
      return sc.logProbs
        .mul(rand([B, T], 5))
        .add(sc.entropy.mul(rand([B, T], 6)))
        .sum() as tf.Scalar;
    }, model.variables());
    out.loss = value.dataSync() as Float32Array;
    for (const [n, g] of Object.entries(grads)) out[`grad ${n.split('/')[1]}`] = g.dataSync() as Float32Array;
    model.dispose();
    return out;
  });
}

describe('fused kernels', () => {
  after(async () => {
    await initBackend('cpu');
  });

  it("the committed SIMD binary is what the kernels' source compiles to (npm run build:simd)", async () => {
    expect(Buffer.from(await compileSimd()).toString('base64')).to.equal(SIMD_BINARY);
  });

  for (const backend of ['cpu', 'wasm'] as const) {
    it(`agree with tfjs's kernels on ${backend}: GELU, LayerNorm, sums, a model's log-probs and gradients; off restores them`, async () => {
      await initBackend(backend, 'off');
      expect(fusedKernelsActive(backend)).to.equal(false);
      const reference = compute();
      expect(setFusedKernels(backend, true)).to.equal(true);
      const before = tf.memory().numTensors;
      const fused = compute();
      expect(tf.memory().numTensors, 'no tensor leaks').to.equal(before);
      for (const key of Object.keys(reference)) expect(maxDiff(fused[key], reference[key]), key).to.be.below(1e-4);
      expect(maxDiff(fused['gelu far exact'], [0, 0, 300, 1e4]), 'the far tail is exact').to.equal(0);
      // teeth: the fused kernels ran (they round differently from tfjs's chains)
      for (const key of ['gelu 1000', 'gelu grad 1000', 'ln dx 3x128'])
        expect(maxDiff(fused[key], reference[key]), key).to.be.above(0);
      setFusedKernels(backend, false);
      const again = compute();
      for (const key of Object.keys(reference))
        expect(maxDiff(again[key], reference[key]), `off restores ${key}`).to.equal(0);
    });
  }

  it('a shared copy on wasm outlives its source, and a cast to another dtype still converts', async () => {
    await initBackend('wasm', 'off');
    setFusedKernels('wasm', true);
    const x = tf.tensor1d([1.5, -2.25, 3]);
    const copy = x.clone();
    const asInt = x.toInt();
    x.dispose();
    expect(Array.from(copy.dataSync())).to.deep.equal([1.5, -2.25, 3]);
    expect(asInt.dtype).to.equal('int32');
    expect(Array.from(asInt.dataSync())).to.deep.equal([1, -2, 3]);
    tf.dispose([copy, asInt]);
    setFusedKernels('wasm', false);
  });
});
