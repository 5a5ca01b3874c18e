import { CHANCE, TERMINAL, illegal, type Game, type GameState } from './types.js';

const CARDS = ['J', 'Q', 'K'];
const MOVES = ['pass', 'bet'];

/**
 * Kuhn poker as OpenSpiel has it: cards 0, 1, 2 (J, Q, K); chance deals one to each player;
 * each antes 1; player 0 acts first; moves pass (0) and bet (1). Sequences pp, bb, pbb go to a
 * showdown (pot to the higher card), bp and pbp end with the last bettor taking the pot.
 * The information-state key is OpenSpiel's: the player's card digit, then the moves as p/b
 * (`1pb`: holding the queen, after pass then bet).
 */
class KuhnState implements GameState {
  constructor(private readonly moves: number[] = []) {}

  private get cards(): number[] {
    return this.moves.slice(0, 2);
  }
  private get bets(): number[] {
    return this.moves.slice(2);
  }

  currentPlayer(): number {
    if (this.moves.length < 2) return CHANCE;
    if (this.isTerminal()) return TERMINAL;
    return this.bets.length % 2;
  }

  legalActions(): number[] {
    if (this.isTerminal()) return [];
    if (this.moves.length < 2) return this.chanceOutcomes().map(([a]) => a);
    return [0, 1];
  }

  chanceOutcomes(): [number, number][] {
    if (this.moves.length >= 2) throw new Error('kuhn: not a chance node');
    const left = [0, 1, 2].filter((c) => !this.moves.includes(c));
    return left.map((c) => [c, 1 / left.length]);
  }

  apply(action: number): void {
    const legal = this.legalActions();
    if (!legal.includes(action)) throw illegal('kuhn', action, legal, (a) => this.actionName(a));
    this.moves.push(action);
  }

  isTerminal(): boolean {
    const h = this.bets.join('');
    return h === '00' || h === '11' || h === '10' || h === '010' || h === '011';
  }

  returns(): number[] {
    if (!this.isTerminal()) return [0, 0];
    const h = this.bets.join('');
    const [c0, c1] = this.cards;
    const showdown = (stake: number) => (c0 > c1 ? [stake, -stake] : [-stake, stake]);
    if (h === '00') return showdown(1);
    if (h === '11' || h === '011') return showdown(2);
    if (h === '10') return [1, -1]; // player 1 folded to the bet
    return [-1, 1]; // '010': player 0 folded
  }

  clone(): GameState {
    return new KuhnState([...this.moves]);
  }
  history(): readonly number[] {
    return this.moves;
  }

  informationStateKey(player: number): string {
    const card = this.moves.length > player ? String(this.moves[player]) : '';
    return card + this.bets.map((b) => 'pb'[b]).join('');
  }

  /** one-hot of the player's own card (3), then each of up to three moves as pass/bet one-hot (6) */
  observationVector(player: number): number[] {
    const v = new Array(9).fill(0);
    if (this.moves.length > player) v[this.moves[player]] = 1;
    this.bets.forEach((b, i) => {
      v[3 + 2 * i + b] = 1;
    });
    return v;
  }

  observationText(player: number): string {
    const card = this.moves.length > player ? CARDS[this.moves[player]] : '?';
    const h = this.bets.map((b) => MOVES[b]).join(' ');
    // short, for a small language model: the card and the moves are all a player knows (the moves' count says the seat)
    return `kuhn, card ${card}, moves: ${h || 'none'}`;
  }

  actionName(action: number): string {
    return this.moves.length < 2 ? `deal ${CARDS[action] ?? action}` : (MOVES[action] ?? `move ${action}`);
  }
}

export const kuhnPoker: Game = {
  name: 'kuhn',
  numPlayers: 2,
  numActions: 2,
  observationSize: 9,
  zeroSum: true,
  newInitialState: () => new KuhnState(),
};
