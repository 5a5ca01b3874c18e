import { expect } from 'chai';
import {
  broadcastOverTokens,
  gaeAdvantageReturn,
  grpoOutcomeAdvantage,
  reinforcePlusPlusAdvantage,
  reinforcePlusPlusBaselineAdvantage,
  rlooOutcomeAdvantage,
  trlGrpoAdvantage,
} from '../../src/rl/advantages.js';
import { RoleBaseline } from '../../src/rl/role-baseline.js';

function expectMatrixClose(actual: number[][], expected: number[][], tol = 1e-5): void {
  expect(actual.length).to.equal(expected.length);
  actual.forEach((row, i) => row.forEach((v, t) => expect(v, `[${i}][${t}]`).to.be.closeTo(expected[i][t], tol)));
}
function expectArrayClose(actual: number[], expected: number[], tol = 1e-5): void {
  expect(actual.length).to.equal(expected.length);
  actual.forEach((v, i) => expect(v, `[${i}]`).to.be.closeTo(expected[i], tol));
}

// Shared outcome batch. Row scores (sum of token rewards, mask ignored):
//   group a: rows 0,1,2 → scores 1, 0, 0   (row 1 has a masked second token)
//   group b: row 3      → score 0.7        (group of one)
//   group c: rows 4,5   → scores 1, 1      (all equal)
const rewards = [
  [0, 1],
  [0, 0],
  [0, 0],
  [0.2, 0.5],
  [1, 0],
  [0, 1],
];
const mask = [
  [1, 1],
  [1, 0],
  [1, 1],
  [1, 1],
  [1, 1],
  [1, 1],
];
const ids = ['a', 'a', 'a', 'b', 'c', 'c'];

describe('rl/advantages', () => {
  describe('grpoOutcomeAdvantage (verl)', () => {
    it('normalises by group mean and unbiased std; group of one → score/(1+ε); equal group → 0', () => {
      // a: mean 1/3; torch.std = sqrt(((2/3)² + 2·(1/3)²)/2) = sqrt(1/3) = 0.577350
      //    (2/3)/(0.577350 + 1e-6) = 1.154698, (−1/3)/(0.577351) = −0.577349
      // b: mean 0, std 1 → 0.7/(1 + 1e-6) = 0.6999993
      // c: std 0 → 0/1e-6 = 0
      const { advantages, returns } = grpoOutcomeAdvantage(rewards, mask, ids);
      expectMatrixClose(advantages, [
        [1.154698, 1.154698],
        [-0.577349, 0],
        [-0.577349, -0.577349],
        [0.6999993, 0.6999993],
        [0, 0],
        [0, 0],
      ]);
      expect(returns).to.equal(advantages); // verl returns (scores, scores)
    });

    it('Dr.GRPO (normAdvByStd=false) only subtracts the group mean', () => {
      // a: 1 − 1/3 = 2/3, 0 − 1/3 = −1/3; b: 0.7 − 0 (group of one keeps its score); c: 0.
      const { advantages } = grpoOutcomeAdvantage(rewards, mask, ids, { normAdvByStd: false });
      expectMatrixClose(advantages, [
        [2 / 3, 2 / 3],
        [-1 / 3, 0],
        [-1 / 3, -1 / 3],
        [0.7, 0.7],
        [0, 0],
        [0, 0],
      ]);
    });

    it('padded row: zero advantages, but its (masked) rewards still count in the group stats', () => {
      // verl sums all token rewards: scores 1 and 5 (the 5 sits under a 0 mask).
      // mean 3, std sqrt((4 + 4)/1) = 2.828427 → row 0: −2/2.828428 = −0.707107, second token masked.
      const { advantages } = grpoOutcomeAdvantage(
        [
          [1, 0],
          [0, 5],
        ],
        [
          [1, 0],
          [0, 0],
        ],
        ['g', 'g'],
      );
      expectMatrixClose(advantages, [
        [-0.707107, 0],
        [0, 0],
      ]);
    });

    it('rejects a group id list of the wrong length', () => {
      expect(() => grpoOutcomeAdvantage(rewards, mask, ['a'])).to.throw();
    });
  });

  describe('trlGrpoAdvantage (TRL)', () => {
    const seqRewards = [1, 0, 0, 0.7, 1, 1];

    it("'group' (default, = true): (r − mean)/(std + 1e-4); group of one → 0", () => {
      // a: (2/3)/(0.577350 + 1e-4) = 1.154501; (−1/3)/0.577450 = −0.577250
      // b: r − mean = 0 (TRL uses std 0 for one generation) → 0; c: 0/(0 + 1e-4) = 0
      const expected = [1.154501, -0.57725, -0.57725, 0, 0, 0];
      expectArrayClose(trlGrpoAdvantage(seqRewards, ids), expected);
      expectArrayClose(trlGrpoAdvantage(seqRewards, ids, true), expected);
    });

    it("'batch': group mean, batch std", () => {
      // batch mean 3.7/6 = 0.616667; Σ dev² = 1.208333; std = sqrt(1.208333/5) = 0.491596
      // a0: (2/3)/(0.491596 + 1e-4) = 0.666667/0.491696 = 1.355851; a1: (−1/3)/0.491696 = −0.677926
      expectArrayClose(trlGrpoAdvantage(seqRewards, ids, 'batch'), [1.355851, -0.677926, -0.677926, 0, 0, 0]);
    });

    it('rejects an unknown scale_rewards value', () => {
      expect(() => trlGrpoAdvantage([1, 0], ['a', 'a'], 'std' as 'group')).to.throw(/scale_rewards/);
    });

    it("'none' (= false): only the group mean is subtracted", () => {
      const expected = [2 / 3, -1 / 3, -1 / 3, 0, 0, 0];
      expectArrayClose(trlGrpoAdvantage(seqRewards, ids, 'none'), expected);
      expectArrayClose(trlGrpoAdvantage(seqRewards, ids, false), expected);
    });

    it('broadcastOverTokens spreads per-sequence values over the mask', () => {
      expect(
        broadcastOverTokens(
          [2, -1],
          [
            [1, 1, 0],
            [1, 0, 0],
          ],
        ),
      ).to.deep.equal([
        [2, 2, 0],
        [-1, -0, -0],
      ]);
    });
  });

  describe('rlooOutcomeAdvantage (verl)', () => {
    it('leave-one-out baseline; group of one keeps its raw score', () => {
      // a (n=3): 1·3/2 − (1/3)·3/2 = 1 (= 1 − mean(0,0)); 0 − (1/3)·3/2 = −0.5 (= 0 − mean(1,0))
      // b: single → 0.7 unchanged; c: 1·2 − 1·2 = 0
      const { advantages } = rlooOutcomeAdvantage(rewards, mask, ids);
      expectMatrixClose(advantages, [
        [1, 1],
        [-0.5, 0],
        [-0.5, -0.5],
        [0.7, 0.7],
        [0, 0],
        [0, 0],
      ]);
    });
  });

  describe('reinforcePlusPlusBaselineAdvantage (verl)', () => {
    it('subtracts the group mean, then whitens over all masked tokens', () => {
      // scores: x → 1, 0 (mean 0.5 → 0.5, −0.5); y → 1 (group of one, mean 0 → 1); z → 0, padded row.
      // masked tokens: 0.5, 0.5 (row 0), −0.5 (row 1), 1 (row 2): mean 1.5/4 = 0.375
      // dev²: 0.015625·2 + 0.765625 + 0.390625 = 1.1875; unbiased var 1.1875/3 = 0.395833; std 0.629153
      // 0.125/0.629153 = 0.198680; −0.875/0.629153 = −1.390759; 0.625/0.629153 = 0.993399; ×mask
      const { advantages } = reinforcePlusPlusBaselineAdvantage(
        [
          [0, 1],
          [0, 0],
          [1, 0],
          [0, 0],
        ],
        [
          [1, 1],
          [1, 0],
          [1, 0],
          [0, 0],
        ],
        ['x', 'x', 'y', 'z'],
      );
      expectMatrixClose(advantages, [
        [0.19868, 0.19868],
        [-1.390759, 0],
        [0.993399, 0],
        [0, 0],
      ]);
    });
  });

  describe('reinforcePlusPlusAdvantage (verl)', () => {
    it('discounted returns reset after EOS, whitened, times mask', () => {
      // γ = 0.5. Row 0: returns 0.25, 0.5, 1. Row 1 (last token masked):
      //   t2: running = 5 → returns[2] = 5, then running·0 = 0; t1: 1; t0: 0 + 0.5·1 = 0.5.
      // masked returns 0.25, 0.5, 1, 0.5, 1: mean 0.65; Σ dev² = 0.45; var 0.45/4 = 0.1125; std 0.335410
      // e.g. (0.25 − 0.65)/0.335410 = −1.192570
      const { advantages, returns } = reinforcePlusPlusAdvantage(
        [
          [0, 0, 1],
          [0, 1, 5],
        ],
        [
          [1, 1, 1],
          [1, 1, 0],
        ],
        0.5,
      );
      expectMatrixClose(returns, [
        [0.25, 0.5, 1],
        [0.5, 1, 5],
      ]);
      expectMatrixClose(advantages, [
        [-1.19257, -0.447214, 1.043498],
        [-0.447214, 1.043498, 0],
      ]);
    });
  });

  describe('gaeAdvantageReturn (verl, mask-aware loop)', () => {
    it('3 tokens with a padded tail: skips the pad, whitens, leaves the pad unmasked', () => {
      // r = [0, 1, 0], V = [0.5, 0.5, 0.7], mask = [1, 1, 0], γ = 0.9, λ = 0.8 (γλ = 0.72)
      // t2 (pad): δ = 0 − 0.7, but mask 0 → next stays 0, gae stays 0 → A2 = 0
      // t1: δ = 1 + 0.9·0 − 0.5 = 0.5; gae = 0.5 + 0.72·0 = 0.5; next = 0.5
      // t0: δ = 0 + 0.9·0.5 − 0.5 = −0.05; gae = −0.05 + 0.72·0.5 = 0.31
      // returns = A + V = [0.81, 1.0, 0.7]
      // whiten over {0.31, 0.5}: mean 0.405, unbiased var 2·0.095²·2/2 = 0.01805, std 0.134350
      //   → ±0.095/0.134350 = ±0.707107; pad: (0 − 0.405)/0.134350 = −3.014515
      // (The older unmasked verl loop would give raw A = [0.4007, 0.626, −0.7].)
      const { advantages, returns } = gaeAdvantageReturn([[0, 1, 0]], [[0.5, 0.5, 0.7]], [[1, 1, 0]], 0.9, 0.8);
      expectMatrixClose(returns, [[0.81, 1.0, 0.7]]);
      expectMatrixClose(advantages, [[-0.707107, 0.707107, -3.014515]]);
    });

    it('γ = λ = 1, constant advantages: verl epsilons leave a 3.3e-5 residue, not 0', () => {
      // r = [0, 0, 1], V = [0, 0, 0] → raw A = [1, 1, 1], returns [1, 1, 1].
      // mean = 3/(3 + 1e-8) = 1 − 3.3e-9; var ≈ 0, so (1 − mean)/sqrt(0 + 1e-8) = 3.3e-9/1e-4 = 3.33e-5.
      const { advantages, returns } = gaeAdvantageReturn([[0, 0, 1]], [[0, 0, 0]], [[1, 1, 1]], 1, 1);
      expectMatrixClose(returns, [[1, 1, 1]]);
      expectMatrixClose(advantages, [[3.3333e-5, 3.3333e-5, 3.3333e-5]], 1e-8);
    });
  });

  describe('RoleBaseline (SPIRAL RAE)', () => {
    it('returns reward minus the pre-update baseline, then updates the EMA', () => {
      const rb = new RoleBaseline(0.9);
      // kuhn:0, r = 1: baseline 0 → adv 1; baseline ← 0.9·0 + 0.1·1 = 0.1
      expect(rb.advantage('kuhn:0', 1)).to.be.closeTo(1, 1e-12);
      expect(rb.baseline('kuhn:0')).to.be.closeTo(0.1, 1e-12);
      // kuhn:0, r = −1: adv −1 − 0.1 = −1.1; baseline ← 0.09 − 0.1 = −0.01
      expect(rb.advantage('kuhn:0', -1)).to.be.closeTo(-1.1, 1e-12);
      expect(rb.baseline('kuhn:0')).to.be.closeTo(-0.01, 1e-12);
      // another role is independent and starts at 0
      expect(rb.advantage('kuhn:1', -1)).to.be.closeTo(-1, 1e-12);
      expect(rb.baseline('kuhn:1')).to.be.closeTo(-0.1, 1e-12);
    });

    it('round-trips through JSON and continues identically', () => {
      const rb = new RoleBaseline(0.9);
      rb.advantage('ttt:0', 1);
      const restored = RoleBaseline.fromJSON(JSON.parse(JSON.stringify(rb)));
      expect(restored.decay).to.equal(0.9);
      // baseline 0.1 → adv 0.5 − 0.1 = 0.4 in both
      expect(restored.advantage('ttt:0', 0.5)).to.be.closeTo(rb.advantage('ttt:0', 0.5), 1e-12);
      expect(restored.toJSON()).to.deep.equal(rb.toJSON());
    });

    it('defaults to SPIRAL decay 0.95 and rejects decay outside (0, 1)', () => {
      expect(new RoleBaseline().decay).to.equal(0.95);
      expect(() => new RoleBaseline(1)).to.throw();
      expect(() => new RoleBaseline(0)).to.throw();
    });
  });
});
