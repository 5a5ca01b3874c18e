import { Rng } from '../util/rng.js';
import type { TabularPolicy } from './exploitability.js';
import type { Game, GameState } from './types.js';

/**
 * Anything that picks one move per row of observation vectors, legal moves masked (an
 * MlpPolicy, say); `keys` are the rows' information-state keys, for policies kept as tables.
 */
export interface Actor {
  act(
    features: number[][],
    o: { legal: boolean[][]; seed: number; keys?: string[] },
  ): { actions: number[]; logProbs: number[] };
}

/** One move as played: the episode, the seat, who played it, and what it saw. */
export interface Move {
  ep: number;
  seat: number;
  actor: string;
  key: string;
  features: number[];
  action: number;
  logProb: number;
  legal: boolean[];
}

/** Uniform over the legal moves: the fixed point of an Elo scale. */
export const randomActor: Actor = {
  act(features, o) {
    const rng = new Rng(o.seed);
    const actions = o.legal.map((row) => {
      const ok = row.flatMap((v, a) => (v ? [a] : []));
      return ok[rng.int(ok.length)];
    });
    return { actions, logProbs: o.legal.map((row) => -Math.log(row.filter(Boolean).length)) };
  },
};

/** A tabular policy (`export-policy`'s format) as an actor: each row's move drawn from its information state's row. */
export function tableActor(table: TabularPolicy): Actor {
  return {
    act(_features, o) {
      if (!o.keys) throw new Error("tableActor: a table policy needs the rows' information-state keys");
      const rng = new Rng(o.seed);
      const actions: number[] = [];
      const logProbs: number[] = [];
      o.keys.forEach((key, i) => {
        const row = table[key];
        if (!row) throw new Error(`tableActor: the table has no row for information state '${key}'`);
        const legal = o.legal[i].flatMap((ok, a) => (ok ? [a] : []));
        let u = rng.next();
        const a =
          legal.find((m) => (u -= row[String(m)] ?? 0) < 0) ??
          legal.filter((m) => (row[String(m)] ?? 0) > 0).pop() ??
          legal[0];
        actions.push(a);
        logProbs.push(Math.log(row[String(a)] ?? 0));
      });
      return { actions, logProbs };
    },
  };
}

/**
 * Plays `episodes` games in lockstep: every decision step, each actor acts once on all the
 * rows it plays (in the order of `actors`' keys), so a step is one batched call per actor.
 * `actorOf(ep, seat, state)` names who plays a seat at that state. Chance outcomes come from a seeded generator;
 * `seeds.next` is consumed once for the deals and once per actor call, as the caller's
 * checkpoint expects.
 */
export function playLockstep(
  game: Game,
  episodes: number,
  actorOf: (ep: number, seat: number, state: GameState) => string,
  actors: Record<string, Actor>,
  seeds: { next: number },
): { states: GameState[]; moves: Move[] } {
  const states = Array.from({ length: episodes }, () => game.newInitialState());
  const moves: Move[] = [];
  let live = states.map((_, i) => i);
  let chanceDraw = seeds.next++;
  while (live.length) {
    for (const i of live) {
      const s = states[i];
      while (!s.isTerminal() && s.currentPlayer() < 0) {
        const outcomes = s.chanceOutcomes();
        chanceDraw = (chanceDraw * 1103515245 + 12345) % 2147483648; // a seeded LCG for the deals
        let u = chanceDraw / 2147483648;
        const pick = outcomes.find(([, p]) => (u -= p) < 0) ?? outcomes[outcomes.length - 1];
        s.apply(pick[0]);
      }
    }
    live = live.filter((i) => !states[i].isTerminal());
    if (!live.length) break;
    const rows = live.map((i) => {
      const s = states[i],
        seat = s.currentPlayer();
      const legalSet = new Set(s.legalActions());
      return {
        i,
        seat,
        actor: actorOf(i, seat, s),
        key: s.informationStateKey(seat),
        features: s.observationVector(seat),
        legal: Array.from({ length: game.numActions }, (_, a) => legalSet.has(a)),
      };
    });
    const unknown = rows.find((x) => !(x.actor in actors));
    if (unknown)
      throw new Error(
        `playLockstep: episode ${unknown.i} seat ${unknown.seat} is played by '${unknown.actor}', not one of ${Object.keys(actors).join(', ')}`,
      );
    for (const [name, actor] of Object.entries(actors)) {
      const mine = rows.filter((x) => x.actor === name);
      if (!mine.length) continue;
      const r = actor.act(
        mine.map((x) => x.features),
        { legal: mine.map((x) => x.legal), seed: seeds.next++, keys: mine.map((x) => x.key) },
      );
      mine.forEach((x, k) => {
        moves.push({
          ep: x.i,
          seat: x.seat,
          actor: name,
          key: x.key,
          features: x.features,
          action: r.actions[k],
          logProb: r.logProbs[k],
          legal: x.legal,
        });
        states[x.i].apply(r.actions[k]);
      });
    }
  }
  return { states, moves };
}

/** A player's score in a finished two-player zero-sum game: 1 for a win, 1/2 for a draw, 0 for a loss. */
export function scoreOf(state: GameState, seat: number): number {
  const r = state.returns()[seat];
  return r > 0 ? 1 : r < 0 ? 0 : 0.5;
}

/**
 * A round robin: every pair of `players` plays `games` games, each taking seat 0 in half of
 * them. Returns the results as eloRatings reads them.
 */
export function roundRobin(
  game: Game,
  players: Record<string, Actor>,
  games: number,
  seeds: { next: number },
): { a: string; b: string; scoreA: number }[] {
  const names = Object.keys(players);
  const out: { a: string; b: string; scoreA: number }[] = [];
  for (let x = 0; x < names.length; x++) {
    for (let y = x + 1; y < names.length; y++) {
      const [a, b] = [names[x], names[y]];
      const { states } = playLockstep(
        game,
        games,
        (ep, seat) => ((ep % 2 === 0) === (seat === 0) ? a : b),
        { [a]: players[a], [b]: players[b] },
        seeds,
      );
      states.forEach((s, ep) => out.push({ a, b, scoreA: scoreOf(s, ep % 2 === 0 ? 0 : 1) }));
    }
  }
  return out;
}
