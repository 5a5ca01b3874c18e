import { expect } from 'chai';
import { simdKernels } from '../../src/backend/simd/index.js';

// The head's row kernels (src/models/hf/head-native.ts) against the same sums in float64, at
// lengths that leave every tail (vectors of 8, then singles), with a row of mixed scale.
describe("the vocabulary head's SIMD row kernels", () => {
  const memory = new WebAssembly.Memory({ initial: 1 });
  const k = simdKernels(memory);
  const at = 64; // a byte offset that is not the memory's start
  for (const n of [1, 7, 8, 13, 37, 1000]) {
    it(`rowMax, expStats and expGrad over ${n} logits`, () => {
      const z = Float64Array.from({ length: n }, (_, i) => 6 * Math.sin(7.3 * i + n) + (i % 5 === 0 ? 9 : 0));
      const view = new Float32Array(memory.buffer, at, n);
      view.set(z);
      const zf = Float32Array.from(z);
      const max = Math.max(...zf);
      expect(k.rowMax(at, n)).to.equal(max);
      const scale = 1 / 0.7;
      const m = scale * max;
      const [s, q] = k.expStats(at, n, scale, m);
      let S = 0,
        Q = 0;
      for (const v of zf) {
        S += Math.exp(scale * v - m);
        Q += Math.exp(scale * v - m) * v;
      }
      expect(s / S).to.be.closeTo(1, 1e-5);
      expect(Math.abs(q - Q)).to.be.below(1e-5 * (Math.abs(Q) + S * 10));
      const lse = m + Math.log(S);
      const [c0, c1, sc] = [0.3, -0.8, -scale];
      k.expGrad(at, n, scale, lse, c0, c1, sc);
      for (let i = 0; i < n; i++) {
        const want = sc * Math.exp(scale * zf[i] - lse) * (c0 + c1 * zf[i]);
        expect(view[i], `row ${i}`).to.be.closeTo(want, 1e-6 * (1 + Math.abs(want) * 10));
      }
    });
  }
});

// The sampler's kernels (src/models/sampling.ts) against the same sums and the same walk in float64.
describe("the sampler's SIMD kernels", () => {
  const memory = new WebAssembly.Memory({ initial: 20 });
  const k = simdKernels(memory);
  const at = 32;
  for (const n of [1, 3, 4, 9, 1000, 151669]) {
    it(`rowMaxSum, expSums and expDraw over ${n} logits`, () => {
      const z = Float32Array.from({ length: n }, (_, i) => 6 * Math.sin(7.3 * i + n) + (i % 97 === 0 ? 12 : 0));
      new Float32Array(memory.buffer, at, n).set(z);
      const scale = 1 / 0.7;
      const zmax = z.reduce((a, b) => Math.max(a, b), -Infinity);
      const m = scale * zmax;
      const w = Array.from(z, (v) => Math.exp(scale * v - m));
      const S = w.reduce((a, b) => a + b, 0);
      const Q = w.reduce((a, e, i) => a + e * (scale * z[i] - m), 0);
      const [top, total] = k.rowMaxSum(at, n);
      expect(top).to.equal(zmax);
      expect(total).to.be.closeTo(
        z.reduce((a, b) => a + b, 0),
        1e-9 * n,
      );
      const [s, q] = k.expSums(at, n, scale, m);
      // k z - m is rounded to float32 (|t| up to 20 here: 1.2e-6 of an exponent), the rest is double
      expect(s / S).to.be.closeTo(1, 5e-6);
      expect(Math.abs(q - Q)).to.be.below(5e-6 * (Math.abs(Q) + S));
      // the walk crosses u where the float64 cumulative sum does (up to the exp's rounding at the boundary)
      for (const f of [0, 0.1, 0.37, 0.5, 0.9, 0.999999]) {
        const u = f * S;
        let acc = 0;
        let want = -1;
        for (let i = 0; i < n && want < 0; i++) if ((acc += w[i]) > u) want = i;
        const got = k.expDraw(at, n, scale, m, u);
        const near = Math.abs(w.slice(0, got + 1).reduce((a, b) => a + b, 0) - u) < 1e-6 * S;
        expect(got === want || near, `u = ${f} S: ${got} against ${want}`).to.equal(true);
      }
      expect(k.expDraw(at, n, scale, m, 2 * S)).to.equal(-1);
    });
  }
});
