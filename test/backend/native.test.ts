import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend, describeBackend } from '../../src/backend/index.js';
import { setAccelerate } from '../../src/backend/accelerate.js';
import { activeSgemm } from '../../src/backend/native/index.js';
import { blasCoreType, loadNative } from '../../src/backend/native/library.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { generate } from '../../src/models/generate.js';
import { need } from '../needs.js';

// The tfjs kernels are the reference: native products must agree with them to 1e-4 on
// products, logits, log-probs and gradients. CI installs the library and sets
// COEVOLVE_REQUIRE_NATIVE so that a missing library fails there instead of skipping.
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).to.equal(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

function rand(shape: number[], seed: number): tf.Tensor {
  return tf.randomNormal(shape, 0, 1, 'float32', seed);
}

/** Everything a product case and the model compute, on the kernels in place now. */
function compute(): Record<string, Float32Array> {
  return tf.tidy(() => {
    const out: Record<string, Float32Array> = {};
    const cases: [string, () => tf.Tensor][] = [
      ['plain', () => tf.matMul(rand([33, 70], 1) as tf.Tensor2D, rand([70, 45], 2) as tf.Tensor2D)],
      ['transA', () => tf.matMul(rand([70, 33], 1) as tf.Tensor2D, rand([70, 45], 2) as tf.Tensor2D, true, false)],
      ['transB', () => tf.matMul(rand([33, 70], 1) as tf.Tensor2D, rand([45, 70], 2) as tf.Tensor2D, false, true)],
      ['both', () => tf.matMul(rand([70, 33], 1) as tf.Tensor2D, rand([45, 70], 2) as tf.Tensor2D, true, true)],
      ['batched', () => tf.matMul(rand([2, 3, 9, 40], 1) as tf.Tensor4D, rand([2, 3, 40, 12], 2) as tf.Tensor4D)],
      ['broadcastB', () => tf.matMul(rand([4, 20, 30], 1) as tf.Tensor3D, rand([1, 30, 25], 2) as tf.Tensor3D)],
      [
        'broadcastA',
        () => tf.matMul(rand([1, 20, 30], 1) as tf.Tensor3D, rand([4, 25, 30], 2) as tf.Tensor3D, false, true),
      ],
      ['empty', () => tf.matMul(tf.zeros([0, 5]) as tf.Tensor2D, rand([5, 3], 2) as tf.Tensor2D)],
      ['small', () => tf.matMul(rand([6, 1, 8], 1) as tf.Tensor3D, rand([6, 5, 8], 2) as tf.Tensor3D, false, true)],
      [
        'fusedBias',
        () =>
          tf.fused.matMul({
            a: rand([50, 64], 1) as tf.Tensor2D,
            b: rand([64, 70], 2) as tf.Tensor2D,
            bias: rand([70], 3),
          }),
      ],
      [
        'fusedRelu',
        () =>
          tf.fused.matMul({
            a: rand([50, 64], 1) as tf.Tensor2D,
            b: rand([64, 70], 2) as tf.Tensor2D,
            bias: rand([70], 3),
            activation: 'relu',
          }),
      ],
    ];
    for (const [name, f] of cases) out[name] = f().dataSync() as Float32Array;
    const model = new TinyLM({ vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 24, seed: 7 });
    const inputs = [
      { prompt: [1, 2, 3], completion: [4, 5, 6, 7] },
      { prompt: [1, 9], completion: [3, 3, 8, 2, 2, 1] },
      { prompt: [1, 4, 4, 5, 6, 7], completion: [2] },
    ];
    const { value, grads } = tf.variableGrads(() => {
      const s = model.score(inputs);
      out.logProbs = s.logProbs.dataSync() as Float32Array;
      out.entropy = s.entropy.dataSync() as Float32Array;
      // a generic gradient at every position: seeded weights on log-probs and entropies
      const [B, T] = s.logProbs.shape;
      return s.logProbs
        .mul(rand([B, T], 5))
        .add(s.entropy.mul(rand([B, T], 6)))
        .sum() as tf.Scalar;
    }, model.variables());
    out.loss = value.dataSync() as Float32Array;
    for (const [n, g] of Object.entries(grads)) out[`grad ${n.split('/')[1]}`] = g.dataSync() as Float32Array;
    // left-padded prompts of three lengths: padding masked, positions from each row's first token
    const gens = generate(
      model,
      [
        [1, 2, 3],
        [1, 9],
        [1, 4, 4, 5, 6],
      ],
      { maxNewTokens: 10, temperature: 1, seed: 3 },
    );
    out.generatedTokens = Float32Array.from(gens.flatMap((g) => g.tokens));
    out.generated = Float32Array.from(gens.flatMap((g) => [...g.logProbs, ...g.entropy, ...g.selfCertainty]));
    model.dispose();
    return out;
  });
}

describe('native matrix products', () => {
  const lib = loadNative();
  before(function () {
    need(this, 'native');
  });

  for (const backend of ['cpu', 'wasm'] as const) {
    it(`agree with tfjs's kernels on ${backend}: products, log-probs, entropy, every gradient, generation`, async () => {
      await initBackend(backend, 'off');
      const reference = compute();
      const on = await initBackend(backend, 'auto');
      expect(on.native).to.equal(lib!.name);
      expect(describeBackend(on)).to.contain(`native sgemm (${lib!.name})`);
      const fast = compute();
      for (const key of Object.keys(reference)) expect(maxDiff(fast[key], reference[key]), key).to.be.below(1e-4);
      // a check with teeth: the native kernels really ran (they round differently)
      expect(Object.keys(reference).some((k) => maxDiff(fast[k], reference[k]) > 0)).to.equal(true);
      setAccelerate(backend, 'off');
      const again = compute();
      for (const key of Object.keys(reference))
        expect(maxDiff(again[key], reference[key]), `off restores ${key}`).to.equal(0);
    });
  }

  for (const backend of ['cpu', 'wasm'] as const) {
    it(`a fused product with both operands transposed equals the explicit transposes on ${backend}`, async () => {
      // tfjs-backend-wasm 4.22's own _FusedMatMul gets this case wrong (off by up to 5.1 here);
      // the native kernel is checked against explicit transposes instead
      await initBackend(backend, 'auto');
      const diff = tf.tidy(() => {
        const [a, b, bias] = [rand([64, 50], 1) as tf.Tensor2D, rand([70, 64], 2) as tf.Tensor2D, rand([70], 3)];
        const fused = tf.fused.matMul({ a, b, transposeA: true, transposeB: true, bias });
        return tf.max(tf.abs(fused.sub(tf.matMul(a.transpose(), b.transpose()).add(bias)))).dataSync()[0];
      });
      expect(diff).to.be.below(1e-4);
    });
  }

  it('a decode that reuses the arrays of earlier decodes of its shape gives what it gave first', async () => {
    // the decoder hands its cache and step arrays to the next decode of the same batch size: nothing read may depend on what they held
    await initBackend('wasm', 'auto');
    const model = new TinyLM({ vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 24, seed: 7 });
    const first = [
        [1, 2, 3],
        [1, 9],
        [1, 4, 4, 5, 6],
      ],
      other = [
        [1, 7, 7, 7, 7, 7, 7, 7],
        [1, 3],
        [1, 5, 5, 5, 5, 2, 2],
      ];
    const o = { maxNewTokens: 8, temperature: 1, seed: 3 };
    const before = generate(model, first, o);
    generate(model, other, { ...o, seed: 4 });
    generate(model, other.slice(0, 2), o); // another shape in between
    generate(model, other, { ...o, seed: 5 });
    expect(generate(model, first, o)).to.deep.equal(before);
    model.dispose();
  });

  it('refuses an unknown choice, naming the choices, before switching anything', async () => {
    expect(() => setAccelerate('cpu', 'fast' as never)).to.throw(/accelerate: unknown choice 'fast'; known: auto, off/);
    await initBackend('wasm', 'auto');
    const err = await initBackend('cpu', 'fast' as never).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/^accelerate: unknown choice 'fast'; known: auto, off$/);
    expect(tf.getBackend()).to.equal('wasm');
  });

  it("initBackend's cached answer follows setAccelerate: 'auto' after a direct 'off' turns the library back on", async () => {
    await initBackend('cpu', 'auto');
    setAccelerate('cpu', 'off');
    expect(activeSgemm()).to.equal(undefined);
    const again = await initBackend('cpu', 'auto');
    expect(again.native).to.equal(lib!.name);
    expect(activeSgemm()).to.be.a('function');
  });

  it('an operand made on another backend moves onto the wasm heap before the product reads it', async () => {
    // a 48 MB tensor made on cpu: moving it may grow the wasm heap, which detaches older views
    await initBackend('cpu', 'off');
    const a = tf.randomNormal([6000, 2048], 0, 1, 'float32', 8) as tf.Tensor2D;
    const b = tf.randomNormal([2048, 3], 0, 1, 'float32', 9) as tf.Tensor2D;
    const expected = tf.tidy(() => tf.matMul(a, b).dataSync());
    await initBackend('wasm', 'auto');
    const got = tf.tidy(() => tf.matMul(a, b).dataSync());
    expect(maxDiff(got, expected)).to.be.below(1e-3);
    tf.dispose([a, b]);
  });

  it('a fused bias that is not one row ([M, 1]) goes to the original kernel and broadcasts as tfjs does', async () => {
    await initBackend('cpu', 'off');
    const reference = tf.tidy(() =>
      tf.fused
        .matMul({ a: rand([40, 30], 1) as tf.Tensor2D, b: rand([30, 40], 2) as tf.Tensor2D, bias: rand([40, 1], 3) })
        .dataSync(),
    );
    await initBackend('cpu', 'auto');
    const got = tf.tidy(() =>
      tf.fused
        .matMul({ a: rand([40, 30], 1) as tf.Tensor2D, b: rand([30, 40], 2) as tf.Tensor2D, bias: rand([40, 1], 3) })
        .dataSync(),
    );
    expect(maxDiff(got, reference)).to.be.below(1e-4);
  });
});

describe('native kernels are pinned', () => {
  it("OpenBLAS runs Zen's kernels on any CPU with AVX2 and FMA, its own choice elsewhere", () => {
    expect(blasCoreType(new Set(['sse2', 'avx', 'avx2', 'fma']))).to.equal('Zen');
    expect(blasCoreType(new Set(['sse2', 'avx', 'avx2']))).to.equal(undefined);
    expect(blasCoreType(new Set())).to.equal(undefined);
  });
});
