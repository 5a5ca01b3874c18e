import { CHANCE, TERMINAL, illegal, type Game, type GameState } from './types.js';

const RANKS = ['J', 'Q', 'K'];
const MOVES = ['fold', 'call', 'raise'];
const FOLD = 0,
  CALL = 1,
  RAISE = 2;

/**
 * Leduc poker with OpenSpiel's rules: six cards 0..5 (J J Q Q K K, rank = card / 2); each
 * player antes 1 and gets one private card; two betting rounds (raises of 2, then 4; at most
 * two raises per round; fold only when facing a bet); a public card is dealt between them;
 * player 0 opens both rounds. A pair with the public card wins, else the higher rank; a tie
 * splits the pot. The information-state key is the player's card, the public card once dealt,
 * and each round's moves (f/c/r), e.g. `3:5|rc|c`; the game has 936 of them.
 */
class LeducState implements GameState {
  private readonly moves: number[] = [];
  private readonly cards: number[] = []; // private 0, private 1, public
  private readonly seq: number[][] = [[], []];
  private round = 0;
  private stakes = 1;
  private readonly ante = [1, 1];
  private raises = 0;
  private calls = 0;
  private folded = -1;
  private player = CHANCE;

  currentPlayer(): number {
    return this.isTerminal() ? TERMINAL : this.player;
  }

  legalActions(): number[] {
    if (this.isTerminal()) return [];
    if (this.player === CHANCE) return this.chanceOutcomes().map(([a]) => a);
    const out: number[] = [];
    if (this.stakes > this.ante[this.player]) out.push(FOLD);
    out.push(CALL);
    if (this.raises < 2) out.push(RAISE);
    return out;
  }

  chanceOutcomes(): [number, number][] {
    if (this.player !== CHANCE || this.isTerminal()) throw new Error('leduc: not a chance node');
    const left = [0, 1, 2, 3, 4, 5].filter((c) => !this.cards.includes(c));
    return left.map((c) => [c, 1 / left.length]);
  }

  apply(action: number): void {
    const legal = this.legalActions();
    if (!legal.includes(action)) throw illegal('leduc', action, legal, (a) => this.actionName(a));
    this.moves.push(action);
    if (this.player === CHANCE) {
      this.cards.push(action);
      if (this.cards.length === 2 || this.cards.length === 3) this.player = 0;
      return;
    }
    const p = this.player;
    this.seq[this.round].push(action);
    if (action === FOLD) {
      this.folded = p;
      return;
    }
    if (action === CALL) {
      this.ante[p] = this.stakes;
      this.calls++;
    } else {
      this.stakes += this.round === 0 ? 2 : 4;
      this.ante[p] = this.stakes;
      this.raises++;
      this.calls = 0;
    }
    // a round ends after two checks, or once a raise is called
    const over = (this.raises === 0 && this.calls === 2) || (this.raises > 0 && this.calls === 1);
    if (!over) this.player = 1 - p;
    else if (this.round === 0) {
      this.round = 1;
      this.raises = 0;
      this.calls = 0;
      this.player = CHANCE;
    } else this.round = 2; // showdown
  }

  isTerminal(): boolean {
    return this.folded >= 0 || this.round === 2;
  }

  returns(): number[] {
    if (!this.isTerminal()) return [0, 0];
    if (this.folded >= 0) {
      const loser = this.folded;
      const r = [0, 0];
      r[loser] = -this.ante[loser];
      r[1 - loser] = this.ante[loser];
      return r;
    }
    const [h0, h1] = [this.rank(0), this.rank(1)];
    const pot = this.ante[0]; // both put in the same at a showdown
    if (h0 === h1) return [0, 0];
    return h0 > h1 ? [pot, -pot] : [-pot, pot];
  }

  /** a pair beats any high card; otherwise the higher rank, then the other card's */
  private rank(p: number): number {
    const a = Math.floor(this.cards[p] / 2),
      b = Math.floor(this.cards[2] / 2);
    return a === b ? 100 + a : Math.max(a, b) * 3 + Math.min(a, b);
  }

  clone(): GameState {
    const c = new LeducState();
    c.moves.push(...this.moves);
    c.cards.push(...this.cards);
    c.seq[0].push(...this.seq[0]);
    c.seq[1].push(...this.seq[1]);
    Object.assign(c, {
      round: this.round,
      stakes: this.stakes,
      raises: this.raises,
      calls: this.calls,
      folded: this.folded,
      player: this.player,
    });
    c.ante[0] = this.ante[0];
    c.ante[1] = this.ante[1];
    return c;
  }

  history(): readonly number[] {
    return this.moves;
  }

  informationStateKey(player: number): string {
    const own = this.cards.length > player ? String(this.cards[player]) : '';
    const pub = this.cards.length > 2 ? `:${this.cards[2]}` : '';
    const s = (r: number) => this.seq[r].map((m) => 'fcr'[m]).join('');
    return `${own}${pub}|${s(0)}|${s(1)}`;
  }

  /** own card (6), public card (6), then each round's up to four moves as fold/call/raise one-hot (2 x 4 x 3) */
  observationVector(player: number): number[] {
    const v = new Array(36).fill(0);
    if (this.cards.length > player) v[this.cards[player]] = 1;
    if (this.cards.length > 2) v[6 + this.cards[2]] = 1;
    this.seq.forEach((moves, r) =>
      moves.forEach((m, i) => {
        v[12 + r * 12 + i * 3 + m] = 1;
      }),
    );
    return v;
  }

  observationText(player: number): string {
    const name = (c: number | undefined) => (c === undefined ? '?' : RANKS[Math.floor(c / 2)]);
    const s = (r: number) => this.seq[r].map((m) => MOVES[m]).join(' ') || 'none';
    return (
      `leduc poker, player ${player}, card ${name(this.cards[player])}, public ${this.cards.length > 2 ? name(this.cards[2]) : 'none'}, ` +
      `round 1: ${s(0)}, round 2: ${s(1)}. Your move (${this.legalActions()
        .map((a) => MOVES[a])
        .join(', ')}):`
    );
  }

  actionName(action: number): string {
    return this.player === CHANCE
      ? `deal ${RANKS[Math.floor(action / 2)] ?? action}${action % 2 ? "'" : ''}`
      : (MOVES[action] ?? `move ${action}`);
  }
}

export const leducPoker: Game = {
  name: 'leduc',
  numPlayers: 2,
  numActions: 3,
  observationSize: 36,
  zeroSum: true,
  newInitialState: () => new LeducState(),
};
