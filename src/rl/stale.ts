import type { Turn } from '../core/types.js';
import type { TrainSample } from './trainer.js';
import { rolloutIsWeights } from './rollout-is.js';
import type { BatchingServer } from '../serving/server.js';

/**
 * Corrects the samples another policy played: a stale one (turn.staleness > 0), or, with
 * `elsewhere`, every sample (an inference server's sampler, src/openai/rollouts.ts, is another
 * policy numerically even at the same weights). Their old log-probs become the learner's own
 * (the policy this update starts from, at the sampling temperature) and the recorded ones the
 * behaviour log-probs of verl's truncated importance weights (rl/rollout-is.ts), which the
 * policy loss applies; a recorded log-prob that is unknown (NaN: a token the server did not
 * return) takes the learner's, weight 1. `credited[i]` is the turn of `samples[i]`. Each
 * corrected turn keeps its weights, for the record. Returns the correction's metrics (its time too), and with
 * `elsewhere` the mean absolute gap between the two log-probs per token.
 */
export async function correctStale(
  samples: TrainSample[],
  credited: ReadonlyArray<{ turn: Turn }>,
  servers: Readonly<Record<string, BatchingServer>>,
  temperature: number,
  threshold: number,
  elsewhere = false,
): Promise<Record<string, number>> {
  const t0 = performance.now();
  const weights: number[] = [];
  let gap = 0;
  await Promise.all(
    samples.map(async (s, i) => {
      const turn = credited[i].turn;
      if (!turn.staleness && !elsewhere) return;
      const old = await servers[s.model].logProbs({ prompt: s.prompt, completion: s.completion }, temperature);
      const behaviour = s.oldLogProbs.map((x, t) => (Number.isFinite(x) ? x : old[t]));
      for (const [t, x] of behaviour.entries()) gap += Math.abs(old[t] - x);
      s.isWeights = rolloutIsWeights(old, behaviour, threshold);
      s.oldLogProbs = old;
      turn.isWeights = [...s.isWeights];
      weights.push(...s.isWeights);
    }),
  );
  if (weights.length === 0) return {};
  return {
    'rollout_is/mean': weights.reduce((a, b) => a + b, 0) / weights.length,
    'rollout_is/capped': weights.filter((w) => w >= threshold).length / weights.length,
    'rollout_is/tokens': weights.length,
    'time/recompute_s': (performance.now() - t0) / 1000, // the learner's scoring pass over the corrected turns
    ...(elsewhere ? { 'rollout_is/logprob_gap': gap / weights.length } : {}),
  };
}
