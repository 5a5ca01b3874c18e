import * as tf from '@tensorflow/tfjs';
import type { MlpPolicy } from '../models/mlp.js';
import { CHANCE, type Game, type GameState } from './types.js';
import type { TabularPolicy } from './exploitability.js';

/** One state of every information state of every player: what a policy is asked at. */
export function representativeStates(game: Game): Map<string, { player: number; state: GameState }> {
  const out = new Map<string, { player: number; state: GameState }>();
  const walk = (s: GameState) => {
    if (s.isTerminal()) return;
    const p = s.currentPlayer();
    if (p !== CHANCE) {
      const key = s.informationStateKey(p);
      const seen = out.get(key);
      if (seen && seen.player !== p)
        throw new Error(`${game.name}: information-state key '${key}' is used by players ${seen.player} and ${p}`);
      if (!seen) out.set(key, { player: p, state: s.clone() });
    }
    for (const a of s.legalActions()) {
      const c = s.clone();
      c.apply(a);
      walk(c);
    }
  };
  walk(game.newInitialState());
  return out;
}

/**
 * A policy's table: information-state key -> legal move -> probability, the format
 * `fromTable` reads and an exported policy file holds. `probabilities` answers for a batch of
 * states (player, legal moves) in the legal moves' order.
 */
export function tabulate(
  game: Game,
  probabilities: (rows: { state: GameState; player: number; legal: number[] }[]) => number[][],
): TabularPolicy {
  const reps = [...representativeStates(game)];
  const rows = reps.map(([, { state, player }]) => ({ state, player, legal: state.legalActions() }));
  const probs = probabilities(rows);
  const table: TabularPolicy = {};
  reps.forEach(([key], i) => {
    table[key] = Object.fromEntries(rows[i].legal.map((a, j) => [String(a), probs[i][j]]));
  });
  return table;
}

/** An MLP policy's table: softmax of its logits over the legal moves at temperature 1, from each player's observation vector. */
export function tabulateMlp(game: Game, mlp: MlpPolicy): TabularPolicy {
  if (mlp.config.inputSize !== game.observationSize)
    throw new Error(
      `tabulate: the policy reads ${mlp.config.inputSize} features, ${game.name} observations have ${game.observationSize}`,
    );
  if (mlp.config.numActions !== game.numActions)
    throw new Error(
      `tabulate: the policy scores ${mlp.config.numActions} actions, ${game.name} has ${game.numActions}`,
    );
  return tabulate(game, (rows) => {
    const logits = tf.tidy(() =>
      mlp.logits(tf.tensor2d(rows.map((r) => r.state.observationVector(r.player)))).arraySync(),
    );
    return rows.map((r, i) => {
      const l = r.legal.map((a) => logits[i][a]);
      const m = Math.max(...l);
      const e = l.map((x) => Math.exp(x - m));
      const z = e.reduce((x, y) => x + y, 0);
      return e.map((x) => x / z);
    });
  });
}
