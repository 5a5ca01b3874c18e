import type { Observable } from 'rxjs';
import { fromRun } from '../src/core/operators/from-run.js';
import type { RoleId, Task, Turn } from '../src/core/types.js';
import { GAMES, gameByName } from '../src/games/index.js';
import { gameObservation, moveCode } from '../src/core/game-text.js';
import { CHANCE, type Game, type GameState } from '../src/games/types.js';
import { hashText } from '../src/util/hash.js';
import { Rng } from '../src/util/rng.js';
import { invalid } from '../src/core/role.js';
import { z } from 'zod';
import { arenaOptions } from './options.js';
import type { Arena, ArenaContext, EpisodeEnd } from '../src/core/arena.js';

export { gameObservation, moveCode, type GameObservation } from '../src/core/game-text.js';

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

/** A chance outcome by its probability, from a uniform draw u in [0, 1). */
function sample(state: GameState, u: number): number {
  const outcomes = state.chanceOutcomes();
  for (const [a, p] of outcomes) if ((u -= p) < 0) return a;
  return outcomes[outcomes.length - 1][0];
}
