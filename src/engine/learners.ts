import type { Arena } from '../core/arena.js';
import type { ExperimentConfig } from '../config/schema.js';
import { GameLearner, type GameLearnerState, type PlayedMove } from '../games/learner.js';
import type { Game } from '../games/types.js';
import type { MlpPolicy } from '../models/mlp.js';
import type { JointTrainer, TrainSample } from '../rl/trainer.js';
import type { RunModel } from './models.js';
import type { ScoredTurn } from './rewards.js';

/**
 * The game policies' learners (src/games/learner.ts), one per model of kind mlp: its magnet
 * is its KL reference, and with `trainer.gradient` other than 'sampled' its critic's update
 * takes the place of the sampled policy gradient. `saved` is what the last checkpoint kept.
 */
export function makeLearners(
  c: ExperimentConfig,
  arena: Arena,
  models: Readonly<Record<string, RunModel>>,
  saved: Record<string, unknown>,
): Record<string, GameLearner> {
  const out: Record<string, GameLearner> = {};
  for (const [id, m] of Object.entries(models)) {
    if (m.kind !== 'mlp') continue;
    if (c.rollout.engine === 'redis')
      throw new Error(
        `models.${id}: kind 'mlp' plays in this process; rollout workers (engine redis) carry TinyLM weights only`,
      );
    const game = (arena as { game?: Game }).game;
    if (!game) throw new Error(`models.${id}: kind 'mlp' learns a game, and arena '${arena.kind}' plays none`);
    const magnet = c.models[id].magnet;
    out[id] = new GameLearner(
      game,
      m as MlpPolicy,
      {
        gradient: c.trainer.gradient,
        alpha: c.trainer.klCoef ?? 0,
        magnetRate: magnet?.kind === 'moving' ? magnet.rate : undefined,
        critic: c.trainer.critic,
        mmd: c.trainer.mmd,
      },
      saved[id] as GameLearnerState | undefined,
    );
  }
  return out;
}

/** The magnet's log-prob of each game policy's move, as its reference log-probs, where its role has a KL term. */
export function addMagnetLogProbs(
  c: ExperimentConfig,
  scored: readonly ScoredTurn[],
  learners: Readonly<Record<string, GameLearner>>,
): void {
  for (const s of scored) {
    const turn = s.episode.turns[s.turn];
    const learner = learners[turn.model];
    if (!learner || !((c.roles[turn.role]?.klCoef ?? c.trainer.klCoef ?? 0) > 0)) continue;
    if (turn.state === undefined || !turn.legal)
      throw new Error(`role '${turn.role}': a game policy's turn needs its state and legal moves for the magnet`);
    s.refLogProbs = [learner.magnet.logProb(turn.state, turn.completion[0], turn.legal)];
  }
}

/**
 * With `trainer.gradient` other than 'sampled': each game policy's samples are replaced by
 * its learner's update of the iteration's moves (all-actions samples; distill fits the
 * model itself and leaves none). The other models' samples pass through.
 */
export function learnerUpdates(
  c: ExperimentConfig,
  scored: readonly ScoredTurn[],
  samples: TrainSample[],
  learners: Readonly<Record<string, GameLearner>>,
  trainer: JointTrainer,
): { samples: TrainSample[]; metrics: Record<string, number> } {
  if (c.trainer.gradient === 'sampled' || !Object.keys(learners).length) return { samples, metrics: {} };
  const metrics: Record<string, number> = {};
  const out = samples.filter((s) => !learners[s.model]);
  for (const [id, learner] of Object.entries(learners)) {
    const moves: PlayedMove[] = scored.flatMap((s) => {
      const t = s.episode.turns[s.turn];
      if (t.model !== id || !t.legal || t.state === undefined || !t.action.valid) return [];
      return [
        { role: t.role, state: t.state, features: t.prompt, legal: t.legal, action: t.completion[0], reward: s.reward },
      ];
    });
    const got = learner.update(moves, trainer.optimizer(id));
    for (const x of got.samples) out.push({ ...x, model: id });
    for (const [k, v] of Object.entries(got.metrics)) metrics[k.replace('game/', `game/${id}/`)] = v;
  }
  return { samples: out, metrics };
}
