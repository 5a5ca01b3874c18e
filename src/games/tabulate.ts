import * as tf from '@tensorflow/tfjs';
import type { MlpPolicy } from '../models/mlp.js';
import { CHANCE, type Game, type GameState, type TabularPolicy } from './types.js';

/**
 * One state of every information state of every player: what a policy is asked at. A state
 * whose every player's key was met before is not walked again: in these games what all the
 * players know together is the whole state (nothing is hidden from everyone but future
 * chance), so its subtree was walked already; tic-tac-toe's 550,000 move orders are 5,478
 * positions.
 */
export function representativeStates(game: Game): Map<string, { player: number; state: GameState }> {
  const out = new Map<string, { player: number; state: GameState }>();
  const walked = new Set<string>();
  const walk = (s: GameState) => {
    if (s.isTerminal()) return;
    const joint = `${s.currentPlayer()}|${Array.from({ length: game.numPlayers }, (_, p) => s.informationStateKey(p)).join('|')}`;
    if (walked.has(joint)) return;
    walked.add(joint);
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

/**
 * An MLP policy's table: softmax of its logits over the legal moves (divided by
 * `temperature`; at 0 the likeliest legal move gets 1), from each player's observation
 * vector. `mlp` is one policy for every seat, or each seat's.
 */
export function tabulateMlp(game: Game, mlp: MlpPolicy | readonly MlpPolicy[], temperature = 1): TabularPolicy {
  const seats = Array.isArray(mlp)
    ? (mlp as readonly MlpPolicy[])
    : Array.from({ length: game.numPlayers }, () => mlp as MlpPolicy);
  for (const m of new Set(seats)) {
    if (m.config.inputSize !== game.observationSize)
      throw new Error(
        `tabulate: the policy reads ${m.config.inputSize} features, ${game.name} observations have ${game.observationSize}`,
      );
    if (m.config.numActions !== game.numActions)
      throw new Error(
        `tabulate: the policy scores ${m.config.numActions} actions, ${game.name} has ${game.numActions}`,
      );
  }
  return tabulate(game, (rows) => {
    const logits: number[][] = new Array(rows.length);
    for (const m of new Set(seats)) {
      const mine = rows.flatMap((r, i) => (seats[r.player] === m ? [i] : []));
      if (!mine.length) continue;
      const got = tf.tidy(
        () =>
          m
            .logits(tf.tensor2d(mine.map((i) => rows[i].state.observationVector(rows[i].player))))
            .arraySync() as number[][],
      );
      mine.forEach((i, k) => (logits[i] = got[k]));
    }
    return rows.map((r, i) => {
      const l = r.legal.map((a) => logits[i][a]);
      const m = Math.max(...l);
      if (temperature === 0) return l.map((x, k) => (k === l.indexOf(m) ? 1 : 0));
      const e = l.map((x) => Math.exp((x - m) / temperature));
      const z = e.reduce((x, y) => x + y, 0);
      return e.map((x) => x / z);
    });
  });
}
