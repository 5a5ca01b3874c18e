import { CHANCE, type Game, type GameState } from './types.js';
import type { GamePolicy } from './exploitability.js';

/**
 * Each player's action values at each of its information states under the joint policy
 * `pi`, exactly, by walking the game tree: keyed `player:key`, `num[i] / den` is q(s, a_i),
 * the player's expected return after legal move a_i at s, histories weighted by the others'
 * and chance's reach (`den`, their total; 0 where the others never let s happen).
 */
export function actionValues(game: Game, pi: GamePolicy): Map<string, { legal: number[]; num: number[]; den: number }> {
  const out = new Map<string, { legal: number[]; num: number[]; den: number }>();
  // returns each player's value of `s`; `reach[i]` is the product of everyone's but i's probabilities (chance included)
  const walk = (s: GameState, reach: number[]): number[] => {
    if (s.isTerminal()) return s.returns();
    const player = s.currentPlayer();
    const legal = s.legalActions();
    const probs =
      player === CHANCE
        ? legal.map((a) => new Map(s.chanceOutcomes()).get(a)!)
        : pi(s.informationStateKey(player), legal);
    const total = new Array(game.numPlayers).fill(0);
    const childValues: number[][] = [];
    legal.forEach((a, i) => {
      const c = s.clone();
      c.apply(a);
      const r = reach.map((x, k) => (k === player ? x : x * probs[i]));
      const v = walk(c, r);
      childValues.push(v);
      v.forEach((x, k) => {
        total[k] += probs[i] * x;
      });
    });
    if (player !== CHANCE) {
      const key = `${player}:${s.informationStateKey(player)}`;
      const e = out.get(key) ?? { legal, num: legal.map(() => 0), den: 0 };
      legal.forEach((_, i) => {
        e.num[i] += reach[player] * childValues[i][player];
      });
      e.den += reach[player];
      out.set(key, e);
    }
    return total;
  };
  walk(game.newInitialState(), new Array(game.numPlayers).fill(1));
  return out;
}
