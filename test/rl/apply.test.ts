import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { applyClipped } from '../../src/rl/apply.js';

// Plain SGD moves each variable by exactly -lr * (applied gradient), so the clipping can be
// read off the parameters. Gradients [3, 0] and [[4]] have global norm sqrt(9 + 16) = 5.
describe('rl/applyClipped', () => {
  const lr = 0.1;
  let a: tf.Variable;
  let b: tf.Variable;
  let sgd: tf.Optimizer;

  before(async () => {
    await tf.setBackend('cpu');
  });
  beforeEach(() => {
    a = tf.variable(tf.tensor1d([1, 2]), true, 'apply-test/a');
    b = tf.variable(tf.tensor2d([[3]]), true, 'apply-test/b');
    sgd = tf.train.sgd(lr);
  });
  afterEach(() => {
    tf.dispose([a, b]);
    sgd.dispose();
  });

  const grads = (ga: number[], gb: number): tf.NamedTensorMap => ({
    [a.name]: tf.tensor1d(ga),
    [b.name]: tf.tensor2d([[gb]]),
  });
  const values = () => [...Array.from(a.dataSync()), ...Array.from(b.dataSync())];
  const expectClose = (got: number[], want: number[]) =>
    got.forEach((x, i) => expect(x, `entry ${i}`).to.be.closeTo(want[i], 1e-6));

  it('above maxNorm: scales every gradient by maxNorm / norm', () => {
    // guards against: clipping switched off, and a norm computed without the sqrt (25 instead of 5)
    const r = applyClipped(sgd, grads([3, 0], 4), 0.5, 1);
    expect(r).to.deep.include({ skipped: false });
    expect(r.gradNorm).to.be.closeTo(5, 1e-5);
    const s = 1 / (5 + 1e-6); // torch's clip_grad_norm_ coefficient
    expectClose(values(), [1 - lr * 3 * s, 2 - lr * 0 * s, 3 - lr * 4 * s]);
  });

  it('below maxNorm: applies the gradients unchanged', () => {
    // guards against: clipping (or scaling) when the norm is already within bounds
    const r = applyClipped(sgd, grads([3, 0], 4), 0.5, 10);
    expect(r.gradNorm).to.be.closeTo(5, 1e-5);
    expectClose(values(), [1 - lr * 3, 2, 3 - lr * 4]);
  });

  it('a non-finite loss or gradient skips the step, says why and moves nothing', () => {
    // guards against: applying a step whose loss or gradient norm is NaN / Infinity
    const nanLoss = applyClipped(sgd, grads([3, 0], 4), NaN, 1);
    expect(nanLoss).to.deep.include({ skipped: true, reason: 'loss is NaN' });
    const infGrad = applyClipped(sgd, grads([3, Infinity], 4), 0.5, 1);
    expect(infGrad).to.deep.include({ skipped: true, reason: 'gradient norm is Infinity' });
    expect(values()).to.deep.equal([1, 2, 3]);
  });

  it('disposes the gradients and the scaled copies', () => {
    // guards against: leaking the gradients or their clipped copies on any path
    for (const [loss, maxNorm] of [
      [0.5, 1],
      [0.5, 10],
      [NaN, 1],
    ]) {
      const before = tf.memory().numTensors;
      applyClipped(sgd, grads([3, 0], 4), loss, maxNorm);
      expect(tf.memory().numTensors, `loss ${loss}, maxNorm ${maxNorm}`).to.equal(before);
    }
  });
});
