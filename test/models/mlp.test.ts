import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { MlpPolicy, mlpWeightShapes, validateMlpConfig, type MlpConfig } from '../../src/models/mlp.js';
import type { PolicyInput } from '../../src/models/types.js';
import { Rng } from '../../src/util/rng.js';

const base: MlpConfig = { inputSize: 4, hiddenSizes: [8, 6], numActions: 3, valueHead: true, seed: 1 };

function randomFeatures(rows: number, n: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: rows }, () => Array.from({ length: n }, () => rng.normal()));
}

function weightsOf(m: MlpPolicy): Record<string, number[]> {
  return Object.fromEntries(Object.entries(m.weights).map(([k, v]) => [k, Array.from(v.dataSync())]));
}

describe('MlpPolicy', () => {
  let startTensors = 0;
  before(async () => {
    await tf.setBackend('cpu');
    startTensors = tf.memory().numTensors;
  });
  afterEach(function () {
    expect(tf.memory().numTensors, `tensors left behind by "${this.currentTest?.title}"`).to.equal(startTensors);
  });

  it('names every weight with its shape', () => {
    expect(mlpWeightShapes(base)).to.deep.equal({
      'l0.w': [4, 8],
      'l0.b': [8],
      'l1.w': [8, 6],
      'l1.b': [6],
      'pi.w': [6, 3],
      'pi.b': [3],
      'value.w': [6, 1],
      'value.b': [1],
    });
    expect(mlpWeightShapes({ inputSize: 2, hiddenSizes: [], numActions: 5 })).to.deep.equal({
      'pi.w': [2, 5],
      'pi.b': [5],
    });
  });

  it('produces logits [B, A], values [B] and a [B, 1] scored batch', () => {
    const m = new MlpPolicy(base);
    const x = tf.tensor2d(randomFeatures(5, 4, 0));
    const logits = m.logits(x);
    const values = m.values(x);
    expect(logits.shape).to.deep.equal([5, 3]);
    expect(values.shape).to.deep.equal([5]);
    const s = m.score([
      { prompt: [1, 2, 3, 4], completion: [0] },
      { prompt: [0, 0, 0, 1], completion: [2] },
    ]);
    for (const t of [s.logProbs, s.entropy, s.mask, s.values!]) expect(t.shape).to.deep.equal([2, 1]);
    expect(Array.from(s.mask.dataSync())).to.deep.equal([1, 1]);
    expect(m.variables()).to.have.length(8);
    tf.dispose([x, logits, values, s.logProbs, s.entropy, s.mask, s.values!]);
    m.dispose();
  });

  it('uses tanh by default and relu when asked, with no value head unless asked', () => {
    const x = tf.tensor2d(randomFeatures(3, 4, 2));
    const cfg = { inputSize: 4, hiddenSizes: [5], numActions: 2, seed: 3 };
    const tanh = new MlpPolicy(cfg);
    const relu = new MlpPolicy({ ...cfg, activation: 'relu' });
    const h1 = tanh.hidden(x);
    const h2 = relu.hidden(x);
    const pre = tf.tidy(() => x.matMul(tanh.weights['l0.w']).add(tanh.weights['l0.b']));
    const pa = pre.arraySync() as number[][];
    (h1.arraySync() as number[][]).forEach((r, b) =>
      r.forEach((v, j) => expect(v).to.be.closeTo(Math.tanh(pa[b][j]), 1e-5)),
    );
    (h2.arraySync() as number[][]).forEach((r, b) =>
      r.forEach((v, j) => expect(v).to.be.closeTo(Math.max(0, pa[b][j]), 1e-5)),
    );
    expect(tanh.hasValueHead).to.equal(false);
    expect(() => tanh.values(x)).to.throw(/no value head/);
    const r = tanh.act([[1, 2, 3, 4]], { seed: 0 });
    expect(r).to.not.have.property('values');
    tf.dispose([x, h1, h2, pre]);
    tanh.dispose();
    relu.dispose();
  });

  it('initialises identically from the same seed and differently from another', () => {
    const a = new MlpPolicy(base);
    const b = new MlpPolicy(base);
    const c = new MlpPolicy({ ...base, seed: 2 });
    const [wa, wb, wc] = [weightsOf(a), weightsOf(b), weightsOf(c)];
    expect(wa).to.deep.equal(wb);
    expect(wa['l0.w']).to.not.deep.equal(wc['l0.w']);
    expect(wa['pi.w']).to.not.deep.equal(wc['pi.w']);
    expect(new Set(a.variables().map((v) => v.name)).size).to.equal(8);
    expect(a.variables()[0].name).to.not.equal(b.variables()[0].name);
    // the policy head starts small (std 0.01), so the first policy is near uniform
    expect(Math.max(...wa['pi.w'].map(Math.abs))).to.be.below(0.05);
    for (const m of [a, b, c]) m.dispose();
  });

  it('loads weights from `initial`, keeps the rest seeded, and rejects a wrong shape', () => {
    const zeros = { 'pi.w': tf.zeros([6, 3]), 'pi.b': tf.zeros([3]) };
    const seeded = new MlpPolicy(base);
    const loaded = new MlpPolicy(base, zeros);
    const [ws, wl] = [weightsOf(seeded), weightsOf(loaded)];
    expect(wl['pi.w'].every((v) => v === 0)).to.equal(true);
    expect(wl['l0.w']).to.deep.equal(ws['l0.w']);
    expect(wl['value.w']).to.deep.equal(ws['value.w']);
    const bad = tf.zeros([5, 3]);
    expect(() => new MlpPolicy(base, { 'pi.w': bad })).to.throw(/pi\.w.*\[5,3\].*\[6,3\]/);
    tf.dispose([zeros['pi.w'], zeros['pi.b'], bad]);
    seeded.dispose();
    loaded.dispose();
  });

  it('scores log-probs equal to a hand-computed log-softmax of the logits, at any temperature', () => {
    const m = new MlpPolicy(base);
    const feats = randomFeatures(6, 4, 4);
    const actions = [0, 1, 2, 2, 1, 0];
    const logits = tf.tidy(() => m.logits(tf.tensor2d(feats)).arraySync() as number[][]);
    for (const T of [1, 0.7]) {
      const s = m.score(
        feats.map((f, b) => ({ prompt: f, completion: [actions[b]] })),
        T,
      );
      const got = s.logProbs.arraySync() as number[][];
      logits.forEach((row, b) => {
        const z = row.map((v) => v / T);
        const max = Math.max(...z);
        const logZ = max + Math.log(z.reduce((acc, v) => acc + Math.exp(v - max), 0));
        expect(got[b][0]).to.be.closeTo(z[actions[b]] - logZ, 1e-5);
      });
      tf.dispose([s.logProbs, s.entropy, s.mask, s.values!]);
    }
    m.dispose();
  });

  it('has entropy log(A) when the policy head is zero', () => {
    const A = 5;
    const zeros = { 'pi.w': tf.zeros([3, A]), 'pi.b': tf.zeros([A]) };
    const m = new MlpPolicy({ inputSize: 2, hiddenSizes: [3], numActions: A }, zeros);
    const s = m.score([
      { prompt: [0.3, -1], completion: [4] },
      { prompt: [2, 1], completion: [0] },
    ]);
    for (const e of s.entropy.dataSync()) expect(e).to.be.closeTo(Math.log(A), 1e-5);
    for (const lp of s.logProbs.dataSync()) expect(lp).to.be.closeTo(-Math.log(A), 1e-5);
    tf.dispose([s.logProbs, s.entropy, s.mask, zeros['pi.w'], zeros['pi.b']]);
    m.dispose();
  });

  it('never samples an illegal action and reports log-probs under the masked distribution', () => {
    const zeros = { 'pi.w': tf.zeros([4, 4]), 'pi.b': tf.zeros([4]) };
    const m = new MlpPolicy({ inputSize: 2, hiddenSizes: [4], numActions: 4, seed: 9 }, zeros);
    const legal = [
      [true, false, true, false],
      [false, false, false, true],
      [false, true, true, true],
    ];
    const feats = randomFeatures(3, 2, 5);
    const seen = legal.map(() => new Set<number>());
    for (let i = 0; i < 300; i++) {
      const r = m.act(feats, { legal, seed: i });
      r.actions.forEach((a, b) => {
        expect(legal[b][a], `row ${b} drew ${a}`).to.equal(true);
        const nLegal = legal[b].filter(Boolean).length;
        expect(r.logProbs[b]).to.be.closeTo(-Math.log(nLegal), 1e-5); // uniform over legal actions
        seen[b].add(a);
      });
    }
    expect(seen.map((s) => s.size)).to.deep.equal([2, 1, 3]); // every legal action does occur
    tf.dispose([zeros['pi.w'], zeros['pi.b']]);
    m.dispose();
  });

  it("scores with the acting row's legal mask, so PPO ratios are 1 on the batch that acted", () => {
    const m = new MlpPolicy({ inputSize: 3, hiddenSizes: [8], numActions: 4, seed: 4 });
    const legal = [
      [true, false, true, false],
      [false, true, true, true],
      [true, true, true, true],
    ];
    const feats = randomFeatures(3, 3, 6);
    for (const temperature of [1, 0.7]) {
      const r = m.act(feats, { legal, seed: 3, temperature });
      const rows = feats.map((f, b) => ({ prompt: f, completion: [r.actions[b]], legal: legal[b] }));
      const scored = tf.tidy(() => Array.from(m.score(rows, temperature).logProbs.dataSync()));
      scored.forEach((lp, b) => expect(lp, `row ${b}`).to.be.closeTo(r.logProbs[b], 1e-5));
      // without the mask the masked rows score lower: the illegal actions take probability mass
      const unmasked = tf.tidy(() =>
        Array.from(
          m
            .score(
              rows.map(({ legal: _, ...x }) => x),
              temperature,
            )
            .logProbs.dataSync(),
        ),
      );
      expect(unmasked[0]).to.be.below(scored[0] - 1e-3);
      expect(unmasked[2]).to.be.closeTo(scored[2], 1e-6); // all legal: no difference
      const entropy = tf.tidy(() => Array.from(m.score(rows, temperature).entropy.dataSync()));
      expect(entropy[0]).to.be.at.most(Math.log(2) + 1e-6); // two legal actions at most log 2
    }
    expect(() =>
      tf.tidy(() => {
        m.score([{ prompt: feats[0], completion: [1], legal: legal[0] }]);
      }),
    ).to.throw(/action 1, which its legal mask forbids/);
    m.dispose();
  });

  it('is reproducible from a seed and greedy at temperature 0', () => {
    const m = new MlpPolicy(base);
    const feats = randomFeatures(20, 4, 6);
    const a = m.act(feats, { seed: 42 });
    const b = m.act(feats, { seed: 42 });
    expect(a).to.deep.equal(b);
    expect(a.values).to.have.length(20);
    const greedy = m.act(feats, { temperature: 0 });
    const logits = tf.tidy(() => m.logits(tf.tensor2d(feats)).arraySync() as number[][]);
    expect(greedy.actions).to.deep.equal(logits.map((r) => r.indexOf(Math.max(...r))));
    // without a seed, two fresh models with one config still agree on their first call
    const c = new MlpPolicy(base);
    const d = new MlpPolicy(base);
    expect(c.act(feats).actions).to.deep.equal(d.act(feats).actions);
    for (const x of [m, c, d]) x.dispose();
  });

  it('throws errors that name the bad field or row', () => {
    const m = new MlpPolicy(base);
    expect(() =>
      m.act([
        [1, 2, 3, 4],
        [1, 2, 3],
      ]),
    ).to.throw(/row 1 has 3 features, expected inputSize 4/);
    expect(() =>
      m.score([
        { prompt: [1, 2, 3, 4], completion: [0] },
        { prompt: [1], completion: [0] },
      ]),
    ).to.throw(/row 1 has 1 features/);
    expect(() =>
      m.score([
        { prompt: [1, 2, 3, 4], completion: [0] },
        { prompt: [1, 2, 3, 4], completion: [0, 1] },
      ]),
    ).to.throw(/row 1 completion must be exactly one action, got 2/);
    expect(() => m.score([{ prompt: [1, 2, 3, 4], completion: [3] }])).to.throw(/row 0 action 3/);
    expect(() => m.score([])).to.throw(/no rows/);
    expect(() =>
      m.act(
        [
          [1, 2, 3, 4],
          [1, 2, 3, 4],
        ],
        {
          legal: [
            [true, true, true],
            [false, false, false],
          ],
        },
      ),
    ).to.throw(/row 1 has no legal action/);
    expect(() => m.act([[1, 2, 3, 4]], { legal: [[true, true]] })).to.throw(/legal row 0 has 2 entries/);
    expect(() => m.act([[1, 2, 3, 4]], { temperature: -1 })).to.throw(/temperature/);
    const wide = tf.zeros([2, 5]) as tf.Tensor2D;
    expect(() => m.logits(wide)).to.throw(/\[B, 4\]/);
    wide.dispose();
    expect(() => validateMlpConfig({ ...base, inputSize: 0 })).to.throw(/inputSize/);
    expect(() => validateMlpConfig({ ...base, numActions: 1.5 })).to.throw(/numActions/);
    expect(() => validateMlpConfig({ ...base, hiddenSizes: [8, -1] })).to.throw(/hiddenSizes\[1\]/);
    expect(() => validateMlpConfig({ ...base, activation: 'gelu' as 'tanh' })).to.throw(/activation/);
    expect(() => new MlpPolicy({ ...base, seed: NaN })).to.throw(/seed/);
    m.dispose();
  });

  it('gives finite, non-zero gradients for every weight', () => {
    const feats = randomFeatures(8, 4, 7);
    const inputs: PolicyInput[] = feats.map((f, b) => ({ prompt: f, completion: [b % 3] }));
    for (const cfg of [{ ...base, valueHead: false }, base, { ...base, activation: 'relu' as const }]) {
      const m = new MlpPolicy(cfg);
      const { value, grads } = tf.variableGrads(() => {
        const s = m.score(inputs);
        // logProbs alone do not reach the value head, so add the values when there is one
        return s.values ? s.logProbs.sum().add(s.values.sum()) : s.logProbs.sum();
      }, m.variables());
      expect(Object.keys(grads).sort()).to.deep.equal(
        m
          .variables()
          .map((v) => v.name)
          .sort(),
      );
      for (const [name, g] of Object.entries(grads)) {
        const data = g.dataSync();
        expect(data.every(Number.isFinite), name).to.equal(true);
        expect(
          data.some((v) => v !== 0),
          name,
        ).to.equal(true);
      }
      tf.dispose([value, ...Object.values(grads)]);
      m.dispose();
    }
  });

  it('learns the rewarded action with a tiny REINFORCE loop', () => {
    const m = new MlpPolicy({ inputSize: 2, hiddenSizes: [16], numActions: 3, seed: 11 });
    const opt = tf.train.adam(0.05);
    const rng = new Rng(12);
    for (let step = 0; step < 100; step++) {
      const feats = Array.from({ length: 16 }, () => [rng.normal(), rng.normal()]);
      const { actions } = m.act(feats, { seed: step });
      const rewards = tf.tensor2d(actions.map((a) => [a === 2 ? 1 : 0]));
      opt.minimize(
        () =>
          m
            .score(feats.map((f, b) => ({ prompt: f, completion: [actions[b]] })))
            .logProbs.mul(rewards)
            .mean()
            .neg() as tf.Scalar,
        false,
        m.variables(),
      );
      rewards.dispose();
    }
    const probe = randomFeatures(50, 2, 13);
    const p = tf.tidy(
      () =>
        tf
          .softmax(m.logits(tf.tensor2d(probe)))
          .slice([0, 2], [-1, 1])
          .mean()
          .dataSync()[0],
    );
    expect(p).to.be.above(0.9);
    opt.dispose();
    m.dispose();
  });

  it('leaks no tensors across repeated act and score calls', () => {
    const m = new MlpPolicy(base);
    const feats = randomFeatures(4, 4, 8);
    const inputs = feats.map((f) => ({ prompt: f, completion: [1] }));
    const legal = feats.map(() => [true, false, true]);
    const once = () => {
      tf.tidy(() => {
        m.act(feats, { legal });
        const s = m.score(inputs, 0.8);
        s.logProbs.sum().add(s.entropy.sum()).dataSync();
      });
    };
    once();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 10; i++) once();
    expect(tf.memory().numTensors).to.equal(before);
    // outside a tidy too: act returns numbers, and score leaves only the tensors it returns
    for (let i = 0; i < 5; i++) {
      m.act(feats);
      const s = m.score(inputs);
      tf.dispose([s.logProbs, s.entropy, s.mask, s.values!]);
    }
    expect(() => m.act([[1]])).to.throw();
    expect(() => m.score([{ prompt: [1, 2, 3, 4], completion: [0, 0] }])).to.throw();
    expect(tf.memory().numTensors).to.equal(before);
    m.dispose();
    expect(tf.memory().numTensors).to.equal(before - m.variables().length);
  });
});
