/**
 * Method selection for the games issue: policy-gradient self-play on a poker game with one
 * MLP in both seats (the seat is the role), measured by exact exploitability of its table.
 * The update is the deep-RL form of magnetic mirror descent (Sokota et al. 2022): PPO's
 * clipped ratio (the proximal term) plus `alpha` x KL to a uniform magnet, written as
 * reference log-probs log(1/|legal|) for the trainer's KL term. Advantages are the seat's
 * return minus SPIRAL's per-seat baseline (an EMA of that seat's returns, read before it is
 * updated), or with `--baseline infostate` an EMA per information state (a tabular critic:
 * still action-independent, so unbiased, and far less noisy than one baseline per seat).
 * Legal moves are masked when acting and when scoring.
 *
 * The magnet is uniform (`--magnet uniform`, which converges to a regularised equilibrium at
 * best) or moving (`--magnet moving --magnet-rate b`: after each update the magnet's table moves
 * a fraction b of the way to the policy's, so the regularisation target follows the learner
 * and the fixed point becomes a Nash equilibrium, MMD's moving-magnet variant). Logged: the
 * exploitability of the last policy and of the average policy of fictitious play (every
 * iterate's table weighted by own reach, `--average uniform|linear`).
 *
 *   npx tsx src/experiments/game-pg.ts [--game kuhn] [--iterations 400] [--episodes 512] [--lr 0.003] [--alpha 0.05]
 *     [--magnet uniform|moving] [--magnet-rate 0.05] [--average uniform|linear] [--baseline seat|infostate] [--seed 1]
 */
import { initBackend } from '../backend/index.js';
import { gameByName, type GameState } from '../games/index.js';
import { AveragePolicy } from '../games/average.js';
import { exploitability, fromTable, type TabularPolicy } from '../games/exploitability.js';
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
const magnetKind = arg('magnet', 'uniform');
const magnetRate = Number(arg('magnet-rate', '0.05'));
const averaging = arg('average', 'uniform');
const baselineKind = arg('baseline', 'seat');
if (!['seat', 'infostate'].includes(baselineKind)) throw new Error(`--baseline: seat or infostate, got '${baselineKind}'`);
if (!['uniform', 'moving'].includes(magnetKind)) throw new Error(`--magnet: uniform or moving, got '${magnetKind}'`);
if (!['uniform', 'linear'].includes(averaging)) throw new Error(`--average: uniform or linear, got '${averaging}'`);

await initBackend('cpu', 'off'); // tiny products: the cpu kernels are fastest here
const mlp = new MlpPolicy({ inputSize: game.observationSize, hiddenSizes: [64, 64], numActions: game.numActions, seed });
const trainer = new JointTrainer({ m: mlp }, { lr: Number(arg('lr', '0.003')), clipLow: 0.2, clipHigh: 0.2, klCoef: alpha, klKind: 'k3', aggMode: 'token-mean', maxGradNorm: 1, microBatch: 1 << 20 });
const baseline = new Array(game.numPlayers).fill(0);
// --baseline infostate: an EMA of the returns seen at each information state (a tabular critic, read before it is updated)
const stateBaseline = new Map<string, number>();
let drawSeed = seed * 100003;
const average = new AveragePolicy(game);
// the magnet as a table; uniform to start (and throughout with --magnet uniform)
const magnet: TabularPolicy = tabulateMlp(game, mlp);
for (const row of Object.values(magnet)) for (const a of Object.keys(row)) row[a] = 1 / Object.keys(row).length;

for (let it = 0; it <= iterations; it++) {
  const current = tabulateMlp(game, mlp);
  average.add(current, averaging === 'linear' ? it + 1 : 1);
  if (magnetKind === 'moving' && it > 0) {
    for (const [key, row] of Object.entries(magnet)) for (const a of Object.keys(row)) row[a] = (1 - magnetRate) * row[a] + magnetRate * current[key][a];
  }
  if (it % every === 0) {
    console.log(JSON.stringify({
      game: game.name, iteration: it, seed, alpha, magnet: magnetKind, exploitability: +exploitability(game, fromTable(current)).toFixed(5),
      average: +exploitability(game, fromTable(average.table())).toFixed(5),
    }));
  }
  if (it === iterations) break;
  // play every episode in lockstep: one batched act per decision step
  const states: GameState[] = Array.from({ length: episodes }, () => game.newInitialState());
  const taken: { ep: number; seat: number; key: string; features: number[]; action: number; logProb: number; legal: boolean[] }[] = [];
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
      return { i, seat, key: s.informationStateKey(seat), features: s.observationVector(seat), legal: Array.from({ length: game.numActions }, (_, a) => legalSet.has(a)) };
    });
    const r = mlp.act(rows.map((x) => x.features), { legal: rows.map((x) => x.legal), seed: drawSeed++ });
    rows.forEach((x, k) => {
      taken.push({ ep: x.i, seat: x.seat, key: x.key, features: x.features, action: r.actions[k], logProb: r.logProbs[k], legal: x.legal });
      states[x.i].apply(r.actions[k]);
    });
  }
  const returns = states.map((s) => s.returns());
  const samples: TrainSample[] = taken.map((t) => ({
    model: 'm', role: `seat${t.seat}`, prompt: t.features, completion: [t.action], legal: t.legal,
    oldLogProbs: [t.logProb], advantages: returns[t.ep][t.seat] - (baselineKind === 'infostate' ? stateBaseline.get(t.key) ?? 0 : baseline[t.seat]),
    refLogProbs: [Math.log(Math.max(1e-8, magnet[t.key][String(t.action)]))],
  }));
  // SPIRAL's baseline: read above, updated after
  const seen = new Map<string, number[]>();
  for (const t of taken) {
    const list = seen.get(t.key) ?? [];
    list.push(returns[t.ep][t.seat]);
    seen.set(t.key, list);
  }
  for (const [key, list] of seen) stateBaseline.set(key, decay * (stateBaseline.get(key) ?? 0) + (1 - decay) * (list.reduce((a, b) => a + b, 0) / list.length));
  for (let p = 0; p < game.numPlayers; p++) baseline[p] = decay * baseline[p] + (1 - decay) * (returns.reduce((a, r) => a + r[p], 0) / returns.length);
  trainer.step(samples);
}
