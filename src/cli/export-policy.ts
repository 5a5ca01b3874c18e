import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GameArena } from '../../arenas/game.js';
import { initBackend } from '../backend/index.js';
import { planExperiment } from '../engine/registry.js';
import { textPolicyTable } from '../engine/evaluators/exploitability.js';
import { exploitability, fromTable, nashConv, type TabularPolicy } from '../games/exploitability.js';
import { loadModel } from '../models/store.js';
import type { TinyLM } from '../models/tinylm.js';
import { RunStore } from '../store/run.js';

/** What `export-policy` writes: the game, how its keys read, the policy, and its measures. */
export interface ExportedPolicy {
  game: string;
  keyFormat: string;
  run: string;
  checkpoint: string;
  exploitability: number;
  nashConv: number;
  legalMass: number;
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
 * `coevolve export-policy RUN --out FILE [--iteration N]`: the run's text policy at its last checkpoint (or N's) as a
 * table, information-state key -> move -> probability (each seat on its configured model),
 * with its exploitability, measured by the same evaluator as during training.
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
  if (!(plan.arena instanceof GameArena))
    throw new Error(`export-policy: run ${store.dir} plays arena '${plan.arena.kind}', not a game`);
  await initBackend(c.backend, c.accelerate);
  const models: Record<string, TinyLM> = {};
  let tokenizer;
  for (const id of new Set(Object.values(c.roles).map((r) => r.model))) {
    const loaded = await loadModel(`${checkpoint}/${id}`);
    if (loaded.kind !== 'tinylm' || !loaded.tokenizer)
      throw new Error(`export-policy: ${checkpoint}/${id} is not a language model with a tokenizer`);
    models[id] = loaded.model as TinyLM;
    tokenizer = loaded.tokenizer;
  }
  const game = plan.arena.game;
  const seats = Object.keys(plan.arena.roles).map((roleId) => ({
    role: plan.roles[roleId],
    model: models[c.roles[roleId].model],
  }));
  const { table, legalMass } = textPolicyTable(game, seats, tokenizer!, c.arena.temperature);
  const policy = fromTable(table);
  const out: ExportedPolicy = {
    game: game.name,
    keyFormat: KEY_FORMATS[game.name] ?? '',
    run: store.dir,
    checkpoint,
    exploitability: exploitability(game, policy),
    nashConv: nashConv(game, policy),
    legalMass,
    policy: table,
  };
  writeFileSync(o.out, JSON.stringify(out, null, 1) + '\n');
  for (const m of Object.values(models)) m.dispose();
  const { policy: _table, ...summary } = out;
  return { ...summary, out: o.out };
}
