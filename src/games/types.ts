/**
 * Games in OpenSpiel's mould: a state knows whose turn it is, what is legal and what it is
 * worth, and nothing about learning. Chance (card deals) is a player of its own whose
 * outcomes carry probabilities. Every state reports, per player, an information-state key
 * (equal for the histories that player cannot tell apart), an observation vector of fixed
 * size for vector policies and an observation text for language-model policies.
 */
export const CHANCE = -1;
export const TERMINAL = -2;

export interface GameState {
  /** 0..numPlayers-1, CHANCE, or TERMINAL */
  currentPlayer(): number;
  /** the legal moves of the player to act (a chance node's outcomes); none when terminal */
  legalActions(): number[];
  /** a chance node's outcomes and their probabilities */
  chanceOutcomes(): [action: number, probability: number][];
  /** plays one move; an illegal one throws, naming the move and the legal ones */
  apply(action: number): void;
  isTerminal(): boolean;
  /** what each player won; zero before the end */
  returns(): number[];
  /** an independent copy */
  clone(): GameState;
  /** the moves so far, chance's included */
  history(): readonly number[];
  /** what `player` knows, as a key: equal exactly for the histories the player cannot tell apart */
  informationStateKey(player: number): string;
  /** what `player` knows, as numbers (length `Game.observationSize`) */
  observationVector(player: number): number[];
  /** what `player` knows, as text for a language model */
  observationText(player: number): string;
  /** a move's name, e.g. `bet`; also what a language-model policy writes */
  actionName(action: number): string;
}

export interface Game {
  readonly name: string;
  readonly numPlayers: number;
  /** moves are 0..numActions-1 */
  readonly numActions: number;
  readonly observationSize: number;
  /** true when every game ends with returns that sum to zero */
  readonly zeroSum: boolean;
  newInitialState(): GameState;
}

/** The error every game throws for a move that is not legal. */
export function illegal(game: string, action: number, legal: readonly number[], name: (a: number) => string): Error {
  return new Error(
    `${game}: move ${action} is not legal here; legal: ${legal.map((a) => `${a} (${name(a)})`).join(', ') || 'none (the game is over)'}`,
  );
}

/** Information-state key -> move -> probability: the format `export-policy` writes. */
export type TabularPolicy = Record<string, Record<string, number>>;
