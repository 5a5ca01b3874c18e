import type { Turn } from '../core/types.js';
import type { TrainSample } from './trainer.js';
import { rolloutIsWeights } from './rollout-is.js';
import type { BatchingServer } from '../serving/server.js';

/**
 * Corrects the samples a stale policy played (turn.staleness > 0): their old log-probs
 * become the learner's own (the policy this update starts from, at the sampling
 * temperature) and the worker's recorded ones the behaviour log-probs of verl's truncated
 * importance weights (rl/rollout-is.ts), which the policy loss applies. `credited[i]` is the
 * turn of `samples[i]`. Each corrected turn keeps its weights, for the record. Returns the
 * correction's metrics.
 */
export async function correctStale(
  samples: TrainSample[],
  credited: ReadonlyArray<{ turn: Turn }>,
  servers: Readonly<Record<string, BatchingServer>>,
  temperature: number,
  threshold: number,
): Promise<Record<string, number>> {
  const weights: number[] = [];
  await Promise.all(
    samples.map(async (s, i) => {
      const turn = credited[i].turn;
      if (!turn.staleness) return;
      const old = await servers[s.model].logProbs({ prompt: s.prompt, completion: s.completion }, temperature);
      s.isWeights = rolloutIsWeights(old, s.oldLogProbs, threshold);
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
  };
}
