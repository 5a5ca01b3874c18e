import { TERMINAL, illegal, type Game, type GameState } from './types.js';

const LINES = [
  [0, 1, 2],
  [3, 4, 5],
  [6, 7, 8],
  [0, 3, 6],
  [1, 4, 7],
  [2, 5, 8],
  [0, 4, 8],
  [2, 4, 6],
];

/** Tic-tac-toe: player 0 is x and moves first; a move is the cell 0..8 (row-major); win +1, loss -1, draw 0. */
class TicTacToeState implements GameState {
  constructor(private readonly moves: number[] = []) {}

  private board(): number[] {
    const b = new Array(9).fill(-1);
    this.moves.forEach((c, i) => {
      b[c] = i % 2;
    });
    return b;
  }

  private winner(): number {
    const b = this.board();
    for (const [x, y, z] of LINES) if (b[x] >= 0 && b[x] === b[y] && b[y] === b[z]) return b[x];
    return -1;
  }

  currentPlayer(): number {
    return this.isTerminal() ? TERMINAL : this.moves.length % 2;
  }
  legalActions(): number[] {
    return this.isTerminal() ? [] : [0, 1, 2, 3, 4, 5, 6, 7, 8].filter((c) => !this.moves.includes(c));
  }
  chanceOutcomes(): [number, number][] {
    throw new Error('tictactoe: no chance nodes');
  }
  apply(action: number): void {
    const legal = this.legalActions();
    if (!legal.includes(action)) throw illegal('tictactoe', action, legal, (a) => this.actionName(a));
    this.moves.push(action);
  }
  isTerminal(): boolean {
    return this.moves.length === 9 || this.winner() >= 0;
  }
  returns(): number[] {
    const w = this.winner();
    return w < 0 ? [0, 0] : w === 0 ? [1, -1] : [-1, 1];
  }
  clone(): GameState {
    return new TicTacToeState([...this.moves]);
  }
  history(): readonly number[] {
    return this.moves;
  }
  /** perfect information: the board and who is to move */
  informationStateKey(): string {
    return (
      this.board()
        .map((c) => '.xo'[c + 1])
        .join('') + (this.moves.length % 2 ? 'o' : 'x')
    );
  }
  /** per cell: empty, mine, theirs (27 numbers), from `player`'s side */
  observationVector(player: number): number[] {
    return this.board().flatMap((c) => (c < 0 ? [1, 0, 0] : c === player ? [0, 1, 0] : [0, 0, 1]));
  }
  observationText(player: number): string {
    const rows = [0, 3, 6].map((r) =>
      this.board()
        .slice(r, r + 3)
        .map((c, i) => (c < 0 ? String(r + i) : 'xo'[c]))
        .join(''),
    );
    return `tic-tac-toe, you are ${'xo'[player]}, board ${rows.join('/')}. Your move (a free cell 0-8):`;
  }
  actionName(action: number): string {
    return String(action);
  }
}

export const ticTacToe: Game = {
  name: 'tictactoe',
  numPlayers: 2,
  numActions: 9,
  observationSize: 27,
  zeroSum: true,
  newInitialState: () => new TicTacToeState(),
};
