import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '../backend/index.js';
import { planExperiment } from '../registry.js';
import { seatsTable } from '../engine/evaluators/exploitability.js';
import { AveragePolicy, type AverageState } from '../games/average.js';
import { Minimax, playVsMinimax } from '../games/minimax.js';
import type { Game, GameState } from '../games/types.js';
import type { MlpPolicy } from '../models/mlp.js';
import { CharTokenizer } from '../tokenizer/index.js';
import type { ExperimentConfig } from '../config/schema.js';
import { exploitability, fromTable, nashConv, type TabularPolicy } from '../games/exploitability.js';
import { loadModel } from '../models/store.js';
import type { TinyLM } from '../models/tinylm.js';
import { RunStore } from '../store/run.js';

/**
 * What `export-policy` writes: the game, how its keys read, the policy, and its measures.
 * `which` says which policy: fictitious play's `average` (when the run's exploitability
 * evaluator kept one: what its targets measure) or the `last` iterate. A game measured
 * against perfect play (a `minimax` evaluator) is written greedy, as it was measured, with
 * its record against minimax instead of exploitability.
 */
export interface ExportedPolicy {
  game: string;
  keyFormat: string;
  run: string;
  checkpoint: string;
  which: 'average' | 'last';
  /** the temperature the table is at: the arena's, or 0 (greedy) */
  temperature: number;
  exploitability?: number;
  nashConv?: number;
  /** the last iterate's, beside the average's */
  lastExploitability?: number;
  legalMass: number;
  /** greedy games against minimax, `gamesPerSeat` in each seat: the losses in each, the draws in all */
  vsMinimax?: { gamesPerSeat: number; losses: number[]; draws: number };
  policy: TabularPolicy;
}

/** The README's words for each game's information-state keys. */
export const KEY_FORMATS: Record<string, string> = {
  kuhn: "OpenSpiel's: the player's card (0 J, 1 Q, 2 K) then the moves so far as p (pass) and b (bet), e.g. '1pb'",
  leduc:
    "the player's card (0..5: J J Q Q K K, rank = card / 2), ':' and the public card once dealt, then '|' and each round's moves as f (fold), c (call or check), r (raise), e.g. '3:5|rc|c'",
  tictactoe: "the board, row by row, as x, o and . for empty, then the player to move, e.g. 'x.o......x'",
  rps: "'p' and the player (0 or 1): both move at once",
};

/**
 * `coevolve export-policy RUN --out FILE [--iteration N]`: the run's policy at its last
 * checkpoint (or N's) as a table, information-state key -> move -> probability (each seat on
 * its configured model: a language model's codes or an MLP's moves), with its measures, by the
 * same code as the run's evaluators.
 */
export async function exportPolicyCommand(
  dir: string,
  o: { out: string; iteration?: number },
): Promise<Omit<ExportedPolicy, 'policy'> & { out: string }> {
  const store = await RunStore.open(dir);
  const c = store.config;
  const checkpoint = o.iteration === undefined ? store.lastCheckpointDir() : store.checkpointDir(o.iteration);
  if (!checkpoint) throw new Error(`export-policy: ${store.dir} has no checkpoint yet`);
  if (!existsSync(join(checkpoint, 'loop.json'))) {
    const held = existsSync(join(store.dir, 'checkpoints'))
      ? readdirSync(join(store.dir, 'checkpoints')).sort().join(', ')
      : 'none';
    throw new Error(`export-policy: ${store.dir} has no checkpoint of iteration ${o.iteration}; held: ${held}`);
  }
  const plan = await planExperiment(c);
  if (!plan.arena.game) throw new Error(`export-policy: run ${store.dir} plays arena '${plan.arena.kind}', not a game`);
  await initBackend(c.backend, c.accelerate);
  const models: Record<string, TinyLM | MlpPolicy> = {};
  let tokenizer: CharTokenizer | undefined;
  for (const id of new Set(Object.values(c.roles).map((r) => r.model))) {
    const loaded = await loadModel(`${checkpoint}/${id}`);
    if (loaded.kind === 'tinylm') {
      if (!loaded.tokenizer)
        throw new Error(`export-policy: ${checkpoint}/${id} is a language model without a tokenizer`);
      tokenizer = loaded.tokenizer;
    }
    models[id] = loaded.model;
  }
  const game = plan.arena.game;
  const seats = Object.keys(plan.arena.roles).map((roleId) => ({
    role: plan.roles[roleId],
    model: models[c.roles[roleId].model],
  }));
  const byMinimax = c.evaluators.find((e) => e.kind === 'minimax');
  const temperature = byMinimax ? 0 : c.arena.temperature;
  const { table, legalMass } = seatsTable(game, seats, tokenizer ?? new CharTokenizer(), temperature);
  const out: ExportedPolicy = {
    game: game.name,
    keyFormat: KEY_FORMATS[game.name] ?? '',
    run: store.dir,
    checkpoint,
    which: 'last',
    temperature,
    legalMass,
    policy: table,
  };
  if (byMinimax) {
    const games = Number((byMinimax.options as { games?: number }).games ?? 200);
    const greedy = (s: GameState) => {
      const row = table[s.informationStateKey(s.currentPlayer())];
      return Number(Object.entries(row).reduce((best, e) => (e[1] > best[1] ? e : best))[0]);
    };
    const solver = new Minimax();
    const records = [0, 1].map((seat) =>
      playVsMinimax(() => game.newInitialState(), greedy, { seat, games, seed: 1_000_003 + seat }, solver),
    );
    out.vsMinimax = {
      gamesPerSeat: games,
      losses: records.map((r) => r.losses),
      draws: records.reduce((a, r) => a + r.draws, 0),
    };
  } else {
    const average = averageOf(c, checkpoint, game);
    if (average) {
      out.lastExploitability = exploitability(game, fromTable(table));
      out.which = 'average';
      out.policy = average;
    }
    const policy = fromTable(out.policy);
    out.exploitability = exploitability(game, policy);
    out.nashConv = nashConv(game, policy);
  }
  writeFileSync(o.out, JSON.stringify(out, null, 1) + '\n');
  for (const m of Object.values(models)) m.dispose();
  const { policy: _table, ...summary } = out;
  return { ...summary, out: o.out };
}

/** Fictitious play's average policy as the run's exploitability evaluator kept it in `checkpoint`, if it kept one. */
function averageOf(c: ExperimentConfig, checkpoint: string, game: Game): TabularPolicy | undefined {
  const ev = c.evaluators.find(
    (e) => e.kind === 'exploitability' && ((e.options as { average?: string }).average ?? 'none') !== 'none',
  );
  if (!ev) return undefined;
  const saved = JSON.parse(readFileSync(join(checkpoint, 'loop.json'), 'utf8')) as {
    evaluators?: Record<string, { average?: AverageState }>;
  };
  const state = saved.evaluators?.[ev.name]?.average;
  if (!state)
    throw new Error(`export-policy: ${checkpoint}/loop.json keeps no average policy for evaluator '${ev.name}'`);
  return AveragePolicy.restore(game, state).table();
}
