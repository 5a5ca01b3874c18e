import { join } from 'node:path';
import type { AgentBinding } from '../core/agents.js';
import type { ExperimentConfig } from '../config/schema.js';
import type { Episode } from '../core/types.js';
import { OpponentPool, type PoolState } from '../games/pool.js';
import { MlpPolicy } from '../models/mlp.js';
import { loadModel, saveModel } from '../models/store.js';
import { TinyLM } from '../models/tinylm.js';
import { ActServer } from '../serving/act-server.js';
import { BatchingServer } from '../serving/server.js';
import type { CharTokenizer } from '../tokenizer/index.js';
import { hashSeed } from './loop-parts.js';
import type { RunModel } from './models.js';

type Snapshot = TinyLM | MlpPolicy;

/** What a checkpoint keeps of the pool besides the snapshots' weights (saved in `opponents/<name>`). */
export interface OpponentsState {
  pool: PoolState;
}

/**
 * Self-play against frozen past selves instead of the current policy (fictitious self-play,
 * AlphaStar's prioritised league, OpenSpiel's and RLlib's pools): in every episode one of
 * `opponents.roles` (in turn, by the episode's place in the iteration) is the learner, and the
 * others are played by one snapshot of the learner's model drawn from the pool (src/games/pool.ts:
 * latest, uniform, or prioritised by the learner's record against each). A snapshot joins every
 * `snapshotEvery` iterations (the oldest leaves past `poolSize`); the start's is the first. Turns a
 * snapshot plays are filed under model `<model>@<snapshot>` and never train; each episode's result
 * (a win 1, a draw 1/2, from the arena's outcome) goes to the snapshot's record.
 */
export class Opponents {
  private readonly pool: OpponentPool<Snapshot>;
  private drawn: string[] = [];

  private constructor(
    readonly spec: NonNullable<ExperimentConfig['opponents']>,
    readonly model: string,
    private readonly seed: number,
    state?: { pool: PoolState; snapshots: Record<string, Snapshot> },
  ) {
    const o = { capacity: spec.poolSize, sampling: spec.sampling };
    this.pool = state
      ? OpponentPool.restore<Snapshot>(o, state.pool, (n) => state.snapshots[n])
      : new OpponentPool<Snapshot>({ ...o, seed: hashSeed(seed, 0, 'opponents') });
  }

  /** The pool of the config's `opponents`, fresh (holding the starting model) or restored from `resumeDir`. */
  static async open(
    c: ExperimentConfig,
    models: Readonly<Record<string, RunModel>>,
    saved: OpponentsState | undefined,
    resumeDir: string | undefined,
  ): Promise<Opponents | undefined> {
    const spec = c.opponents;
    if (!spec) return undefined;
    if (c.rollout.engine === 'redis')
      throw new Error('opponents: a pool plays in this process; rollout workers (engine redis) do not hold one');
    const model = c.roles[spec.roles[0]].model;
    const m = models[model];
    if (!m || m.kind === 'hf')
      throw new Error(
        `opponents: model '${model}' is ${m ? 'a Hugging Face model' : 'remote'}; pools copy a tinylm or an mlp`,
      );
    if (!saved || !resumeDir) {
      const fresh = new Opponents(spec, model, c.seed);
      fresh.pool.add('it0', copyOf(m));
      return fresh;
    }
    const snapshots: Record<string, Snapshot> = {};
    for (const name of saved.pool.names) {
      const loaded = await loadModel(join(resumeDir, 'opponents', name));
      snapshots[name] = loaded.model;
    }
    return new Opponents(spec, model, c.seed, { pool: saved.pool, snapshots });
  }

  /** This iteration's servers of the pool's snapshots, by the model id their turns are filed under. */
  servers(it: number, temperature: number): Record<string, BatchingServer | ActServer> {
    return Object.fromEntries(
      this.pool.names().map((n) => {
        const id = `${this.model}@${n}`;
        const s = this.pool.snapshot(n);
        const seed = hashSeed(this.seed, it, id);
        return [id, s.kind === 'mlp' ? new ActServer(id, s, seed, temperature) : new BatchingServer(id, s, seed)];
      }),
    );
  }

  /**
   * The bindings of episode k of `n` this iteration: the learner's role is roles[k mod |roles|],
   * and the others play on the snapshot drawn for it (drawn for all n episodes at once, in order).
   */
  bindingsFor(
    k: number,
    n: number,
    bindings: Readonly<Record<string, AgentBinding>>,
    servers: Readonly<Record<string, BatchingServer | ActServer>>,
  ): Record<string, AgentBinding> {
    if (k === 0) this.drawn = Array.from({ length: n }, () => this.pool.sample());
    const roles = this.spec.roles;
    const learner = roles[k % roles.length];
    const id = `${this.model}@${this.drawn[k]}`;
    const server = servers[id];
    return Object.fromEntries(
      roles
        .filter((r) => r !== learner)
        .map((r) => [
          r,
          {
            ...bindings[r],
            model: id,
            ...(server instanceof ActServer ? { actor: server, server: undefined } : { server, actor: undefined }),
          },
        ]),
    );
  }

  /** Each episode's result for its learner goes to its opponent's record; returns the iteration's metrics. */
  record(episodes: readonly Episode[], index: (e: Episode) => number): Record<string, number> {
    const roles = this.spec.roles;
    let total = 0;
    for (const e of episodes) {
      const k = index(e);
      const r = e.outcome?.[roles[k % roles.length]];
      if (r === undefined) continue;
      const score = r > 0 ? 1 : r < 0 ? 0 : 0.5;
      this.pool.record(this.drawn[k], score);
      total += score;
    }
    return { 'opponents/pool_size': this.pool.size, 'opponents/score': episodes.length ? total / episodes.length : 0 };
  }

  /** After iteration `it`'s update: the model joins the pool every `snapshotEvery` iterations. */
  afterUpdate(it: number, models: Readonly<Record<string, RunModel>>): void {
    if (it % this.spec.snapshotEvery !== 0) return;
    this.pool.add(`it${it}`, copyOf(models[this.model]))?.dispose();
  }

  /** Saves the snapshots' weights in `dir/opponents/<name>` and returns the rest of the state. */
  async save(dir: string, tokenizer: CharTokenizer): Promise<OpponentsState> {
    for (const n of this.pool.names()) await saveModel(join(dir, 'opponents', n), this.pool.snapshot(n), tokenizer);
    return { pool: this.pool.state() };
  }

  dispose(): void {
    for (const n of this.pool.names()) this.pool.snapshot(n).dispose();
  }
}

/** A frozen copy of a model's current weights (a new variable shares the buffer until training assigns a new one). */
function copyOf(m: RunModel): Snapshot {
  if (m.kind === 'mlp') return new MlpPolicy(m.config, m.weights);
  if (m.kind === 'tinylm') return new TinyLM(m.config, m.weights);
  throw new Error(`opponents: cannot copy a ${m.kind} model`);
}
