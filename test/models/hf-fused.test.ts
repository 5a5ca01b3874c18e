import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { setFusedKernels } from '../../src/backend/fused/index.js';
import { fusedRmsNorm, fusedSwiglu, fusesRmsNorm, fusesSwiglu } from '../../src/models/hf/fused.js';
import { attendComposed, attentionBias, rotate, rotation } from '../../src/models/hf/attention.js';
import { attendNative, attendsNatively } from '../../src/models/hf/attention-native.js';
import { loadNative } from '../../src/backend/native/library.js';

// The fused RMSNorm and SwiGLU product of the Hugging Face decoders must give what the
// composed tfjs operations give (src/models/hf/model.ts's plain path), values and gradients.
const rmsPlain = (x: tf.Tensor, g: tf.Tensor, eps: number) =>
  x.mul(tf.rsqrt(x.square().mean(-1, true).add(eps))).mul(g);
const swigluPlain = (g: tf.Tensor, u: tf.Tensor) => g.mul(tf.sigmoid(g)).mul(u);

const maxDiff = (a: tf.Tensor, b: tf.Tensor) => tf.tidy(() => a.sub(b).abs().max().dataSync()[0]);
const scale = (a: tf.Tensor) => tf.tidy(() => a.abs().max().dataSync()[0]);

describe('fused RMSNorm and SwiGLU (hf)', () => {
  after(async () => {
    await initBackend('cpu');
  });

  for (const backend of ['wasm', 'cpu'] as const) {
    it(`RMSNorm on ${backend}: values and the gradients of x and the gain as tfjs's composition, rows of mixed scale`, async () => {
      await initBackend(backend);
      setFusedKernels(backend, true);
      for (const [lead, d] of [
        [[3, 5], 8],
        [[2, 4, 3], 64],
        [[7], 576],
      ] as [number[], number][]) {
        tf.tidy(() => {
          const x = tf
            .randomNormal([...lead, d], 0, 2, 'float32', d)
            .mul(tf.randomUniform([...lead, 1], 0.01, 10, 'float32', 2));
          const g = tf.randomNormal([d], 1, 0.3, 'float32', d + 1);
          const dy = tf.randomNormal([...lead, d], 0, 1, 'float32', d + 2);
          expect(fusesRmsNorm(x, g)).to.equal(true);
          const f = (fn: typeof rmsPlain) => tf.grads((a: tf.Tensor, b: tf.Tensor) => fn(a, b, 1e-5).mul(dy).sum());
          const [px, pg] = f(rmsPlain)([x, g]);
          const [fx, fg] = f(fusedRmsNorm)([x, g]);
          const y = fusedRmsNorm(x, g, 1e-5),
            ref = rmsPlain(x, g, 1e-5);
          expect(maxDiff(y, ref) / scale(ref), `y ${d}`).to.be.below(1e-5);
          expect(maxDiff(fx, px) / scale(px), `dx ${d}`).to.be.below(1e-4);
          expect(maxDiff(fg, pg) / scale(pg), `dg ${d}`).to.be.below(1e-4);
          expect(scale(fx)).to.be.above(0);
        });
      }
      // a width the SIMD rows cannot take, or the kernels off: the composed path
      expect(fusesRmsNorm(tf.zeros([2, 6]), tf.ones([6]))).to.equal(false);
      setFusedKernels(backend, false);
      expect(fusesRmsNorm(tf.zeros([2, 8]), tf.ones([8]))).to.equal(false);
      setFusedKernels(backend, true);
    });

    it(`SwiGLU's product on ${backend}: values and both gradients as tfjs's composition, the far tails included`, async () => {
      await initBackend(backend);
      setFusedKernels(backend, true);
      for (const n of [1, 7, 8, 37, 1536]) {
        tf.tidy(() => {
          const g = tf.randomNormal([n], 0, 4, 'float32', n);
          const u = tf.randomNormal([n], 0, 2, 'float32', n + 1);
          const dy = tf.randomNormal([n], 0, 1, 'float32', n + 2);
          expect(fusesSwiglu(g, u)).to.equal(true);
          const f = (fn: typeof swigluPlain) => tf.grads((a: tf.Tensor, b: tf.Tensor) => fn(a, b).mul(dy).sum());
          const [pg, pu] = f(swigluPlain)([g, u]);
          const [fg, fu] = f(fusedSwiglu)([g, u]);
          expect(maxDiff(fusedSwiglu(g, u), swigluPlain(g, u)), `y ${n}`).to.be.below(
            1e-5 * Math.max(1, scale(swigluPlain(g, u))),
          );
          expect(maxDiff(fg, pg), `dg ${n}`).to.be.below(1e-5 * Math.max(1, scale(pg)));
          expect(maxDiff(fu, pu), `du ${n}`).to.be.below(1e-5 * Math.max(1, scale(pu)));
        });
      }
      tf.tidy(() => {
        const g = tf.tensor2d([-200, -90, -20, -1, 0, 1, 20, 90, 200, -0.5, 3, 1e-3], [3, 4]);
        const u = tf.onesLike(g).mul(1.5);
        const [pg, pu] = tf.grads((a: tf.Tensor, b: tf.Tensor) => swigluPlain(a, b).sum())([g, u]);
        const [fg, fu] = tf.grads((a: tf.Tensor, b: tf.Tensor) => fusedSwiglu(a, b).sum())([g, u]);
        const y = fusedSwiglu(g, u).dataSync();
        expect(Array.from(y).every(Number.isFinite), 'finite far out').to.equal(true);
        expect(maxDiff(fusedSwiglu(g, u), swigluPlain(g, u)) / 300).to.be.below(1e-5);
        expect(maxDiff(fg, pg)).to.be.below(1e-5);
        expect(maxDiff(fu, pu) / 200).to.be.below(1e-5);
      });
      expect(fusesSwiglu(tf.zeros([2, 3]), tf.zeros([3, 2]))).to.equal(false);
    });
  }
});

describe('RoPE rotation (hf)', () => {
  after(async () => {
    await initBackend('cpu');
  });

  it('gives the same bits on the wasm heap (its SIMD kernel) as the JS loop on cpu, values and the gradient', async () => {
    const positions = Int32Array.from({ length: 2 * 9 }, (_, i) => (i * 7) % 40);
    const invFreq = Float32Array.from({ length: 8 }, (_, i) => 1 / 10000 ** (i / 8));
    const run = async (backend: 'wasm' | 'cpu') => {
      await initBackend(backend);
      return tf.tidy(() => {
        const rot = rotation(invFreq, positions, 2, 9);
        const x = tf.randomNormal([2, 3, 9, 16], 0, 1, 'float32', 5) as tf.Tensor4D;
        const dy = tf.randomNormal([2, 3, 9, 16], 0, 1, 'float32', 6);
        const y = rotate(x, rot);
        const [dx] = tf.grads((a: tf.Tensor) =>
          rotate(a as tf.Tensor4D, rot)
            .mul(dy)
            .sum(),
        )([x]);
        return [y.dataSync().slice(), dx.dataSync().slice(), x.dataSync().slice()] as Float32Array[];
      });
    };
    const [wy, wdx, wx] = await run('wasm');
    const [cy, cdx, cx] = await run('cpu');
    expect(Array.from(wx)).to.deep.equal(Array.from(cx)); // the same input on both
    expect(Array.from(wy)).to.deep.equal(Array.from(cy));
    expect(Array.from(wdx)).to.deep.equal(Array.from(cdx));
    // and it rotates: a position-0 row is unchanged, others are not
    expect(Array.from(wy.subarray(0, 16))).to.deep.equal(Array.from(wx.subarray(0, 16)));
    expect(Array.from(wy.subarray(16, 32))).to.not.deep.equal(Array.from(wx.subarray(16, 32)));
  });
});

describe('attention as one native operation (hf)', () => {
  before(async function () {
    await initBackend('wasm');
    setFusedKernels('wasm', true);
    if (!attendsNatively()) this.skip(); // no native library (COEVOLVE_NATIVE=none)
  });
  after(async () => {
    await initBackend('cpu');
  });

  // grouped-query (3 query heads per kv head) with left padding; plain multi-head; a cache's keys beyond the queries;
  // rows of more than one block (64), where each block's products skip the keys its causal mask hides
  for (const [B, H, KV, T, past, hd] of [
    [2, 6, 2, 7, 0, 16],
    [3, 2, 2, 5, 0, 8],
    [2, 4, 1, 1, 6, 16],
    [2, 6, 2, 150, 0, 16],
    [1, 4, 2, 70, 5, 8],
  ])
    it(`gives attend()'s composition: values and the gradients of q, k and v (B ${B}, ${H}/${KV} heads, ${T} queries, ${past} cached keys)`, () => {
      tf.tidy(() => {
        const S = past + T;
        const keyMask = new Float32Array(B * S).fill(1);
        keyMask.fill(0, 0, 2); // the first row left-padded by two
        const bias = attentionBias(keyMask, B, T, past, H / KV);
        const q = tf.randomNormal([B, H, T, hd], 0, 1, 'float32', 1) as tf.Tensor4D;
        const k = tf.randomNormal([B, KV, S, hd], 0, 1, 'float32', 2) as tf.Tensor4D;
        const v = tf.randomNormal([B, KV, S, hd], 0, 1, 'float32', 3) as tf.Tensor4D;
        const dy = tf.randomNormal([B, T, H * hd], 0, 1, 'float32', 4);
        const grads = (fn: typeof attendComposed) =>
          tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
            fn(a as tf.Tensor4D, b as tf.Tensor4D, c as tf.Tensor4D, bias)
              .mul(dy)
              .sum(),
          )([q, k, v]);
        const ref = attendComposed(q, k, v, bias);
        // its products run on one thread, and the library's count comes back after
        loadNative()!.setThreads(2);
        const got = attendNative(q, k, v, bias);
        expect(loadNative()!.threads()).to.equal(2);
        loadNative()!.setThreads(1);
        expect(got.shape).to.deep.equal(ref.shape);
        expect(maxDiff(got, ref) / scale(ref)).to.be.below(1e-5);
        const [rq, rk, rv] = grads(attendComposed);
        const [gq, gk, gv] = grads(attendNative);
        for (const [name, a, b] of [
          ['dq', gq, rq],
          ['dk', gk, rk],
          ['dv', gv, rv],
        ] as const)
          expect(maxDiff(a, b) / scale(b), name).to.be.below(1e-5);
      });
    });
});
