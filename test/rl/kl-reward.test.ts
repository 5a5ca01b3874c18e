import { expect } from 'chai';
import { applyKlPenalty, KlController } from '../../src/rl/kl-reward.js';

describe('rl/kl-reward (verl apply_kl_penalty and its controllers)', () => {
  const old = [
    [-1, -2, 0],
    [-0.5, 0, 0],
  ];
  const ref = [
    [-1.5, -1, 0],
    [-1, 0, 0],
  ];
  const mask = [
    [1, 1, 0],
    [1, 0, 0],
  ];
  const scores = [
    [0, 1, 0],
    [2, 0, 0],
  ];

  it('subtracts beta times the masked k1 KL per token and reports the mean per-sequence KL', () => {
    const ctrl = new KlController({ type: 'fixed', coef: 0.1 });
    const r = applyKlPenalty(scores, old, ref, mask, 'kl', ctrl);
    // kld = (old - ref) * mask = [[0.5, -1, 0], [0.5, 0, 0]]
    expect(r.rewards[0][0]).to.be.closeTo(-0.05, 1e-12);
    expect(r.rewards[0][1]).to.be.closeTo(1.1, 1e-12);
    expect(r.rewards[0][2]).to.equal(0);
    expect(r.rewards[1][0]).to.be.closeTo(1.95, 1e-12);
    // row means (-0.5 / 2, 0.5 / 1), then their mean
    expect(r.currentKl).to.be.closeTo((-0.25 + 0.5) / 2, 1e-8);
    expect(r.beta).to.equal(0.1);
    expect(ctrl.value).to.equal(0.1); // fixed never moves
  });

  it('the adaptive controller moves by the clipped proportional error times n_steps / horizon', () => {
    const ctrl = new KlController({ type: 'adaptive', coef: 0.2, targetKl: 0.1, horizon: 100 });
    ctrl.update(0.15, 10); // error clip(0.5) = 0.2 -> value *= 1 + 0.2 * 10 / 100
    expect(ctrl.value).to.be.closeTo(0.2 * 1.02, 1e-12);
    ctrl.update(0.09, 50); // error -0.1 -> *= 1 - 0.05
    expect(ctrl.value).to.be.closeTo(0.2 * 1.02 * 0.95, 1e-12);
    const r = applyKlPenalty(scores, old, ref, mask, 'kl', ctrl);
    expect(r.beta).to.be.closeTo(0.2 * 1.02 * 0.95, 1e-12); // the beta used is the one before this batch's update
  });

  it('an adaptive controller without a target or horizon is refused', () => {
    expect(() => new KlController({ type: 'adaptive', coef: 0.1 })).to.throw(/targetKl > 0 and horizon > 0/);
  });
});
