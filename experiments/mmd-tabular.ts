/**
 * A tabular reference for the games issue: magnetic mirror descent (Sokota et al. 2022) in
 * behavioural form with exact action values, on every information state at once,
 *   π_{t+1}(·|s) ∝ [π_t(·|s) · ρ(·|s)^{αη} · exp(η q_t(s, ·))]^{1/(1+αη)},
 * q_t(s, a) being the player's expected return after a at s under π_t (histories weighted by
 * the others' and chance's reach), ρ uniform. It says which step size and magnet weight reach
 * low exploitability before an RL version (sampled q, an MLP policy) is built on it.
 *
 *   npx tsx experiments/mmd-tabular.ts [--game kuhn] [--iterations 2000] [--eta 0.1] [--alpha 0.05] [--out table.json]
 *
 * `--out` writes the last table (information-state key -> move -> probability, the format
 * export-policy writes), for fitting a network to it.
 */
import { writeFileSync } from 'node:fs';
import { gameByName } from '../src/games/index.js';
import { exploitability, type GamePolicy } from '../src/games/exploitability.js';
import { actionValues } from '../src/games/values.js';
import { mmdStep } from '../src/games/mmd.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

type Table = Map<string, { legal: number[]; p: number[] }>;

function policyOf(table: Table): GamePolicy {
  return (key, legal) => {
    const row = table.get(key);
    return row ? legal.map((a) => row.p[row.legal.indexOf(a)]) : legal.map(() => 1 / legal.length);
  };
}

const game = gameByName(arg('game', 'kuhn'));
const iterations = Number(arg('iterations', '2000'));
const eta = Number(arg('eta', '0.1'));
const alpha = Number(arg('alpha', '0.05'));
const table: Table = new Map();
for (let t = 0; t <= iterations; t++) {
  // the table's keys carry the player (two players may share a key text), the policy asks without
  const plain: Table = new Map([...table].map(([k, v]) => [k.slice(k.indexOf(':') + 1), v]));
  const pi = policyOf(plain);
  if (t % Math.max(1, Math.floor(iterations / 10)) === 0)
    console.log(
      JSON.stringify({
        game: game.name,
        iteration: t,
        eta,
        alpha,
        exploitability: +exploitability(game, pi).toFixed(5),
      }),
    );
  if (t === iterations) break;
  for (const [key, q] of actionValues(game, pi)) {
    const old = table.get(key)?.p ?? q.legal.map(() => 1 / q.legal.length);
    const qs = q.num.map((n) => (q.den > 0 ? n / q.den : 0));
    table.set(key, {
      legal: q.legal,
      p: mmdStep(
        old,
        q.legal.map(() => Math.log(1 / q.legal.length)),
        qs,
        alpha,
        eta,
      ),
    });
  }
}
const out = process.argv.includes('--out') ? arg('out', '') : '';
if (out) {
  const plain = Object.fromEntries(
    [...table].map(([k, v]) => [
      k.slice(k.indexOf(':') + 1),
      Object.fromEntries(v.legal.map((a, i) => [String(a), v.p[i]])),
    ]),
  );
  writeFileSync(out, JSON.stringify(plain));
}
