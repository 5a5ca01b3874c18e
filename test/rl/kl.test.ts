import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { klPenalty, klPenaltyArray, type KlKind } from '../../src/rl/kl.js';

/** Relative tolerance: tensors are float32, so 450 is only good to ~1e-5 relative. */
function expectMatrixClose(actual: number[][], expected: number[][], rel: number): void {
  expect(actual.length).to.equal(expected.length);
  actual.forEach((row, i) =>
    row.forEach((v, t) => {
      const e = expected[i][t];
      expect(v, `[${i}][${t}]`).to.be.closeTo(e, rel * Math.max(1, Math.abs(e)));
    }),
  );
}

// logp − ref per entry: 0.5, −1 | 0, −30 | 25, 0.2
const logp = [
  [-1, -2],
  [-0.5, -30],
  [0, -0.1],
];
const ref = [
  [-1.5, -1],
  [-0.5, 0],
  [-25, -0.3],
];

// Hand-computed per kind.
const k1 = [
  [0.5, -1],
  [0, -30],
  [25, 0.2],
];
const abs = [
  [0.5, 1],
  [0, 30],
  [25, 0.2],
];
// 0.5·d²: 0.5·0.25, 0.5·1 | 0, 0.5·900 | 0.5·625, 0.5·0.04
const k2 = [
  [0.125, 0.5],
  [0, 450],
  [312.5, 0.02],
];
// k3: kl = ref − logp, clamped to ±20, then exp(kl) − kl − 1 clamped to ±10:
//   kl = −0.5: 0.606531 + 0.5 − 1 = 0.106531;  kl = 1: 2.718282 − 2 = 0.718282
//   kl = 0: 0;  kl = 30 → 20: e^20 − 21 ≈ 4.85e8 → 10
//   kl = −25 → −20: 2.1e−9 + 20 − 1 = 19 → 10;  kl = −0.2: 0.818731 + 0.2 − 1 = 0.018731
const k3 = [
  [0.106531, 0.718282],
  [0, 10],
  [10, 0.018731],
];

const cases: Array<[KlKind, number[][]]> = [
  ['k1', k1],
  ['kl', k1],
  ['abs', abs],
  ['k2', k2],
  ['mse', k2],
  ['k3', k3],
  ['low_var_kl', k3],
];

describe('rl/kl', () => {
  before(async () => {
    await tf.setBackend('cpu');
  });

  for (const [kind, expected] of cases) {
    it(`klPenalty '${kind}' on tensors`, () => {
      const [a, b] = [tf.tensor2d(logp), tf.tensor2d(ref)];
      const before = tf.memory().numTensors;
      const result = klPenalty(a, b, kind);
      const out = result.arraySync() as number[][];
      result.dispose();
      // guards against: removing the tf.tidy in klPenalty (no tidy here, so its intermediates would stay)
      expect(tf.memory().numTensors, 'leaked tensors').to.equal(before);
      tf.dispose([a, b]);
      expectMatrixClose(out, expected, 1e-5);
    });

    it(`klPenaltyArray '${kind}' on number[][]`, () => {
      expectMatrixClose(klPenaltyArray(logp, ref, kind), expected, 1e-6);
    });
  }

  it('k3 gradient w.r.t. logp is 1 − exp(ref − logp) inside the clamps', () => {
    // d/dlogp [exp(ref − logp) − (ref − logp) − 1] = −exp(ref − logp) + 1
    // logp = −1, ref = −1.5: 1 − e^−0.5 = 0.393469; logp = −2, ref = −1: 1 − e = −1.718282
    const g = tf.tidy(() => {
      const r = tf.tensor1d([-1.5, -1]);
      return tf
        .grad((x: tf.Tensor) => tf.sum(klPenalty(x, r, 'k3')))(tf.tensor1d([-1, -2]))
        .arraySync() as number[];
    });
    expect(g[0]).to.be.closeTo(0.393469, 1e-5);
    expect(g[1]).to.be.closeTo(-1.718282, 1e-5);
  });

  it('rejects unknown kinds and mismatched shapes', () => {
    expect(() => klPenaltyArray([[0]], [[0]], 'full' as KlKind)).to.throw(/Unknown KL kind/);
    expect(() => klPenaltyArray([[0, 1]], [[0]], 'k1')).to.throw();
    tf.tidy(() => {
      expect(() => klPenalty(tf.zeros([2, 2]), tf.zeros([2, 3]), 'k1')).to.throw();
    });
  });
});
