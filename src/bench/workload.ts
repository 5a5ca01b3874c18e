import * as tf from '@tensorflow/tfjs';
import { generate } from '../models/generate.js';
import { TinyLM, type TinyLMConfig } from '../models/tinylm.js';
import { policyLoss } from '../rl/loss.js';
import { Rng } from '../util/rng.js';

/** The reference model of ../shared/bench/README.md. */
export const REFERENCE_MODEL: TinyLMConfig = {
  vocabSize: 64,
  dModel: 128,
  nHeads: 4,
  nLayers: 2,
  context: 64,
  seed: 0,
};
export const REFERENCE_JOBS = { batch: 64, prompt: 16, newTokens: 32, seq: 48, reps: 5 };

/** One generate job: `batch` prompts of random tokens, `newTokens` sampled at temperature 1. Returns seconds. */
export function generateJob(model: TinyLM, batch: number, rng: Rng): number {
  const { prompt, newTokens } = REFERENCE_JOBS;
  const prompts = Array.from({ length: batch }, () => Array.from({ length: prompt }, () => rng.int(64)));
  const t0 = performance.now();
  generate(model, prompts, { maxNewTokens: newTokens, temperature: 1, seed: rng.int(1 << 30) });
  return (performance.now() - t0) / 1000;
}

/**
 * The gradient of one reference train step: forward over `batch` sequences of `seq` tokens,
 * per-token log-probs of each sequence's own next tokens, clipped-ratio loss (clip 0.2)
 * with a per-sequence advantage, token-mean. Returns the gradients (caller applies them).
 */
export function trainGrads(
  model: TinyLM,
  batch: number,
  rng: Rng,
  lossScale = 1,
): { grads: tf.NamedTensorMap; loss: number } {
  const { seq } = REFERENCE_JOBS;
  const inputs = Array.from({ length: batch }, () => {
    const s = Array.from({ length: seq }, () => rng.int(64));
    return { prompt: s.slice(0, 1), completion: s.slice(1) };
  });
  const adv = tf
    .tensor2d(
      Array.from({ length: batch }, () => rng.normal()),
      [batch, 1],
    )
    .tile([1, seq - 1]) as tf.Tensor2D;
  const old = tf.tensor2d(
    Array.from({ length: batch * (seq - 1) }, () => rng.normal() * 0.1 - 4),
    [batch, seq - 1],
  );
  const { value, grads } = tf.variableGrads(() => {
    const scored = model.score(inputs);
    const { loss } = policyLoss({
      oldLogProb: old,
      logProb: scored.logProbs,
      advantages: adv,
      mask: scored.mask,
      clipLow: 0.2,
      aggMode: 'token-mean',
    });
    return loss.mul(lossScale) as tf.Scalar;
  }, model.variables());
  const loss = value.dataSync()[0];
  value.dispose();
  adv.dispose();
  old.dispose();
  return { grads, loss };
}
