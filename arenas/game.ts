import type { Observable } from 'rxjs';
import { fromRun } from '../src/core/operators/from-run.js';
import type { RoleId, Task, Turn } from '../src/core/types.js';
import { GAMES, gameByName } from '../src/games/index.js';
import { CHANCE, type Game, type GameState } from '../src/games/types.js';
import { hashText } from '../src/util/hash.js';
import { Rng } from '../src/util/rng.js';
import { invalid } from '../src/core/role.js';
import { z } from 'zod';
import { arenaOptions } from './options.js';
import type { Arena, ArenaContext, EpisodeEnd } from '../src/core/arena.js';

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

/**
 * A two-or-more-player game played by text (OpenSpiel's games, src/games): seat i is role
 * `seat<i>`, so one model in every seat is self-play with the seat as the role, and separate
 * models are separate policies. Chance deals from a seed of the task id. Each move is one
 * turn, filed for comparison across the batch (a seat's turns over all games); a move that
 * does not parse or is not legal ends the game as an invalid action: that seat gets
 * -penalty, the others 0. The episode's outcome is each seat's return (`outcome` judge).
 */
export const GameArenaOptionsSchema = z.strictObject({
  game: z.enum(Object.keys(GAMES) as [string, ...string[]]).default('kuhn'), // the game played (src/games)
  penalty: z.number().nonnegative().default(1), // what an invalid move costs its seat
  // exploring starts: in this share of the games the first `moves` moves are uniformly random, played by the arena
  // (not turns, so not trained on), so the players meet positions their own play avoids (an opponent's other openings)
  // `vary`: each explored game's opening is 1 to `moves` random moves (uniform), not always `moves`
  explore: z
    .strictObject({
      moves: z.number().int().positive(),
      share: z.number().gt(0).max(1).default(0.5),
      vary: z.boolean().default(false),
    })
    .optional(),
});

export class GameArena implements Arena {
  readonly kind = 'game';
  readonly seedsTasks = true;
  readonly roles: Record<RoleId, string>;
  readonly game: Game;
  readonly features: { inputSize: number; numActions: number };
  private readonly penalty: number;
  private readonly explore?: { moves: number; share: number; vary: boolean };

  constructor(options: unknown) {
    const o = arenaOptions(GameArenaOptionsSchema, options);
    this.game = gameByName(o.game);
    if (this.game.numActions > 10)
      throw new Error(
        `arena 'game': ${this.game.name} has ${this.game.numActions} moves; one-character move codes cover 10`,
      );
    this.penalty = o.penalty;
    this.explore = o.explore;
    this.features = { inputSize: this.game.observationSize, numActions: this.game.numActions };
    this.roles = Object.fromEntries(Array.from({ length: this.game.numPlayers }, (_, i) => [`seat${i}`, 'player']));
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    const state = this.game.newInitialState();
    const rng = new Rng(hashText(task.id));
    // drawn first, so a game's deal does not depend on whether it explores
    const e = this.explore;
    const explored = e && rng.next() < e.share ? (e.vary ? 1 + rng.int(e.moves) : e.moves) : 0;
    let moves = 0;
    while (!state.isTerminal()) {
      const p = state.currentPlayer();
      if (p === CHANCE) {
        state.apply(sample(state, rng.next()));
        continue;
      }
      const legal = state.legalActions();
      if (moves++ < explored) {
        state.apply(legal[rng.int(legal.length)]);
        continue;
      }
      const observation = gameObservation(task, this.game, state);
      const turn = await ctx.act(`seat${p}`, { ...observation }, { compare: 'batch' });
      const move = turn.action.valid ? legal.find((a) => moveCode(a) === turn.action.value) : undefined;
      if (move === undefined) {
        if (turn.action.valid) turn.action = invalid(`'${turn.action.value}' is not a legal move here`);
        emit(turn);
        const outcome = Object.fromEntries(
          Object.keys(this.roles).map((r) => [r, r === `seat${p}` ? -this.penalty : 0]),
        );
        emit({
          end: true,
          outcome,
          info: { game: this.game.name, history: [...state.history()], invalid: `seat${p}` },
        });
        return;
      }
      emit(turn);
      state.apply(move);
    }
    const returns = state.returns();
    emit({
      end: true,
      outcome: Object.fromEntries(returns.map((r, i) => [`seat${i}`, r])),
      info: { game: this.game.name, history: [...state.history()] },
    });
  }
}

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

/** A chance outcome by its probability, from a uniform draw u in [0, 1). */
function sample(state: GameState, u: number): number {
  const outcomes = state.chanceOutcomes();
  for (const [a, p] of outcomes) if ((u -= p) < 0) return a;
  return outcomes[outcomes.length - 1][0];
}
