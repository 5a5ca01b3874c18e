import type { TabularPolicy } from '../../games/exploitability.js';
import { randomActor, roundRobin, tableActor, type Actor } from '../../games/match.js';
import { eloRatings } from '../../games/pool.js';
import type { Game } from '../../games/types.js';
import { evalSeatsTable, type SeatSpec } from './exploitability.js';
import { z } from 'zod';
import { evaluatorKind, positiveInt, type EvalContext, type Evaluator } from './types.js';

/** What the evaluator keeps between evaluations, and in each checkpoint: its snapshots, oldest first. */
interface EloState {
  snapshots: { name: string; table: TabularPolicy }[];
  evaluations: number;
}

/**
 * Elo of the seats' policy against a pool of its own past selves (the league rating of
 * RLlib and AlphaStar): each evaluation tabulates the text policy (the table the
 * exploitability evaluator scores, at the arena's temperature), plays a round robin of
 * `games` sampled games per pair among uniform random play (1000 by definition), the pool's
 * snapshots and the current policy, each first in half its games, and fits Elo by
 * Bradley-Terry (`eloRatings`). Then the current table joins the pool every `snapshotEvery`
 * evaluations; the oldest leaves past `poolSize`. The pool is part of the run's checkpoint,
 * so a resumed run rates as an uninterrupted one. Games are seeded by the iteration.
 * Metrics: `elo` (the current policy's), `elo_best_snapshot`, `score_vs_random`,
 * `score_vs_pool` (mean score against the snapshots: a win 1, a draw 1/2), `pool_size`.
 */
export class EloEvaluator implements Evaluator {
  readonly role: string;
  private s: EloState = { snapshots: [], evaluations: 0 };

  constructor(
    readonly name: string,
    readonly every: number,
    private readonly game: Game,
    private readonly seats: readonly SeatSpec[],
    private readonly o: { temperature: number; games: number; poolSize: number; snapshotEvery: number },
  ) {
    this.role = seats[0].roleId;
  }

  async run(ctx: EvalContext): Promise<Record<string, number>> {
    const { table } = evalSeatsTable(ctx, this.game, this.seats, this.o.temperature);
    const players: Record<string, Actor> = { random: randomActor };
    for (const snap of this.s.snapshots) players[snap.name] = tableActor(snap.table);
    players.current = tableActor(table);
    const results = roundRobin(this.game, players, this.o.games, { next: 1_000_003 * (ctx.iteration + 1) });
    const elo = eloRatings(results, 'random');
    const scoreOf = (against: (name: string) => boolean) => {
      const mine = results.filter((r) => (r.a === 'current' && against(r.b)) || (r.b === 'current' && against(r.a)));
      return mine.reduce((t, r) => t + (r.a === 'current' ? r.scoreA : 1 - r.scoreA), 0) / mine.length;
    };
    const names = this.s.snapshots.map((x) => x.name);
    const out: Record<string, number> = {
      elo: elo.current,
      score_vs_random: scoreOf((n) => n === 'random'),
      pool_size: names.length,
    };
    if (names.length)
      Object.assign(out, {
        elo_best_snapshot: Math.max(...names.map((n) => elo[n])),
        score_vs_pool: scoreOf((n) => names.includes(n)),
      });
    if (this.s.evaluations++ % this.o.snapshotEvery === 0) {
      this.s.snapshots.push({ name: `it${ctx.iteration}`, table });
      if (this.s.snapshots.length > this.o.poolSize) this.s.snapshots.shift();
    }
    return out;
  }

  state(): EloState {
    return this.s;
  }

  restore(state: unknown): void {
    const s = state as EloState;
    if (
      !Array.isArray(s?.snapshots) ||
      !Number.isSafeInteger(s.evaluations) ||
      s.snapshots.some((x) => typeof x?.name !== 'string' || typeof x.table !== 'object' || x.table === null)
    ) {
      throw new Error(`evaluator '${this.name}': the checkpoint's snapshot pool is malformed`);
    }
    this.s = { snapshots: s.snapshots.map((x) => ({ name: x.name, table: x.table })), evaluations: s.evaluations };
  }
}

/** `{ kind: elo, name, options: { games: 200, poolSize: 10, snapshotEvery: 1 } }`: the game arena's seats, each on its configured model. */
export const eloKind = evaluatorKind(
  z.strictObject({
    games: positiveInt().default(200),
    poolSize: positiveInt().default(10),
    snapshotEvery: positiveInt().default(1),
  }),
  (spec, c, plan, where) => {
    if (!plan.arena.game)
      throw new Error(`${where}: elo rates a game arena's players; arena '${plan.arena.kind}' is not one`);
    const seats = Object.keys(plan.arena.roles).map((roleId) => ({
      roleId,
      role: plan.roles[roleId],
      model: c.roles[roleId].model,
    }));
    return new EloEvaluator(spec.name, spec.every ?? c.eval.every, plan.arena.game, seats, {
      temperature: c.arena.temperature,
      ...spec.options,
    });
  },
);
