import { z } from 'zod';
import { Minimax, playVsMinimax } from '../../games/minimax.js';
import type { Game } from '../../games/types.js';
import { evalSeatsTable, type SeatSpec } from './exploitability.js';
import { evaluatorKind, positiveInt, type EvalContext, type Evaluator } from './types.js';

/**
 * A perfect-information game's players against perfect play (tic-tac-toe, whose exact
 * exploitability would need every one of its 550,000 move orders): the seats' greedy policy
 * (each state's likeliest legal move) plays `games` games in each seat against minimax, which
 * picks at random (seeded by the iteration) among the moves that keep its value, so every line
 * perfect play allows gets tested. Metrics: `losses` (both seats), `losses_seat<i>`, `draws`.
 */
export class MinimaxEvaluator implements Evaluator {
  readonly role: string;
  private readonly solver = new Minimax();

  constructor(
    readonly name: string,
    readonly every: number,
    private readonly game: Game,
    private readonly seats: readonly SeatSpec[],
    private readonly games: number,
  ) {
    this.role = seats[0].roleId;
  }

  async run(ctx: EvalContext): Promise<Record<string, number>> {
    const { table } = evalSeatsTable(ctx, this.game, this.seats, 0);
    const greedy = (s: Parameters<Parameters<typeof playVsMinimax>[1]>[0]) => {
      const row = table[s.informationStateKey(s.currentPlayer())];
      return Number(Object.entries(row).reduce((best, e) => (e[1] > best[1] ? e : best))[0]);
    };
    const out: Record<string, number> = { losses: 0, draws: 0 };
    for (let seat = 0; seat < this.game.numPlayers; seat++) {
      const r = playVsMinimax(
        () => this.game.newInitialState(),
        greedy,
        { seat, games: this.games, seed: ctx.iteration * 2 + seat + 1 },
        this.solver,
      );
      out[`losses_seat${seat}`] = r.losses;
      out.losses += r.losses;
      out.draws += r.draws;
    }
    return out;
  }
}

/** `{ kind: minimax, name, options: { games: 200 } }`: the game arena's seats against perfect play. */
export const minimaxKind = evaluatorKind(
  z.strictObject({ games: positiveInt().default(200) }), // games in each seat
  (spec, c, plan, where) => {
    if (!plan.arena.game || plan.arena.game.numPlayers !== 2 || !plan.arena.game.zeroSum)
      throw new Error(
        `${where}: minimax plays a two-player zero-sum game arena's players; arena '${plan.arena.kind}' is not one`,
      );
    const seats = Object.keys(plan.arena.roles).map((roleId) => ({
      roleId,
      role: plan.roles[roleId],
      model: c.roles[roleId].model,
    }));
    return new MinimaxEvaluator(spec.name, spec.every ?? c.eval.every, plan.arena.game, seats, spec.options.games);
  },
);
