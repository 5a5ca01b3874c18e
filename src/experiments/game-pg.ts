/**
 * Method selection for the games issue: policy-gradient self-play on a poker game with one
 * MLP in both seats (the seat is the role), measured by exact exploitability of its table.
 * The update is the deep-RL form of magnetic mirror descent (Sokota et al. 2022): PPO's
 * clipped ratio (the proximal term) plus `alpha` x KL to a uniform magnet, written as
 * reference log-probs log(1/|legal|) for the trainer's KL term. Advantages are the seat's
 * return minus SPIRAL's per-seat baseline (an EMA of that seat's returns, read before it is
 * updated). Legal moves are masked when acting and when scoring.
 *
 *   npx tsx src/experiments/game-pg.ts [--game kuhn] [--iterations 400] [--episodes 512] [--lr 0.003] [--alpha 0.05] [--seed 1]
 */
import { initBackend } from '../backend/index.js';
import { gameByName, type GameState } from '../games/index.js';
import { exploitability, fromTable } from '../games/exploitability.js';
import { tabulateMlp } from '../games/tabulate.js';
import { MlpPolicy } from '../models/mlp.js';
import { JointTrainer, type TrainSample } from '../rl/trainer.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const game = gameByName(arg('game', 'kuhn'));
const iterations = Number(arg('iterations', '400'));
const episodes = Number(arg('episodes', '512'));
const alpha = Number(arg('alpha', '0.05'));
const seed = Number(arg('seed', '1'));
const every = Number(arg('every', '25'));
const decay = Number(arg('baseline-decay', '0.95'));

await initBackend('cpu', 'off'); // tiny products: the cpu kernels are fastest here
const mlp = new MlpPolicy({ inputSize: game.observationSize, hiddenSizes: [64, 64], numActions: game.numActions, seed });
const trainer = new JointTrainer({ m: mlp }, { lr: Number(arg('lr', '0.003')), clipLow: 0.2, clipHigh: 0.2, klCoef: alpha, klKind: 'k3', aggMode: 'token-mean', maxGradNorm: 1, microBatch: 1 << 20 });
const baseline = new Array(game.numPlayers).fill(0);
let drawSeed = seed * 100003;

for (let it = 0; it <= iterations; it++) {
  if (it % every === 0) console.log(JSON.stringify({ game: game.name, iteration: it, seed, alpha, exploitability: +exploitability(game, fromTable(tabulateMlp(game, mlp))).toFixed(5) }));
  if (it === iterations) break;
  // play every episode in lockstep: one batched act per decision step
  const states: GameState[] = Array.from({ length: episodes }, () => game.newInitialState());
  const taken: { ep: number; seat: number; features: number[]; action: number; logProb: number; legal: boolean[] }[] = [];
  let live = states.map((_, i) => i);
  let chanceDraw = drawSeed++;
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
      const s = states[i], seat = s.currentPlayer();
      const legalSet = new Set(s.legalActions());
      return { i, seat, features: s.observationVector(seat), legal: Array.from({ length: game.numActions }, (_, a) => legalSet.has(a)) };
    });
    const r = mlp.act(rows.map((x) => x.features), { legal: rows.map((x) => x.legal), seed: drawSeed++ });
    rows.forEach((x, k) => {
      taken.push({ ep: x.i, seat: x.seat, features: x.features, action: r.actions[k], logProb: r.logProbs[k], legal: x.legal });
      states[x.i].apply(r.actions[k]);
    });
  }
  const returns = states.map((s) => s.returns());
  const samples: TrainSample[] = taken.map((t) => ({
    model: 'm', role: `seat${t.seat}`, prompt: t.features, completion: [t.action], legal: t.legal,
    oldLogProbs: [t.logProb], advantages: returns[t.ep][t.seat] - baseline[t.seat],
    refLogProbs: [-Math.log(t.legal.filter(Boolean).length)], // the uniform magnet
  }));
  // SPIRAL's baseline: read above, updated after
  for (let p = 0; p < game.numPlayers; p++) baseline[p] = decay * baseline[p] + (1 - decay) * (returns.reduce((a, r) => a + r[p], 0) / returns.length);
  trainer.step(samples);
}
