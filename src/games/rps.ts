import { TERMINAL, illegal, type Game, type GameState } from './types.js';

const NAMES = ['rock', 'paper', 'scissors'];

/**
 * Rock-paper-scissors as a two-move game of imperfect information: player 0 moves, then
 * player 1 moves without seeing it (OpenSpiel plays it as one simultaneous move; the values
 * and equilibria are the same). Win +1, loss -1, tie 0.
 */
class RpsState implements GameState {
  constructor(private readonly moves: number[] = []) {}
  currentPlayer(): number {
    return this.moves.length < 2 ? this.moves.length : TERMINAL;
  }
  legalActions(): number[] {
    return this.isTerminal() ? [] : [0, 1, 2];
  }
  chanceOutcomes(): [number, number][] {
    throw new Error('rps: no chance nodes');
  }
  apply(action: number): void {
    if (!this.legalActions().includes(action))
      throw illegal('rps', action, this.legalActions(), (a) => this.actionName(a));
    this.moves.push(action);
  }
  isTerminal(): boolean {
    return this.moves.length === 2;
  }
  returns(): number[] {
    if (!this.isTerminal()) return [0, 0];
    const [a, b] = this.moves;
    const r = a === b ? 0 : (a - b + 3) % 3 === 1 ? 1 : -1;
    return [r, -r];
  }
  clone(): GameState {
    return new RpsState([...this.moves]);
  }
  history(): readonly number[] {
    return this.moves;
  }
  // neither player sees the other's move before the end
  informationStateKey(player: number): string {
    return this.moves.length > player ? `p${player}:${NAMES[this.moves[player]]}` : `p${player}`;
  }
  observationVector(player: number): number[] {
    return [player === 0 ? 1 : 0, player === 1 ? 1 : 0];
  }
  observationText(player: number): string {
    return `rock-paper-scissors, you are player ${player}. Your move:`;
  }
  actionName(action: number): string {
    return NAMES[action] ?? `move ${action}`;
  }
}

export const rockPaperScissors: Game = {
  name: 'rps',
  numPlayers: 2,
  numActions: 3,
  observationSize: 2,
  zeroSum: true,
  newInitialState: () => new RpsState(),
};
