import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { refSyncDue, syncTargetModel } from '../../src/rl/ref-sync.js';

const vars = (a: number[], b: number[]) => ({ w: tf.variable(tf.tensor1d(a)), b: tf.variable(tf.tensor1d(b)) });

describe('reference sync (TRL sync_ref_model)', () => {
  it('mixes: reference <- (1 - alpha) * reference + alpha * policy', () => {
    const ref = vars([1, 2], [0]);
    const pol = vars([3, 6], [10]);
    syncTargetModel(ref, pol, 0.6);
    expect(Array.from(ref.w.dataSync())).to.deep.equal(
      Array.from(new Float32Array([0.4 * 1 + 0.6 * 3, 0.4 * 2 + 0.6 * 6])),
    );
    expect(ref.b.dataSync()[0]).to.be.closeTo(6, 1e-6);
    expect(Array.from(pol.w.dataSync())).to.deep.equal([3, 6]);
  });

  it('with alpha 1 copies the policy, and later policy updates leave the copy alone', () => {
    const ref = vars([1, 2], [0]);
    const pol = vars([3, 6], [10]);
    syncTargetModel(ref, pol, 1);
    pol.w.assign(tf.tensor1d([7, 7]));
    expect(Array.from(ref.w.dataSync())).to.deep.equal([3, 6]);
    expect(Array.from(ref.b.dataSync())).to.deep.equal([10]);
  });

  it('does not leak tensors', () => {
    const ref = vars([1, 2], [0]);
    const pol = vars([3, 6], [10]);
    const before = tf.memory().numTensors;
    syncTargetModel(ref, pol, 0.5);
    syncTargetModel(ref, pol, 1);
    expect(tf.memory().numTensors).to.equal(before);
  });

  it('rejects a bad alpha or weights that do not match', () => {
    expect(() => syncTargetModel(vars([1], [1]), vars([1], [1]), 0)).to.throw(/mixupAlpha/);
    expect(() => syncTargetModel(vars([1], [1]), vars([1], [1]), 1.5)).to.throw(/mixupAlpha/);
    expect(() => syncTargetModel(vars([1, 2], [1]), vars([1], [1]), 1)).to.throw(/weight w/);
    expect(() => syncTargetModel(vars([1], [1]), { ...vars([1], [1]), extra: tf.variable(tf.scalar(1)) }, 1)).to.throw(
      /different weights/,
    );
  });

  it('is due after every multiple of steps, as TRL checks global_step % steps', () => {
    const s = { steps: 3, mixupAlpha: 1 };
    expect([1, 2, 3, 4, 5, 6, 7].map((i) => refSyncDue(s, i))).to.deep.equal([
      false,
      false,
      true,
      false,
      false,
      true,
      false,
    ]);
    expect(refSyncDue(undefined, 3)).to.equal(false);
  });
});
