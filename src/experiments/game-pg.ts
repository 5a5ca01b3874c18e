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
 *   npx tsx src/experiments/game-pg.ts [--out DIR | --resume DIR] [--save-every 50] [--game kuhn] [--iterations 400] [--episodes 512] [--lr 0.003] [--alpha 0.05]
 *     [--magnet uniform|moving] [--magnet-rate 0.05] [--average uniform|linear] [--baseline seat|infostate] [--seed 1]
 */
import { initBackend } from '../backend/index.js';
import { gameByName, type GameState } from '../games/index.js';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AveragePolicy, type AverageState } from '../games/average.js';
import type { Attachments } from '../models/checkpoint.js';
import { loadModel, saveModel } from '../models/store.js';
import { encodeOptimizerState, restoreOptimizerState } from '../rl/optimizer-state.js';
import { exploitability, fromTable, type TabularPolicy } from '../games/exploitability.js';
import { tabulateMlp } from '../games/tabulate.js';
import { Minimax, playVsMinimax } from '../games/minimax.js';
import * as tf from '@tensorflow/tfjs';
import { MlpPolicy } from '../models/mlp.js';
import { JointTrainer, type TrainSample } from '../rl/trainer.js';

const cli = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
// --out DIR saves the run (progress.jsonl, and a checkpoint every --save-every iterations);
// --resume DIR continues it with its own settings (only --iterations may change)
const resumeDir = cli('resume');
const outDir = resumeDir ?? cli('out');
const saved = resumeDir ? await loadRun(resumeDir) : undefined;
// a resumed run keeps its settings; --iterations may extend it
const arg = (name: string, fallback: string) => (name === 'iterations' ? cli(name) ?? saved?.args[name] : saved?.args[name] ?? cli(name)) ?? fallback;
const settings = ['measure', 'game', 'iterations', 'episodes', 'alpha', 'seed', 'every', 'baseline-decay', 'magnet', 'magnet-rate', 'average', 'baseline', 'lr', 'save-every'];
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

const saveEvery = Number(arg('save-every', '50'));
// a perfect-information game is measured against perfect play (its tables would need every
// one of tic-tac-toe's 550,000 move orders each iteration): uniform magnet, no average
const measure = arg('measure', game.name === 'tictactoe' ? 'minimax' : 'exploitability');
if (!['exploitability', 'minimax'].includes(measure)) throw new Error(`--measure: exploitability or minimax, got '${measure}'`);
if (measure === 'minimax' && magnetKind !== 'uniform') throw new Error('--measure minimax keeps no policy table: use --magnet uniform');
const solver = new Minimax();
/** the MLP's greedy move: its likeliest legal move */
const greedy = (s: GameState) => {
  const legal = s.legalActions();
  const logits = tf.tidy(() => mlp.logits(tf.tensor2d([s.observationVector(s.currentPlayer())])).arraySync()[0]);
  return legal.reduce((best, a) => (logits[a] > logits[best] ? a : best), legal[0]);
};

await initBackend('cpu', 'off'); // tiny products: the cpu kernels are fastest here
const mlp = saved?.mlp ?? new MlpPolicy({ inputSize: game.observationSize, hiddenSizes: [64, 64], numActions: game.numActions, seed });
const trainer = new JointTrainer({ m: mlp }, { lr: Number(arg('lr', '0.003')), clipLow: 0.2, clipHigh: 0.2, klCoef: alpha, klKind: 'k3', aggMode: 'token-mean', maxGradNorm: 1, microBatch: 1 << 20 });
if (saved) await restoreOptimizerState(`${resumeDir}/checkpoint`, saved.attachments, trainer.optimizer('m'));
const baseline: number[] = saved?.state.baseline ?? new Array(game.numPlayers).fill(0);
// --baseline infostate: an EMA of the returns seen at each information state (a tabular critic, read before it is updated)
const stateBaseline = new Map<string, number>(saved?.state.stateBaseline ?? []);
let drawSeed: number = saved?.state.drawSeed ?? seed * 100003;
const average = saved ? AveragePolicy.restore(game, saved.state.average) : new AveragePolicy(game);
// the magnet as a table; uniform to start (and throughout with --magnet uniform)
const magnet: TabularPolicy = saved?.state.magnet ?? (measure === 'minimax' ? {} : tabulateMlp(game, mlp));
if (!saved) for (const row of Object.values(magnet)) for (const a of Object.keys(row)) row[a] = 1 / Object.keys(row).length;
const magnetLogProb = (key: string, action: number, legal: boolean[]) => Math.log(Math.max(1e-8, magnet[key]?.[String(action)] ?? 1 / legal.filter(Boolean).length));
if (outDir) mkdirSync(outDir, { recursive: true });
const log = (line: Record<string, unknown>) => {
  console.log(JSON.stringify(line));
  if (outDir) appendFileSync(join(outDir, 'progress.jsonl'), JSON.stringify(line) + '\n');
};
const first = saved ? saved.state.next : 0;
if (saved) log({ resumed: resumeDir, at: first });

for (let it = first; it <= iterations; it++) {
  if (measure === 'minimax') {
    if (it % every === 0) {
      const vs = [0, 1].map((seat) => playVsMinimax(() => game.newInitialState(), greedy, { seat, games: 200, seed: it * 2 + seat + 1 }, solver));
      log({ game: game.name, iteration: it, seed, alpha, vs_minimax: { seat0: vs[0], seat1: vs[1] }, losses: vs[0].losses + vs[1].losses });
    }
  }
  const current = measure === 'minimax' ? {} : tabulateMlp(game, mlp);
  if (measure === 'exploitability') average.add(current, averaging === 'linear' ? it + 1 : 1);
  if (magnetKind === 'moving' && it > 0) {
    for (const [key, row] of Object.entries(magnet)) for (const a of Object.keys(row)) row[a] = (1 - magnetRate) * row[a] + magnetRate * current[key][a];
  }
  if (measure === 'exploitability' && it % every === 0) {
    log({
      game: game.name, iteration: it, seed, alpha, magnet: magnetKind, exploitability: +exploitability(game, fromTable(current)).toFixed(5),
      average: +exploitability(game, fromTable(average.table())).toFixed(5),
    });
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
    refLogProbs: [magnetLogProb(t.key, t.action, t.legal)],
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
  if (outDir && ((it + 1) % saveEvery === 0 || it + 1 === iterations)) {
    const state = { next: it + 1, baseline, stateBaseline: [...stateBaseline], drawSeed, magnet, average: average.state() };
    await saveRun(outDir, mlp, await encodeOptimizerState(trainer.optimizer('m')), { args: Object.fromEntries(settings.map((k) => [k, arg(k, '')]).filter(([, v]) => v !== '')), state });
  }
}

interface RunState { next: number; baseline: number[]; stateBaseline: [string, number][]; drawSeed: number; magnet: TabularPolicy; average: AverageState }

/**
 * Saves the model, its optimizer and the run's state: the checkpoint is written beside the
 * old one and renamed over it, so a kill mid-save leaves the previous checkpoint whole;
 * progress lines after the checkpoint are dropped when the run resumes.
 */
async function saveRun(dir: string, mlp: MlpPolicy, optimizer: Attachments, extra: { args: Record<string, string>; state: RunState }): Promise<void> {
  const next = join(dir, 'checkpoint.next');
  rmSync(next, { recursive: true, force: true });
  await saveModel(next, mlp, undefined, extra as unknown as Record<string, unknown>, optimizer);
  rmSync(join(dir, 'checkpoint'), { recursive: true, force: true });
  renameSync(next, join(dir, 'checkpoint'));
}

async function loadRun(dir: string): Promise<{ mlp: MlpPolicy; attachments: Record<string, Uint8Array>; args: Record<string, string>; state: RunState }> {
  const where = join(dir, 'checkpoint');
  if (!existsSync(where)) throw new Error(`--resume: ${where} does not exist (runs save every --save-every iterations)`);
  const loaded = await loadModel(where);
  if (loaded.kind !== 'mlp') throw new Error(`--resume: ${where} holds a ${loaded.kind}, not an mlp`);
  const extra = loaded.extra as unknown as { args: Record<string, string>; state: RunState };
  const progress = join(dir, 'progress.jsonl');
  if (existsSync(progress)) {
    // keep the lines up to the checkpoint: later ones are replayed
    const kept = readFileSync(progress, 'utf8').split('\n').filter((l) => l && (JSON.parse(l).iteration ?? -1) < extra.state.next && !JSON.parse(l).resumed);
    writeFileSync(progress, kept.map((l) => l + '\n').join(''));
  }
  return { mlp: loaded.model, attachments: loaded.attachments, args: extra.args, state: extra.state };
}
