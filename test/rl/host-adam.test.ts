import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { HostAdam } from '../../src/rl/host-adam.js';
import { encodeOptimizerState, restoreOptimizerState } from '../../src/rl/optimizer-state.js';
import { TEST_BACKEND } from '../needs.js';

/** Four Adam steps on fresh variables, the rate changing between steps; the variables after each step. */
function steps(
  opt: tf.Optimizer,
  tag: string,
  from = 0,
  to = 4,
  vars?: tf.Variable[],
): { vars: tf.Variable[]; seen: number[][] } {
  const shapes = [[37], [5, 8], [3]];
  vars ??= shapes.map((s, i) => tf.variable(tf.randomNormal(s, 0, 1, 'float32', 10 + i), true, `${tag}/w${i}`));
  const seen: number[][] = [];
  for (let t = from; t < to; t++) {
    (opt as unknown as { learningRate: number }).learningRate = 0.01 * (t + 1);
    const grads: tf.NamedTensorMap = {};
    vars.forEach((v, i) => {
      grads[v.name] = tf.randomNormal(v.shape, 0, 3, 'float32', 100 * t + i + 1);
    });
    opt.applyGradients(grads);
    tf.dispose(Object.values(grads));
    seen.push(vars.flatMap((v) => Array.from(v.dataSync())));
  }
  return { vars, seen };
}

describe('HostAdam (moments outside the heap)', () => {
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  it("is tf.train.adam bit for bit: every step's values and the moments, under a changing rate", async () => {
    const ref = tf.train.adam(0.01, 0.9, 0.999, 1e-8),
      host = new HostAdam(0.01, 0.9, 0.999, 1e-8);
    const a = steps(ref, 'href'),
      b = steps(host, 'hhost');
    expect(b.seen).to.deep.equal(a.seen);
    expect(b.seen[3]).to.not.deep.equal(b.seen[0]);
    const theirs = await ref.getWeights(),
      mine = await host.getWeights();
    expect(mine.map((w) => w.name.replace('hhost', ''))).to.deep.equal(theirs.map((w) => w.name.replace('href', '')));
    for (let i = 0; i < theirs.length; i++)
      expect(Array.from(mine[i].tensor.dataSync())).to.deep.equal(Array.from(theirs[i].tensor.dataSync()));
    tf.dispose([...a.vars, ...b.vars, ...mine.map((w) => w.tensor)]);
    ref.dispose();
  });

  it('is the same bit for bit on a variable longer than its copy chunk (2^20 values)', () => {
    const n = (1 << 20) + 5;
    const a = tf.variable(tf.randomNormal([n], 0, 1, 'float32', 5), true, 'hlong/a'),
      b = tf.variable(a.clone(), true, 'hlong/b');
    const ref: tf.Optimizer = tf.train.adam(0.01),
      host = new HostAdam(0.01);
    for (let t = 0; t < 2; t++) {
      const g = tf.randomNormal([n], 0, 1, 'float32', 50 + t);
      ref.applyGradients({ 'hlong/a': g } as tf.NamedTensorMap);
      host.applyGradients({ 'hlong/b': g } as tf.NamedTensorMap);
      g.dispose();
    }
    const bytes = (v: tf.Variable) => Buffer.from((v.dataSync() as Float32Array).buffer);
    expect(bytes(b).equals(bytes(a))).to.equal(true);
    expect(
      bytes(b).equals(Buffer.from((tf.randomNormal([n], 0, 1, 'float32', 5).dataSync() as Float32Array).buffer)),
    ).to.equal(false);
    tf.dispose([a, b]);
    ref.dispose();
    host.dispose();
  });

  it('saves to checkpoint attachments without tensors and resumes the same run step for step', async () => {
    const whole = steps(new HostAdam(0.01), 'hwhole');
    const first = new HostAdam(0.01);
    const part = steps(first, 'hpart', 0, 2);
    const before = tf.memory().numTensors;
    const encoded = await encodeOptimizerState(first);
    expect(tf.memory().numTensors).to.equal(before);
    // as a checkpoint reads its attachments back: bytes
    const saved = Object.fromEntries(
      Object.entries(encoded).map(([k, v]) => [k, typeof v === 'string' ? new TextEncoder().encode(v) : v]),
    );
    const resumed = new HostAdam(0.01);
    await restoreOptimizerState('ckpt', saved, resumed);
    expect(resumed.iterations).to.equal(2);
    const rest = steps(resumed, 'hpart', 2, 4, part.vars);
    expect(rest.seen).to.deep.equal(whole.seen.slice(2));
    // a state of another size is refused with the checkpoint's name
    const bad = { ...saved, 'optimizer.bin': saved['optimizer.bin'].slice(4) };
    let error = '';
    await restoreOptimizerState('ckpt', bad, new HostAdam(0.01)).catch((e: Error) => {
      error = e.message;
    });
    expect(error).to.match(/ckpt.*optimizer/);
    tf.dispose([...whole.vars, ...part.vars]);
  });
});
