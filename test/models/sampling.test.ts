import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { kernelsOver } from '../../src/backend/simd/index.js';
import { readView } from '../../src/backend/views.js';
import {
  argmax,
  distributionStats,
  sampleToken,
  validateSampling,
  type SamplingOptions,
} from '../../src/models/sampling.js';
import { Rng } from '../../src/util/rng.js';
import { TEST_BACKEND } from '../needs.js';

const f32 = (xs: number[]) => new Float32Array(xs);

/** log-softmax(z / tau) in float64. */
function logSoftmax(z: ArrayLike<number>, tau = 1): number[] {
  const s = Array.from(z, (x) => x / tau);
  const max = Math.max(...s);
  const lse = max + Math.log(s.reduce((a, x) => a + Math.exp(x - max), 0));
  return s.map((x) => x - lse);
}

/** How often each token is drawn in n samples. */
function counts(logits: Float32Array, o: SamplingOptions, n: number, seed = 1): number[] {
  const rng = new Rng(seed);
  const c = new Array(logits.length).fill(0);
  for (let i = 0; i < n; i++) c[sampleToken(logits, o, rng).token]++;
  return c;
}

function randomLogits(rng: Rng, V: number, scale = 2): Float32Array {
  return f32(Array.from({ length: V }, () => rng.normal() * scale));
}

describe('models/sampling', () => {
  describe('greedy (temperature 0)', () => {
    it('argmax picks the first index of the largest value', () => {
      expect(argmax([1, 3, 3, 2])).to.equal(1);
      expect(argmax([5, 5, 5])).to.equal(0);
      expect(argmax([-4, -2, -3])).to.equal(1);
      expect(argmax(f32([0, 0, 0, 1e-6]))).to.equal(3);
    });

    it('sampleToken at temperature 0 is the argmax with first-index ties and draws nothing', () => {
      const rng = new Rng(7);
      const state = rng.seedState;
      expect(sampleToken(f32([0.1, 2, -1, 2, 1.5]), { temperature: 0 }, rng).token).to.equal(1);
      expect(sampleToken(f32([3, 3]), { temperature: 0, topK: 2, topP: 0.5 }, rng).token).to.equal(0);
      expect(rng.seedState, 'greedy consumed randomness').to.equal(state);
    });

    it('greedy logProb is log-softmax of the unscaled logits (temperature 1)', () => {
      const z = f32([0.1, 2, -1, 0.5]);
      const { token, logProb } = sampleToken(z, { temperature: 0 }, new Rng(1));
      expect(token).to.equal(1);
      expect(logProb).to.be.closeTo(logSoftmax(z)[1], 1e-9);
    });
  });

  describe('top-k', () => {
    it('top-k 1 is greedy', () => {
      const gen = new Rng(3);
      const rng = new Rng(4);
      for (let i = 0; i < 200; i++) {
        const z = randomLogits(gen, 12);
        expect(sampleToken(z, { temperature: 1.3, topK: 1 }, rng).token).to.equal(argmax(z));
      }
    });

    it('top-k 3 draws only the 3 most likely tokens, in proportion to their probabilities', () => {
      const z = f32([0.5, 2.0, -1.0, 1.5, 1.0, 0.0, 1.2]); // top 3: ids 1, 3, 6
      const n = 6000;
      const c = counts(z, { topK: 3 }, n);
      const kept = [1, 3, 6];
      c.forEach((k, i) => {
        if (!kept.includes(i)) expect(k, `token ${i}`).to.equal(0);
      });
      const w = kept.map((i) => Math.exp(z[i]));
      const total = w.reduce((a, b) => a + b, 0);
      kept.forEach((i, r) => expect(c[i] / n, `token ${i}`).to.be.closeTo(w[r] / total, 0.03));
    });

    it('top-k at least V is plain sampling: every token appears', () => {
      const c = counts(f32([0, 0.5, -0.5, 1]), { topK: 10 }, 2000);
      expect(c.every((k) => k > 0)).to.equal(true);
    });
  });

  describe('top-p', () => {
    const z = f32([Math.log(0.2), Math.log(0.5), Math.log(0.3)]); // probs: id 1 0.5, id 2 0.3, id 0 0.2

    it('keeps the smallest set reaching p: with p 0.7 the 0.3 token appears, the 0.2 token never', () => {
      const n = 4000;
      const c = counts(z, { topP: 0.7 }, n);
      expect(c[0], 'the 0.2 token').to.equal(0);
      expect(c[2], 'the 0.3 token').to.be.above(0);
      expect(c[1] / n).to.be.closeTo(0.5 / 0.8, 0.03);
      expect(c[2] / n).to.be.closeTo(0.3 / 0.8, 0.03);
    });

    it('with p 0.45 only the most likely token is kept; with p 0.85 all three are', () => {
      expect(counts(z, { topP: 0.45 }, 500)).to.deep.equal([0, 500, 0]);
      expect(counts(z, { topP: 0.85 }, 3000).every((k) => k > 0)).to.equal(true);
    });

    it('top-k and top-p together keep the smaller set', () => {
      const z4 = f32([Math.log(0.4), Math.log(0.3), Math.log(0.2), Math.log(0.1)]);
      const c = counts(z4, { topK: 2, topP: 0.95 }, 2000);
      expect(c[2] + c[3]).to.equal(0);
      expect(c[0] > 0 && c[1] > 0).to.equal(true);
    });

    it('top-p is applied after the temperature', () => {
      // At temperature 1 the probs are [0.2, 0.5, 0.3]: p 0.72 is reached by ids 1 and 2.
      // At temperature 3 they flatten to about [0.286, 0.388, 0.327]: 0.388 + 0.327 < 0.72, so all three stay.
      expect(counts(z, { topP: 0.72 }, 2000)[0]).to.equal(0);
      expect(counts(z, { temperature: 3, topP: 0.72 }, 2000).every((k) => k > 0)).to.equal(true);
    });
  });

  describe('log-probabilities and determinism', () => {
    it('logProb is log-softmax(logits / temperature)[token], before any filtering', () => {
      const gen = new Rng(9);
      const rng = new Rng(10);
      const options: SamplingOptions[] = [
        {},
        { temperature: 0.7 },
        { temperature: 1.8 },
        { temperature: 0.5, topK: 3 },
        { temperature: 1.2, topP: 0.6 },
      ];
      for (const o of options) {
        for (let i = 0; i < 50; i++) {
          const z = randomLogits(gen, 9, 3);
          const { token, logProb } = sampleToken(z, o, rng);
          expect(token).to.be.within(0, 8);
          expect(logProb, JSON.stringify(o)).to.be.closeTo(logSoftmax(z, o.temperature ?? 1)[token], 1e-9);
        }
      }
    });

    it('is stable for large logits', () => {
      const z = f32([1000, 999, -1000]);
      const { token, logProb } = sampleToken(z, { temperature: 0.5 }, new Rng(2));
      expect(Number.isFinite(logProb)).to.equal(true);
      expect(logProb).to.be.closeTo(logSoftmax(z, 0.5)[token], 1e-9);
    });

    it('draws follow the softmax at the given temperature', () => {
      const z = f32([0, 1, 2]);
      const n = 8000;
      for (const temperature of [1, 0.5]) {
        const c = counts(z, { temperature }, n, 5);
        const p = logSoftmax(z, temperature).map(Math.exp);
        p.forEach((q, i) => expect(c[i] / n, `temperature ${temperature}, token ${i}`).to.be.closeTo(q, 0.02));
      }
    });

    it('the same seed gives the same draws; another seed different ones', () => {
      const z = f32(Array.from({ length: 16 }, () => 0));
      const draw = (seed: number) => {
        const rng = new Rng(seed);
        return Array.from({ length: 30 }, () => sampleToken(z, {}, rng).token);
      };
      expect(draw(42)).to.deep.equal(draw(42));
      expect(draw(42)).to.not.deep.equal(draw(43));
    });
  });

  describe('validateSampling', () => {
    it('accepts valid options and the defaults', () => {
      expect(() => validateSampling({})).to.not.throw();
      expect(() => validateSampling({ temperature: 0, topK: 0, topP: 1 })).to.not.throw();
      expect(() => validateSampling({ temperature: 2.5, topK: 40, topP: 0.01 })).to.not.throw();
    });

    it('invalid options throw naming the option', () => {
      const cases: Array<[SamplingOptions, RegExp]> = [
        [{ temperature: -0.1 }, /temperature must be >= 0, got -0\.1/],
        [{ temperature: NaN }, /temperature/],
        [{ temperature: Infinity }, /temperature/],
        [{ topK: -1 }, /topK must be a non-negative integer, got -1/],
        [{ topK: 2.5 }, /topK.*2\.5/],
        [{ topP: 0 }, /topP must be in \(0, 1\], got 0/],
        [{ topP: 1.5 }, /topP.*1\.5/],
        [{ topP: NaN }, /topP/],
      ];
      for (const [o, re] of cases) expect(() => validateSampling(o), JSON.stringify(o)).to.throw(re);
    });
  });
});

describe('distributionStats', () => {
  it('matches entropy and self-certainty computed by hand', async () => {
    // logits [0, ln 2, ln 3, ln 2]: p = [1, 2, 3, 2] / 8
    const z = new Float32Array([0, Math.log(2), Math.log(3), Math.log(2)]);
    const p = [1 / 8, 2 / 8, 3 / 8, 2 / 8];
    const entropy = -p.reduce((s, x) => s + x * Math.log(x), 0);
    const selfCertainty = -Math.log(4) - p.reduce((s, x) => s + Math.log(x), 0) / 4; // KL(U||p)
    const got = distributionStats(z);
    expect(got.entropy).to.be.closeTo(entropy, 1e-6);
    expect(got.selfCertainty).to.be.closeTo(selfCertainty, 1e-6);
    expect(distributionStats(new Float32Array([3, 3, 3])).selfCertainty).to.be.closeTo(0, 1e-9);
  });

  it("sampleToken's statistics are the untempered distribution's at every temperature, greedy included", async () => {
    const rng = new Rng(4);
    const z = new Float32Array(Array.from({ length: 50 }, (_, i) => Math.sin(i * 1.7) * 3 + (i % 7)));
    const want = distributionStats(z);
    for (const temperature of [0, 1, 0.6, 1.4]) {
      const got = sampleToken(z, { temperature }, rng);
      expect(got.entropy, `temperature ${temperature}`).to.be.closeTo(want.entropy, 1e-9);
      expect(got.selfCertainty, `temperature ${temperature}`).to.be.closeTo(want.selfCertainty, 1e-9);
    }
  });

  it('a row in the wasm heap is sampled by the SIMD kernels as the JS loop samples a copy of it', async () => {
    await initBackend(TEST_BACKEND);
    const V = 5003;
    const z = randomLogits(new Rng(9), V, 3);
    const t = tf.tensor1d(z);
    try {
      const heap = readView(t);
      expect(kernelsOver(heap)).to.not.equal(undefined); // the kernels' path
      expect(kernelsOver(z)).to.equal(undefined); // the loop's
      for (const temperature of [0, 1, 0.7]) {
        const [a, b] = [new Rng(3), new Rng(3)];
        for (let i = 0; i < 200; i++) {
          const got = sampleToken(heap, { temperature }, a);
          const want = sampleToken(z, { temperature }, b);
          expect(got.token, `temperature ${temperature}, draw ${i}`).to.equal(want.token);
          expect(got.logProb).to.be.closeTo(want.logProb, 1e-5);
          expect(got.entropy).to.be.closeTo(want.entropy, 1e-5);
          expect(got.selfCertainty).to.be.closeTo(want.selfCertainty, 1e-5);
        }
      }
    } finally {
      t.dispose();
    }
  });
});
