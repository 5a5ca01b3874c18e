import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { GradientProbe } from '../../src/engine/probe.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';

describe('engine/GradientProbe (first-order grounded gain)', () => {
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  it('training toward the probe answers helps (> 0), away from them hurts (< 0), unrelated text less; no weight moves, no tensor leaks', () => {
    const tok = new CharTokenizer();
    const model = new TinyLM({ vocabSize: tok.size, dModel: 16, nHeads: 2, nLayers: 1, context: 16, seed: 4 });
    const probe = [{ id: 'p', family: 'arithmetic', prompt: '12+34=', answer: '46' }];
    const gp = new GradientProbe(model, tok, probe, { kind: 'solver' }, 1);
    const item = (text: string, answer: string, advantage: number) => ({
      prompt: tok.prompt(text, 'solver'),
      completion: [...tok.encode(answer), tok.eos],
      advantage,
    });
    const before = model.variables().map((v) => Array.from(v.dataSync()));
    gp.alignment([[item('12+34=', '46', 1)]]); // warm-up: the backend's first calls allocate caches
    const n0 = tf.memory().numTensors;
    const [toward, away, other, none] = gp.alignment([
      [item('12+34=', '46', 1)],
      [item('12+34=', '46', -1)],
      [item('zz', 'qq', 1)],
      [],
    ]);
    expect(tf.memory().numTensors).to.equal(n0);
    expect(toward).to.be.greaterThan(0);
    expect(away).to.be.closeTo(-toward, 1e-6);
    expect(Math.abs(other)).to.be.lessThan(toward);
    expect(none).to.equal(0);
    model.variables().forEach((v, i) => expect(Array.from(v.dataSync())).to.deep.equal(before[i]));
    model.dispose();
  });
});
