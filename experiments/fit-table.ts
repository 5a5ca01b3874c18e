/**
 * Can the game MLP represent a good policy at all? Fits `MlpPolicy` by cross-entropy to a
 * policy table (for example mmd-tabular's `--out`) at every information state, equally
 * weighted, and logs the fitted network's exact exploitability. A floor here is a floor of
 * the network and its features, not of any RL method.
 *
 *   npx tsx experiments/fit-table.ts --game leduc --table table.json [--hidden 64,64] [--steps 3000] [--lr 0.001]
 */
import * as tf from '@tensorflow/tfjs';
import { readFileSync } from 'node:fs';
import { initBackend } from '../src/backend/index.js';
import { gameByName } from '../src/games/index.js';
import { exploitability, fromTable, type TabularPolicy } from '../src/games/exploitability.js';
import { representativeStates, tabulateMlp } from '../src/games/tabulate.js';
import { MlpPolicy } from '../src/models/mlp.js';
import { adam } from '../src/backend/fused/adam.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
await initBackend('cpu', 'off');
const game = gameByName(arg('game', 'leduc'));
const target = JSON.parse(readFileSync(arg('table', ''), 'utf8')) as TabularPolicy;
const hidden = arg('hidden', '64,64').split(',').map(Number);
const steps = Number(arg('steps', '3000'));
const mlp = new MlpPolicy({
  inputSize: game.observationSize,
  hiddenSizes: hidden,
  numActions: game.numActions,
  seed: 1,
});
const rows = [...representativeStates(game)].map(([key, { player, state }]) => {
  const t = new Array(game.numActions).fill(0),
    legal = new Array(game.numActions).fill(0);
  for (const a of state.legalActions()) {
    legal[a] = 1;
    t[a] = target[key]?.[String(a)] ?? 0;
  }
  return { features: state.observationVector(player), t, legal };
});
const x = tf.tensor2d(rows.map((r) => r.features)),
  y = tf.tensor2d(rows.map((r) => r.t)),
  mask = tf.tensor2d(rows.map((r) => r.legal));
const optimizer = adam(Number(arg('lr', '0.001')), 0.9, 0.999, 1e-8);
console.log(
  JSON.stringify({ game: game.name, states: rows.length, target: +exploitability(game, fromTable(target)).toFixed(5) }),
);
for (let s = 0; s <= steps; s++) {
  if (s % Math.max(1, Math.floor(steps / 10)) === 0)
    console.log(
      JSON.stringify({
        step: s,
        hidden,
        exploitability: +exploitability(game, fromTable(tabulateMlp(game, mlp))).toFixed(5),
      }),
    );
  if (s === steps) break;
  optimizer.minimize(
    () => {
      const logits = mlp.logits(x).add(mask.sub(1).mul(1e9));
      return tf.neg(tf.sum(y.mul(tf.logSoftmax(logits)))).div(rows.length) as tf.Scalar;
    },
    false,
    mlp.variables(),
  );
}
