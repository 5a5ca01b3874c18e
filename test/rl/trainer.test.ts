import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { generate } from '../../src/models/generate.js';
import { TinyLM, type TinyLMConfig } from '../../src/models/tinylm.js';
import { grpoOutcomeAdvantage } from '../../src/rl/advantages.js';
import { JointTrainer, type TrainSample } from '../../src/rl/trainer.js';

const small: TinyLMConfig = { vocabSize: 12, dModel: 16, nHeads: 2, nLayers: 1, context: 16 };
const snapshot = (m: TinyLM) =>
  Object.fromEntries(Object.entries(m.weights).map(([k, v]) => [k, Array.from(v.dataSync())]));
const changed = (a: Record<string, number[]>, b: Record<string, number[]>) =>
  Object.keys(a).filter((k) => a[k].some((x, i) => x !== b[k][i]));

function samplesFor(model: string, role: string, n: number, adv: number): TrainSample[] {
  return Array.from({ length: n }, (_, i) => ({
    model,
    role,
    prompt: [1, 3 + (i % 4)],
    completion: [5, 6, 2].slice(0, 1 + (i % 3)),
    oldLogProbs: [-2.5, -2.5, -2.5].slice(0, 1 + (i % 3)),
    advantages: i % 2 ? adv : -adv,
  }));
}

describe('JointTrainer', () => {
  before(async () => {
    await initBackend('cpu');
  });

  it('moves only the model whose samples it got, and every weight of that model', () => {
    const a = new TinyLM({ ...small, seed: 1 });
    const b = new TinyLM({ ...small, seed: 2 });
    const trainer = new JointTrainer({ a, b }, { lr: 1e-2 });
    const [a0, b0] = [snapshot(a), snapshot(b)];
    const report = trainer.step(samplesFor('a', 'solver', 6, 1));
    expect(Object.keys(report)).to.deep.equal(['a']);
    expect(report.a.skipped).to.equal(false);
    expect(changed(a0, snapshot(a)).sort()).to.deep.equal(Object.keys(a0).sort());
    expect(changed(b0, snapshot(b))).to.deep.equal([]);
    a.dispose();
    b.dispose();
  });

  it('steps two models together exactly as two separate trainers would, each with its own Adam', () => {
    // guards against: routing every sample to the first model, and one Adam shared by both models
    const pair = () => ({ a: new TinyLM({ ...small, seed: 1 }), b: new TinyLM({ ...small, seed: 2 }) });
    const [forA, forB] = [samplesFor('a', 'solver', 6, 1), samplesFor('b', 'critic', 5, 2)];
    const mixed = forA.flatMap((s, i) => (forB[i] ? [s, forB[i]] : [s])); // interleaved: grouping must sort them out
    const joint = pair();
    const alone = pair();
    const trainers = {
      joint: new JointTrainer(joint, { lr: 1e-2 }),
      a: new JointTrainer({ a: alone.a }, { lr: 1e-2 }),
      b: new JointTrainer({ b: alone.b }, { lr: 1e-2 }),
    };
    for (let step = 0; step < 2; step++) {
      // the second step reads each model's Adam moments from the first
      const report = trainers.joint.step(mixed);
      expect([report.a.samples, report.b.samples]).to.deep.equal([6, 5]);
      trainers.a.step(forA);
      trainers.b.step(forB);
      expect(snapshot(joint.a), `model a after step ${step + 1}`).to.deep.equal(snapshot(alone.a));
      expect(snapshot(joint.b), `model b after step ${step + 1}`).to.deep.equal(snapshot(alone.b));
    }
    expect(changed(snapshot(joint.a), snapshot(joint.b)).length).to.be.greaterThan(0);
    Object.values(trainers).forEach((t) => t.dispose());
    [joint, alone].forEach((p) => {
      p.a.dispose();
      p.b.dispose();
    });
  });

  it('setLearningRate scales the next Adam step (a schedule sets it each iteration)', () => {
    const delta = (lr: number | undefined) => {
      const m = new TinyLM({ ...small, seed: 5 });
      const trainer = new JointTrainer({ m }, { lr: 1e-2 });
      if (lr !== undefined) trainer.setLearningRate(lr);
      const w0 = snapshot(m);
      trainer.step(samplesFor('m', 'solver', 6, 1));
      const w1 = snapshot(m);
      m.dispose();
      trainer.dispose();
      return Object.keys(w0).flatMap((k) => w0[k].map((x, i) => w1[k][i] - x));
    };
    const [full, half, none] = [delta(undefined), delta(5e-3), delta(0)];
    // Adam's first step is lr · m̂ / (√v̂ + ε): linear in lr for the same gradients
    const big = full.map((d, i) => [d, half[i]]).filter(([d]) => Math.abs(d) > 1e-3);
    expect(big.length).to.be.greaterThan(10);
    big.forEach(([d, h]) => expect(h / d).to.be.closeTo(0.5, 1e-3));
    expect(none.every((d) => d === 0)).to.equal(true);
    expect(() => new JointTrainer({}, { lr: 1 }).setLearningRate(Number.NaN)).to.throw(/learning rate/);
  });

  it('sums the losses of every role on a shared model into one step', () => {
    const shared = new TinyLM({ ...small, seed: 3 });
    const trainer = new JointTrainer({ shared }, { lr: 1e-3, entropyCoef: 0.01 });
    const report = trainer.step([
      ...samplesFor('shared', 'proposer', 4, 1),
      ...samplesFor('shared', 'solver', 5, 2),
    ]).shared;
    expect(Object.keys(report.roleLoss).sort()).to.deep.equal(['proposer', 'solver']);
    expect(report.loss).to.be.closeTo(report.roleLoss.proposer + report.roleLoss.solver, 1e-5);
    expect(report.roleLoss.proposer).to.not.be.closeTo(report.roleLoss.solver, 1e-6);
    shared.dispose();
  });

  it('weighs each role of a shared model by its lossWeight: weight 0 steps as if its samples were absent', () => {
    const [a, b] = [new TinyLM({ ...small, seed: 3 }), new TinyLM({ ...small, seed: 3 })];
    const solver = samplesFor('m', 'solver', 5, 2);
    const muted = samplesFor('m', 'proposer', 4, 1).map((s) => ({ ...s, lossWeight: 0 }));
    const withMuted = new JointTrainer({ m: a }, { lr: 1e-3 }).step([...solver, ...muted]).m;
    new JointTrainer({ m: b }, { lr: 1e-3 }).step(solver);
    expect(withMuted.roleLoss.proposer).to.equal(0);
    // equal up to rounding: native products round by batch shape (a step of lr 1e-3 is far larger)
    const [sa, sb] = [snapshot(a), snapshot(b)];
    for (const k of Object.keys(sb)) sa[k].forEach((x, i) => expect(x, k).to.be.closeTo(sb[k][i], 1e-6)); // guards: lossWeight ignored
    const half = new JointTrainer({ m: new TinyLM({ ...small, seed: 3 }) }, { lr: 1e-3 }).step(
      samplesFor('m', 'proposer', 4, 1).map((s) => ({ ...s, lossWeight: 0.5 })),
    ).m;
    const full = new JointTrainer({ m: new TinyLM({ ...small, seed: 3 }) }, { lr: 1e-3 }).step(
      samplesFor('m', 'proposer', 4, 1),
    ).m;
    expect(half.roleLoss.proposer).to.be.closeTo(full.roleLoss.proposer / 2, 1e-6);
    a.dispose();
    b.dispose();
  });

  it('skips a step whose loss is not finite and leaves the parameters alone', () => {
    const m = new TinyLM({ ...small, seed: 4 });
    const trainer = new JointTrainer({ m });
    const before = snapshot(m);
    const bad = samplesFor('m', 'solver', 3, 1);
    bad[1] = { ...bad[1], advantages: NaN };
    const report = trainer.step(bad).m;
    expect(report.skipped).to.equal(true);
    expect(report.reason).to.match(/loss is NaN/);
    expect(changed(before, snapshot(m))).to.deep.equal([]);
    m.dispose();
  });

  it('trains the value head when samples carry returns and rollout values', () => {
    const m = new TinyLM({ ...small, valueHead: true, seed: 10 });
    const before = snapshot(m);
    const withValues = samplesFor('m', 'solver', 4, 1).map((s) => ({
      ...s,
      returns: s.completion.map(() => 1),
      oldValues: s.completion.map(() => 0),
    }));
    const r = new JointTrainer({ m }, { lr: 1e-2, valueCoef: 0.5 }).step(withValues).m;
    expect(r.valueLoss).to.be.greaterThan(0);
    expect(changed(before, snapshot(m))).to.include.members(['value.w', 'value.b']);
    const noValues = snapshot(m);
    new JointTrainer({ m }, { lr: 1e-2 }).step(samplesFor('m', 'solver', 4, 1));
    expect(changed(noValues, snapshot(m))).to.not.include('value.w'); // no returns: the value head is left alone
    expect(() => new JointTrainer({ m }).step([{ ...withValues[0], oldValues: undefined }])).to.throw(
      /returns without oldValues/,
    );
    m.dispose();
  });

  it('clips the global gradient norm', () => {
    // Adam's first step lr·g/(|g| + ε) barely depends on the gradient's scale, unless ε is far
    // above every |g|: then it is ≈ lr·g/ε, so clipping to a quarter of the norm quarters the step.
    // guards against: the trainer not clipping (e.g. passing Infinity or ignoring maxGradNorm)
    const step = (maxGradNorm: number) => {
      const m = new TinyLM({ ...small, seed: 5 });
      const w0 = snapshot(m);
      const report = new JointTrainer({ m }, { lr: 10, epsilon: 1e4, maxGradNorm }).step(
        samplesFor('m', 'solver', 4, 50),
      ).m;
      const w1 = snapshot(m);
      m.dispose();
      return { report, delta: Object.keys(w0).flatMap((k) => w0[k].map((x, i) => w1[k][i] - x)) };
    };
    const free = step(1e9);
    expect(free.report.gradNorm).to.be.greaterThan(1);
    const clipped = step(free.report.gradNorm / 4);
    expect(clipped.report.skipped).to.equal(false);
    expect(clipped.report.gradNorm).to.equal(free.report.gradNorm); // reported before clipping
    const big = free.delta.map((d, i) => [d, clipped.delta[i]]).filter(([d]) => Math.abs(d) > 1e-4);
    expect(big.length).to.be.greaterThan(10);
    big.forEach(([d, c]) => expect(c / d).to.be.closeTo(0.25, 1e-2));
  });

  it('rejects samples that name an unknown model or whose lengths disagree', () => {
    const m = new TinyLM({ ...small, seed: 6 });
    const trainer = new JointTrainer({ m });
    expect(() => trainer.step(samplesFor('other', 'solver', 1, 1))).to.throw(/sample 0 names model 'other'; known: m/);
    const s = samplesFor('m', 'solver', 2, 1);
    s[1] = { ...s[1], oldLogProbs: [] };
    expect(() => trainer.step(s)).to.throw(/sample 1 has 0 oldLogProbs/);
    m.dispose();
  });

  it('keeps tf.memory().numTensors flat over 50 steps after warm-up', () => {
    const m = new TinyLM({ ...small, seed: 7 });
    const trainer = new JointTrainer({ m }, { klCoef: 0.1, entropyCoef: 0.01, maxGradNorm: 1e-3 });
    const batch = samplesFor('m', 'solver', 4, 1).map((s) => ({
      ...s,
      refLogProbs: s.oldLogProbs.map((x) => x - 0.1),
    }));
    trainer.step(batch);
    const count = tf.memory().numTensors;
    for (let i = 0; i < 50; i++) trainer.step(batch);
    expect(tf.memory().numTensors).to.equal(count);
    m.dispose();
  });

  it('sees ratio 1 on fresh samples when it scores at the sampling temperature', () => {
    const m = new TinyLM({ ...small, seed: 9 });
    const prompts = Array.from({ length: 8 }, (_, i) => [1, 3 + (i % 3)]);
    const gens = generate(m, prompts, { maxNewTokens: 4, temperature: 0.8, seed: 1 });
    const batch = gens.map((g, i) => ({
      model: 'm',
      role: 'solver',
      prompt: prompts[i],
      completion: g.tokens,
      oldLogProbs: g.logProbs,
      advantages: i % 2 ? 1 : -1,
    }));
    const same = new JointTrainer({ m }, { temperature: 0.8, lr: 1e-9 }).step(batch).m;
    expect(Math.abs(same.ppoKl)).to.be.lessThan(1e-5);
    expect(same.clipfrac).to.equal(0);
    const other = new JointTrainer({ m }, { temperature: 1, lr: 1e-9 }).step(batch).m;
    expect(Math.abs(other.ppoKl)).to.be.greaterThan(1e-3);
    m.dispose();
  });

  it('raises the reward of a toy task under the policy-gradient loss', () => {
    // Reward: the share of generated tokens equal to 7. A random policy gets about 1/12.
    const m = new TinyLM({ ...small, seed: 8 });
    const trainer = new JointTrainer({ m }, { lr: 3e-2 });
    const curve: number[] = [];
    for (let it = 0; it < 30; it++) {
      const prompts = Array.from({ length: 16 }, (_, i) => [1, 3 + (i % 2)]);
      const gens = generate(m, prompts, { maxNewTokens: 3, temperature: 1, seed: it });
      const rewards = gens.map((g) => g.tokens.filter((t) => t === 7).length / g.tokens.length);
      curve.push(rewards.reduce((x, y) => x + y, 0) / rewards.length);
      const mask = gens.map((g) => g.tokens.map(() => 1));
      const { advantages } = grpoOutcomeAdvantage(
        gens.map((g, i) => g.tokens.map((_, t) => (t === 0 ? rewards[i] : 0))),
        mask,
        prompts.map((p) => p[1]),
      );
      trainer.step(
        gens.map((g, i) => ({
          model: 'm',
          role: 'solver',
          prompt: prompts[i],
          completion: g.tokens,
          oldLogProbs: g.logProbs,
          advantages: advantages[i],
        })),
      );
    }
    const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
    expect(mean(curve.slice(-5))).to.be.greaterThan(mean(curve.slice(0, 5)) + 0.4);
    m.dispose();
  });
});
