import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import {
  aggLoss,
  entropyBonus,
  maskedMeanTensor,
  policyLoss,
  trlAggLoss,
  valueLoss,
  type AggMode,
} from '../../src/rl/loss.js';

/** Inputs made by t2 and zeros since the last leakFree; leakFree disposes them. */
const inputs: tf.Tensor[] = [];
const t2 = (x: number[][]) => {
  const t = tf.tensor2d(x);
  inputs.push(t);
  return t;
};
const zeros = (r: number, c: number) => t2(Array.from({ length: r }, () => new Array(c).fill(0)));
/** Reads a scalar result and disposes it. */
const num = (t: tf.Tensor): number => {
  const v = t.dataSync()[0];
  t.dispose();
  return v;
};

/**
 * Runs `fn` outside any tidy, disposes its inputs, and checks that no other tensor is left:
 * `fn` must read and dispose what the call returns (num does), so anything left over is an
 * intermediate that the code under test failed to free.
 */
function leakFree<T>(fn: () => T): T {
  const before = tf.memory().numTensors;
  const out = fn();
  tf.dispose(inputs.splice(0));
  expect(tf.memory().numTensors, 'leaked tensors').to.equal(before);
  return out;
}

describe('rl/loss', () => {
  before(async () => {
    await tf.setBackend('cpu');
  });

  // The leakFree checks in this file guard against: removing the tf.tidy in the function under test.
  it('maskedMeanTensor is Σ(x·m) / (Σm + 1e-8)', () => {
    expect(
      leakFree(() =>
        num(
          maskedMeanTensor(
            t2([
              [1, 2, 3],
              [4, 5, 6],
            ]),
            t2([
              [1, 0, 1],
              [0, 1, 0],
            ]),
          ),
        ),
      ),
    ).to.be.closeTo(3, 1e-5);
  });

  describe('aggLoss (verl agg_loss)', () => {
    // Row 2 is fully padded. Masked-in: row 0 → 1, 2; row 1 → 4.
    const L = [
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ];
    const M = [
      [1, 1, 0],
      [1, 0, 0],
      [0, 0, 0],
    ];
    const expected: Record<AggMode, number> = {
      'token-mean': 7 / 3, // (1 + 2 + 4) / 3 tokens
      'seq-mean-token-sum': 3.5, // row sums 3, 4; padded row excluded → 7 / 2
      'seq-mean-token-mean': 2.75, // row means 1.5, 4 → 5.5 / 2
      'seq-mean-token-sum-norm': 7 / 3, // (3 + 4 + 0) / T, T = 3
    };
    for (const [mode, value] of Object.entries(expected) as Array<[AggMode, number]>) {
      it(`${mode} with a padded row`, () => {
        expect(leakFree(() => num(aggLoss(t2(L), t2(M), mode)))).to.be.closeTo(value, 1e-5);
      });
      it(`${mode} of an all-padded batch is 0`, () => {
        expect(leakFree(() => num(aggLoss(t2(L), zeros(3, 3), mode)))).to.equal(0);
      });
    }

    it('rejects an unknown mode and mismatched shapes', () => {
      tf.tidy(() => {
        expect(() => aggLoss(t2(L), t2(M), 'bogus' as AggMode)).to.throw(/Invalid/);
        expect(() => aggLoss(t2(L), t2([[1]]), 'token-mean')).to.throw();
      });
    });
  });

  describe('trlAggLoss (TRL GRPO loss_type)', () => {
    const L = [
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ];
    const M = [
      [1, 1, 0],
      [1, 0, 0],
      [0, 0, 0],
    ];
    it('grpo: per-row mean over max(count, 1), averaged over ALL rows', () => {
      // rows: 3/2 = 1.5, 4/1 = 4, 0/max(0, 1) = 0 → 5.5 / 3
      expect(leakFree(() => num(trlAggLoss(t2(L), t2(M), 'grpo')))).to.be.closeTo(5.5 / 3, 1e-5);
    });
    it('bnpo: Σ / max(tokens, 1)', () => {
      expect(leakFree(() => num(trlAggLoss(t2(L), t2(M), 'bnpo')))).to.be.closeTo(7 / 3, 1e-5);
    });
    it('dr_grpo: Σ / (B · maxCompletionLength), default length T', () => {
      expect(leakFree(() => num(trlAggLoss(t2(L), t2(M), 'dr_grpo', 4)))).to.be.closeTo(7 / 12, 1e-5);
      expect(leakFree(() => num(trlAggLoss(t2(L), t2(M), 'dr_grpo')))).to.be.closeTo(7 / 9, 1e-5);
    });
    it('dapo: Σ / numItemsInBatch, default the local token count', () => {
      expect(leakFree(() => num(trlAggLoss(t2(L), t2(M), 'dapo')))).to.be.closeTo(7 / 3, 1e-5);
      expect(leakFree(() => num(trlAggLoss(t2(L), t2(M), 'dapo', undefined, 14)))).to.be.closeTo(0.5, 1e-5);
    });
  });

  describe('policyLoss (verl compute_policy_loss_vanilla)', () => {
    // clipLow 0.2, clipHigh 0.28 → ratio clip [0.8, 1.28]; c = 3. oldLogProb = 0.
    //  r0t0 A=+1, ρ=2   : L1 −2, L2 −1.28 → −1.28 (ε-clipped)
    //  r0t1 A=−1, ρ=0.5 : L1 0.5, L2 0.8 → 0.8 (ε-clipped); min(3, 0.8) = 0.8
    //  r0t2 A=−1, ρ=5   : L1 5, L2 1.28 → 5; dual clip min(3, 5) = 3 (lower-clipped)
    //  r1t0 A=+2, ρ=1   : −2 (unclipped)
    //  r1t1 A=+1, log ρ = 25 → clamped 20: L1 −e^20, L2 −1.28 → −1.28 (ε-clipped)
    //  r1t2 masked (log ρ = 30, A = −1)
    const logProb = [
      [Math.log(2), Math.log(0.5), Math.log(5)],
      [0, 25, 30],
    ];
    const adv = [
      [1, -1, -1],
      [2, 1, -1],
    ];
    const mask = [
      [1, 1, 1],
      [1, 1, 0],
    ];
    const run = (aggMode: AggMode) =>
      leakFree(() => {
        const out = policyLoss({
          oldLogProb: zeros(2, 3),
          logProb: t2(logProb),
          advantages: t2(adv),
          mask: t2(mask),
          clipLow: 0.2,
          clipHigh: 0.28,
          aggMode,
        });
        return { ...out, loss: num(out.loss) };
      });
    const expected: Record<AggMode, number> = {
      'token-mean': -0.152, // (−1.28 + 0.8 + 3 − 2 − 1.28) / 5 = −0.76 / 5
      'seq-mean-token-sum': -0.38, // (2.52 + (−3.28)) / 2
      'seq-mean-token-mean': -0.4, // (2.52/3 + (−3.28)/2) / 2 = (0.84 − 1.64) / 2
      'seq-mean-token-sum-norm': -0.76 / 3, // (2.52 − 3.28) / T
    };
    for (const [mode, value] of Object.entries(expected) as Array<[AggMode, number]>) {
      it(`loss with ${mode}`, () => {
        expect(run(mode).loss).to.be.closeTo(value, 1e-4);
      });
    }

    it('statistics: clipfrac 3/5, clipfracLower 1/5, ppoKl from the clamped log-ratio', () => {
      const { clipfrac, clipfracLower, ppoKl } = run('token-mean');
      expect(clipfrac).to.be.closeTo(0.6, 1e-6);
      expect(clipfracLower).to.be.closeTo(0.2, 1e-6);
      // −(ln2 + ln0.5 + ln5 + 0 + 20)/5 = −(1.609438 + 20)/5 = −4.321888
      expect(ppoKl).to.be.closeTo(-4.321888, 1e-4);
    });

    it('gradient flows only through unclipped tokens', () => {
      // Only r1t0 is unclipped: d(−A·ρ)/dlogp = −2·1, divided by 5 tokens → −0.4.
      const g = leakFree(() => {
        const f = (lp: tf.Tensor) =>
          policyLoss({
            oldLogProb: zeros(2, 3),
            logProb: lp as tf.Tensor2D,
            advantages: t2(adv),
            mask: t2(mask),
            clipLow: 0.2,
            clipHigh: 0.28,
          }).loss;
        const grad = tf.grad(f)(t2(logProb));
        const values = grad.arraySync() as number[][];
        grad.dispose();
        return values;
      });
      expect(g.flat().map((v) => Math.round(v * 1e5) / 1e5)).to.deep.equal([0, 0, 0, -0.4, 0, 0]);
    });

    it('clipHigh defaults to clipLow and clipRatioC must exceed 1', () => {
      // symmetric 0.2: r0t0 → −1.2, r1t1 → −1.2; sum −1.2 + 0.8 + 3 − 2 − 1.2 = −0.6 → /5 = −0.12
      const loss = leakFree(() =>
        num(
          policyLoss({
            oldLogProb: zeros(2, 3),
            logProb: t2(logProb),
            advantages: t2(adv),
            mask: t2(mask),
            clipLow: 0.2,
          }).loss,
        ),
      );
      expect(loss).to.be.closeTo(-0.12, 1e-4);
      tf.tidy(() => {
        const args = {
          oldLogProb: t2(logProb),
          logProb: t2(logProb),
          advantages: t2(adv),
          mask: t2(mask),
          clipLow: 0.2,
        };
        expect(() => policyLoss({ ...args, clipRatioC: 1 })).to.throw(/clipRatioC/);
      });
    });
  });

  describe('valueLoss (verl compute_value_loss)', () => {
    it('0.5 × agg of the pessimistic clipped squared error, plus clipfrac', () => {
      // clip 0.2 around values 1:
      //  t0: vpred 1.5 → clipped 1.2; (1.5−2)² = 0.25 < (1.2−2)² = 0.64 → 0.64 (clipped)
      //  t1: vpred 0.0 → clipped 0.8; (0−2)² = 4 > (0.8−2)² = 1.44 → 4 (not clipped)
      //  t2: masked
      // token-mean (0.64 + 4)/2 = 2.32 → × 0.5 = 1.16; clipfrac 1/2
      const out = leakFree(() => {
        const r = valueLoss({
          vpreds: t2([[1.5, 0, 9]]),
          returns: t2([[2, 2, 5]]),
          values: t2([[1, 1, 0]]),
          mask: t2([[1, 1, 0]]),
          clipRangeValue: 0.2,
        });
        return { loss: num(r.loss), clipfrac: r.clipfrac };
      });
      expect(out.loss).to.be.closeTo(1.16, 1e-5);
      expect(out.clipfrac).to.be.closeTo(0.5, 1e-6);
    });
  });

  describe('entropyBonus', () => {
    it('aggregates per-token entropy with the chosen mode', () => {
      const e = [
        [1, 2, 3],
        [4, 0, 0],
      ];
      const m = [
        [1, 1, 1],
        [1, 0, 0],
      ];
      // token-mean 10/4 = 2.5; seq-mean-token-mean (2 + 4)/2 = 3
      expect(leakFree(() => num(entropyBonus(t2(e), t2(m))))).to.be.closeTo(2.5, 1e-5);
      expect(leakFree(() => num(entropyBonus(t2(e), t2(m), 'seq-mean-token-mean')))).to.be.closeTo(3, 1e-5);
    });
  });
});
