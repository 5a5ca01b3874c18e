import { kuhnPoker } from './kuhn.js';
import { leducPoker } from './leduc.js';
import { rockPaperScissors } from './rps.js';
import { ticTacToe } from './tictactoe.js';
import type { Game } from './types.js';

export * from './types.js';

/** Every game by name. */
export const GAMES: Readonly<Record<string, Game>> = {
  rps: rockPaperScissors,
  tictactoe: ticTacToe,
  kuhn: kuhnPoker,
  leduc: leducPoker,
};

export function gameByName(name: string): Game {
  const g = GAMES[name];
  if (!g) throw new Error(`unknown game '${name}'; known: ${Object.keys(GAMES).join(', ')}`);
  return g;
}
