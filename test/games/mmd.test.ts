import { expect } from 'chai';
import { allActionsAdvantages, mmdStep } from '../../src/games/mmd.js';

const softmax = (z: number[]) => {
  const top = Math.max(...z);
  const e = z.map((x) => Math.exp(x - top));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
};

describe('games/mmd: the mirror-descent step and its all-actions gradient', () => {
  const probs = [0.5, 0.3, 0.2];
  const logMagnet = [Math.log(0.2), Math.log(0.3), Math.log(0.5)];
  const q = [1, -0.5, 0.25];

  it('with no magnet weight the step is Hedge: π(a) exp(η q(a)), normalised', () => {
    const hedge = probs.map((p, i) => p * Math.exp(0.7 * q[i]));
    const z = hedge.reduce((a, b) => a + b, 0);
    mmdStep(probs, logMagnet, q, 0, 0.7).forEach((p, i) => expect(p).to.be.closeTo(hedge[i] / z, 1e-12));
  });

  it('the step is [π ρ^(αη) exp(η q)]^(1/(1+αη)), and a heavy magnet pulls the policy to it', () => {
    const [alpha, eta] = [0.4, 0.5];
    const raw = probs.map(
      (p, i) => (p * Math.exp(alpha * eta * logMagnet[i]) * Math.exp(eta * q[i])) ** (1 / (1 + alpha * eta)),
    );
    const z = raw.reduce((a, b) => a + b, 0);
    mmdStep(probs, logMagnet, q, alpha, eta).forEach((p, i) => expect(p).to.be.closeTo(raw[i] / z, 1e-12));
    mmdStep(probs, logMagnet, q, 1e6, 1).forEach((p, i) => expect(p).to.be.closeTo(Math.exp(logMagnet[i]), 1e-4));
  });

  it('the all-actions advantages are the logit gradient of Σ π q - α KL(π ‖ ρ), and sum to zero', () => {
    const alpha = 0.3;
    const logits = probs.map(Math.log);
    const objective = (z: number[]) => {
      const p = softmax(z);
      return p.reduce((t, x, i) => t + x * q[i] - alpha * x * (Math.log(x) - logMagnet[i]), 0);
    };
    const adv = allActionsAdvantages(probs, logMagnet, q, alpha);
    expect(adv.reduce((a, b) => a + b, 0)).to.be.closeTo(0, 1e-12);
    const h = 1e-6;
    logits.forEach((_, b) => {
      const up = logits.map((z, i) => (i === b ? z + h : z)),
        down = logits.map((z, i) => (i === b ? z - h : z));
      expect(adv[b], `logit ${b}`).to.be.closeTo((objective(up) - objective(down)) / (2 * h), 1e-7);
    });
  });
});
