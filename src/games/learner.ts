import * as tf from '@tensorflow/tfjs';
import type { MlpPolicy } from '../models/mlp.js';
import type { TrainSample } from '../rl/trainer.js';
import { MoveCritic, type CriticKind, type CriticState } from './critic.js';
import { Magnet, type MagnetState } from './magnet.js';
import { allActionsAdvantages, mmdStep } from './mmd.js';
import type { Game } from './types.js';
import { tabulateMlp } from './tabulate.js';

/** One move a game policy made, with what it earned: what the critic and the updates read. */
export interface PlayedMove {
  role: string;
  /** the information state's key */
  state: string;
  features: readonly number[];
  legal: readonly boolean[];
  action: number;
  reward: number;
}

export interface GameLearnerOptions {
  /** 'sampled': the policy gradient of the moves played (the loop's samples); 'all-actions' and 'distill': below */
  gradient: 'sampled' | 'all-actions' | 'distill';
  /** the magnet's weight (the trainer's klCoef) */
  alpha: number;
  /** a moving magnet's rate; undefined for a uniform one */
  magnetRate?: number;
  critic: { kind: CriticKind; decay: number };
  mmd: { eta: number; fitSteps: number; fitTol: number };
}

/** What a checkpoint keeps of a learner: its magnet and its critic. */
export interface GameLearnerState {
  magnet: MagnetState;
  critic: CriticState;
}

/**
 * How one MLP policy learns a game beyond the trainer's sampled policy gradient: its magnet
 * (the KL reference as a table, src/games/magnet.ts), and the two updates that use a tabular
 * critic of every move, `all-actions` and `distill` (see `update`). The loop keeps one per
 * model of kind mlp and saves its state in every checkpoint.
 */
export class GameLearner {
  readonly magnet: Magnet;
  private readonly critic: MoveCritic;

  constructor(
    readonly game: Game,
    readonly model: MlpPolicy,
    readonly o: GameLearnerOptions,
    saved?: GameLearnerState,
  ) {
    this.magnet = new Magnet(o.magnetRate, saved?.magnet);
    this.critic = new MoveCritic(o.critic.kind, game.numActions, o.critic.decay, saved?.critic);
  }

  /**
   * The update of one iteration's moves when the gradient is not 'sampled'. The critic folds
   * in every move's return; then each visited information state, with the policy's
   * probabilities π and the critic's values q over its legal moves (a move never seen takes
   * the state's π-weighted mean), gives:
   * - `all-actions` (QPG / mean actor-critic, Srinivasan et al. 2018, with MMD's magnet term
   *   in the values): one sample per legal move a with advantage π(a)(Q'(a) - Σ π Q'),
   *   Q' = q - α log(π/ρ), and old log-prob log π(a): at ratio 1 their gradient is that of
   *   Σ π q - α KL(π ‖ ρ) at every visited state alike, however often each is reached;
   * - `distill`: MMD's closed-form step π' ∝ [π ρ^(αη) exp(ηq)]^(1/(1+αη)) as a target, fitted
   *   here by Adam steps of cross-entropy on `optimizer` until the mean KL(target ‖ network)
   *   is under `fitTol`, at most `fitSteps`. Adam's steps stay lr-sized however small the
   *   gradient, so following the gradient leaves a noise floor set by the rate; fitting a
   *   target moves the policy by MMD's step η instead.
   * Returns the samples for the trainer (none for distill) and metrics.
   */
  update(
    moves: readonly PlayedMove[],
    optimizer: tf.Optimizer,
  ): { samples: TrainSample[]; metrics: Record<string, number> } {
    const first = new Map<string, PlayedMove>();
    for (const m of moves) if (!first.has(m.state)) first.set(m.state, m);
    const values = this.critic.update(moves.map((m) => ({ key: m.state, action: m.action, value: m.reward })));
    const rows = [...values].map(([key, q]) => ({ move: first.get(key)!, q }));
    if (!rows.length) return { samples: [], metrics: {} };
    const logits = tf.tidy(() => this.model.logits(tf.tensor2d(rows.map((r) => [...r.move.features]))).arraySync());
    const samples: TrainSample[] = [];
    const targets: number[][] = [];
    rows.forEach(({ move, q }, i) => {
      const legal = move.legal.flatMap((ok, a) => (ok ? [a] : []));
      const top = Math.max(...legal.map((a) => logits[i][a]));
      const z = legal.reduce((t, a) => t + Math.exp(logits[i][a] - top), 0);
      const probs = legal.map((a) => Math.exp(logits[i][a] - top) / z);
      const known = legal.map((a, k) => [q[a], probs[k]] as const).filter(([v]) => v !== null);
      const mean = known.reduce((t, [v, p]) => t + p * v!, 0) / known.reduce((t, [, p]) => t + p, 0);
      const value = legal.map((a) => q[a] ?? mean);
      const logMagnet = legal.map((a) => this.magnet.logProb(move.state, a, move.legal));
      if (this.o.gradient === 'distill') {
        const step = mmdStep(probs, logMagnet, value, this.o.alpha, this.o.mmd.eta);
        const target = new Array<number>(this.game.numActions).fill(0);
        legal.forEach((a, k) => (target[a] = step[k]));
        targets.push(target);
        return;
      }
      const advantages = allActionsAdvantages(probs, logMagnet, value, this.o.alpha);
      legal.forEach((a, k) =>
        samples.push({
          model: '',
          role: move.role,
          prompt: move.features,
          completion: [a],
          legal: move.legal,
          oldLogProbs: [Math.log(probs[k])],
          advantages: advantages[k],
        }),
      );
    });
    const metrics: Record<string, number> = { 'game/states_updated': rows.length };
    if (this.o.gradient === 'distill')
      Object.assign(
        metrics,
        this.fit(
          rows.map((r) => r.move),
          targets,
          optimizer,
        ),
      );
    return { samples, metrics };
  }

  /** Adam steps of the mean cross-entropy from each row's target to the network, until it holds them. */
  private fit(rows: readonly PlayedMove[], targets: number[][], optimizer: tf.Optimizer): Record<string, number> {
    const x = tf.tensor2d(rows.map((r) => [...r.features]));
    const y = tf.tensor2d(targets);
    const off = tf.tensor2d(rows.map((r) => r.legal.map((ok) => (ok ? 0 : -1e9))));
    const n = rows.length;
    const crossEntropy = () => tf.neg(tf.sum(y.mul(tf.logSoftmax(this.model.logits(x).add(off))))).div(n) as tf.Scalar;
    // the targets' own entropy: the loss minus it is the mean KL(target || network)
    const own = tf.tidy(
      () =>
        tf
          .sum(y.mul(tf.log(y.add(1e-30))))
          .div(n)
          .dataSync()[0],
    );
    const kl = () => tf.tidy(() => own + crossEntropy().dataSync()[0]);
    let steps = 0;
    for (; steps < this.o.mmd.fitSteps; steps++) {
      // once the network holds the target, more lr-sized Adam steps would only add drift
      if (this.o.mmd.fitTol > 0 && kl() < this.o.mmd.fitTol) break;
      optimizer.minimize(crossEntropy, false, this.model.variables());
    }
    const left = kl();
    tf.dispose([x, y, off]);
    return { 'game/fit_steps': steps, 'game/fit_kl': left };
  }

  /** After the model's update: a moving magnet takes its share of the new policy. */
  afterUpdate(): void {
    if (this.magnet.moving) this.magnet.follow(tabulateMlp(this.game, this.model));
  }

  state(): GameLearnerState {
    return { magnet: this.magnet.state(), critic: this.critic.state() };
  }
}
