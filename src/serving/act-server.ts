import type { MlpPolicy } from '../models/mlp.js';
import { Rng } from '../util/rng.js';

/** One move an MLP policy chose: the action, its log-probability and the entropy of the distribution it came from. */
export interface Move {
  action: number;
  logProb: number;
  entropy: number;
}

interface Pending {
  features: number[];
  legal: boolean[];
  resolve: (m: Move) => void;
  reject: (e: unknown) => void;
}

/**
 * The batching server of a policy that reads numbers (kind mlp), as BatchingServer is a
 * language model's: arenas ask for one move at a time, and every request that arrives before
 * the event loop turns (all games in flight) is answered by one batched pass. Draws come from
 * the server's own seeded generator, so a run repeats from its seed.
 */
export class ActServer {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly rng: Rng;
  readonly stats = { batches: 0, requests: 0, generatedTokens: 0, seconds: 0 };

  constructor(
    readonly id: string,
    readonly model: MlpPolicy,
    seed = 0,
    private readonly temperature = 1,
  ) {
    this.rng = new Rng(seed);
  }

  /** Queues one decision; a malformed one is refused here, so it cannot fail a whole batch. */
  act(features: number[], legal: boolean[]): Promise<Move> {
    return new Promise((resolve, reject) => {
      const { inputSize, numActions } = this.model.config;
      if (features.length !== inputSize)
        return reject(new Error(`model '${this.id}': ${features.length} features, the policy reads ${inputSize}`));
      if (legal.length !== numActions || !legal.some(Boolean))
        return reject(
          new Error(`model '${this.id}': the legal mask must have ${numActions} entries, at least one true`),
        );
      this.queue.push({ features, legal, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    const t = performance.now();
    try {
      const out = this.model.act(
        batch.map((p) => p.features),
        { temperature: this.temperature, legal: batch.map((p) => p.legal), seed: this.rng.next() * 2 ** 32 },
      );
      batch.forEach((p, i) =>
        p.resolve({ action: out.actions[i], logProb: out.logProbs[i], entropy: out.entropies[i] }),
      );
      this.stats.batches++;
      this.stats.requests += batch.length;
      this.stats.generatedTokens += batch.length;
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
    this.stats.seconds += (performance.now() - t) / 1000;
  }
}
