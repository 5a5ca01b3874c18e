import { CHANCE, type GameState } from './types.js';

/**
 * Perfect play for two-player zero-sum games of perfect information (tic-tac-toe): the
 * value to player 0 of every state and the moves that keep it. Memoised by the mover's
 * information-state key, which in such a game is the whole state (5,478 boards instead of
 * 550,000 move orders).
 */
export class Minimax {
  private readonly memo = new Map<string, number>();

  /** the value of `s` to player 0 under perfect play */
  value(s: GameState): number {
    if (s.isTerminal()) return s.returns()[0];
    if (s.currentPlayer() === CHANCE) throw new Error('minimax: chance nodes need expectimax, not minimax');
    const id = s.informationStateKey(s.currentPlayer());
    const known = this.memo.get(id);
    if (known !== undefined) return known;
    const vals = s.legalActions().map((a) => this.value(this.after(s, a)));
    const v = s.currentPlayer() === 0 ? Math.max(...vals) : Math.min(...vals);
    this.memo.set(id, v);
    return v;
  }

  /** every move that keeps perfect play's value for the player to act */
  bestMoves(s: GameState): number[] {
    const target = this.value(s);
    return s.legalActions().filter((a) => this.value(this.after(s, a)) === target);
  }

  private after(s: GameState, a: number): GameState {
    const c = s.clone();
    c.apply(a);
    return c;
  }
}

/** Wins, draws and losses of a player over games against perfect play. */
export interface Record3 {
  wins: number;
  draws: number;
  losses: number;
}

/**
 * Plays `games` games of a two-player zero-sum perfect-information game with `choose` in
 * `seat` against perfect play, which picks uniformly (seeded) among its moves that keep the
 * minimax value, so that every line perfect play allows gets tested.
 */
export function playVsMinimax(
  newGame: () => GameState,
  choose: (s: GameState) => number,
  o: { seat: number; games: number; seed: number },
  solver = new Minimax(),
): Record3 {
  const out: Record3 = { wins: 0, draws: 0, losses: 0 };
  let x = o.seed >>> 0;
  const draw = (n: number) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
  for (let g = 0; g < o.games; g++) {
    const s = newGame();
    while (!s.isTerminal()) {
      if (s.currentPlayer() === o.seat) s.apply(choose(s));
      else {
        const best = solver.bestMoves(s);
        s.apply(best[draw(best.length)]);
      }
    }
    const r = s.returns()[o.seat];
    if (r > 0) out.wins++;
    else if (r < 0) out.losses++;
    else out.draws++;
  }
  return out;
}
