/**
 * A game's text for a language model: what the player to move is shown (its seat's text and the
 * legal moves as one-character codes) and the code it writes for a move. The game arena plays
 * by it, and the game evaluators and the game corpus score and teach the same text.
 */
import type { Task } from './types.js';
import type { Game, GameState } from '../games/types.js';

/**
 * What a player is shown: the game's text for its seat and the legal moves, each as its
 * one-character code (what a language model reads), and the same as numbers (what an MLP
 * reads): the seat's observation vector, the legal-move mask and the information state's key.
 */
export interface GameObservation {
  task: Task;
  text: string;
  legal: { code: string; name: string }[];
  features: number[];
  mask: boolean[];
  state: string;
}

/** The code a language model writes for a move: its number, one character (every game here has at most 10 moves). */
export const moveCode = (action: number) => String(action);

/** What the player to move in `state` is shown. */
export function gameObservation(task: Task, game: Game, state: GameState): GameObservation {
  const p = state.currentPlayer();
  const legal = state.legalActions();
  return {
    task,
    text: state.observationText(p),
    legal: legal.map((a) => ({ code: moveCode(a), name: state.actionName(a) })),
    features: state.observationVector(p),
    mask: Array.from({ length: game.numActions }, (_, a) => legal.includes(a)),
    state: state.informationStateKey(p),
  };
}
