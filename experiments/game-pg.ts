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
 *   npx tsx experiments/game-pg.ts [--out DIR | --resume DIR] [--save-every 50] [--game kuhn] [--iterations 400] [--episodes 512] [--lr 0.003] [--alpha 0.05]
 *     [--magnet uniform|moving] [--magnet-rate 0.05] [--average uniform|linear] [--baseline seat|infostate] [--weighting reach|infostate] [--seed 1]
 *     [--opponents self|latest|uniform|prioritised] [--pool-size 10] [--snapshot-every 25] [--elo-games 20]
 *     [--gradient sampled|all-actions|distill] [--critic sampled|counts|exact] [--eta 0.01] [--inner 10] [--fit-tol 0]
 *     [--lr-min-ratio 1] [--explore-moves 0] [--explore-share 0.5] [--baseline-decay 0.95]
 *
 * `--gradient` picks the update: `sampled` is the policy gradient of the moves played (above);
 * `all-actions` and `distill` use a tabular critic of each move's return (see allActions and
 * distill below; `--baseline-decay` is the critic's forgetting rate too).
 *
 * With `--opponents` other than self, the learner plays one seat of each episode (seat =
 * episode mod players) against a frozen snapshot drawn from the pool by that rule, a
 * snapshot joins every `--snapshot-every` iterations (the oldest leaves past `--pool-size`),
 * and every `--every` iterations a round robin of `--elo-games` sampled games per pair rates
 * uniform random play, every snapshot and the learner by Elo (random = 1000).
 */
import { initBackend } from '../src/backend/index.js';
import { gameByName, type GameState } from '../src/games/index.js';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AveragePolicy } from '../src/games/average.js';
import { encodeOptimizerState, restoreOptimizerState } from '../src/rl/optimizer-state.js';
import { exploitability, fromTable, type TabularPolicy } from '../src/games/exploitability.js';
import { representativeStates, tabulateMlp } from '../src/games/tabulate.js';
import { actionValues } from '../src/games/values.js';
import { allActionsAdvantages, mmdStep } from '../src/games/mmd.js';
import { MoveCritic } from '../src/games/critic.js';
import { Minimax, playVsMinimax } from '../src/games/minimax.js';
import * as tf from '@tensorflow/tfjs';
import { MlpPolicy } from '../src/models/mlp.js';
import { copyOf, fromWeights, loadRun, saveRun, weightsOf } from './game-run.js';
import { playLockstep, randomActor, roundRobin, scoreOf, type Actor } from '../src/games/match.js';
import { OpponentPool, POOL_SAMPLINGS, eloRatings, type PoolSampling } from '../src/games/pool.js';
import { JointTrainer, type TrainSample } from '../src/rl/trainer.js';
import { lrMultiplier } from '../src/rl/schedule.js';
import { Rng } from '../src/util/rng.js';

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
const arg = (name: string, fallback: string) =>
  (name === 'iterations' ? (cli(name) ?? saved?.args[name]) : (saved?.args[name] ?? cli(name))) ?? fallback;
const settings = [
  'measure',
  'game',
  'iterations',
  'episodes',
  'alpha',
  'seed',
  'every',
  'baseline-decay',
  'magnet',
  'magnet-rate',
  'average',
  'baseline',
  'lr',
  'save-every',
  'weighting',
  'opponents',
  'pool-size',
  'snapshot-every',
  'elo-games',
  'gradient',
  'critic',
  'lr-min-ratio',
  'eta',
  'inner',
  'fit-tol',
  'backend',
  'explore-moves',
  'explore-share',
];
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
const weighting = arg('weighting', 'reach');
// --gradient all-actions: a tabular critic Q(key, move) and one update row per visited state and legal move (see allActions)
const gradient = arg('gradient', 'sampled');
if (!['sampled', 'all-actions', 'distill'].includes(gradient))
  throw new Error(`--gradient: sampled, all-actions or distill, got '${gradient}'`);
const eta = Number(arg('eta', '0.01'));
const inner = Number(arg('inner', '10'));
// --fit-tol t: stop the distillation's steps once the mean KL(target || network) is under t (0: always --inner steps)
const fitTol = Number(arg('fit-tol', '0'));
let lastFit = { steps: 0, kl: 0 };
// --critic exact (with all-actions): exact action values at every information state instead of sampled ones, to tell the critic's noise from the MLP's limits
const critic = arg('critic', 'sampled');
if (!['sampled', 'counts', 'exact'].includes(critic))
  throw new Error(`--critic: sampled, counts or exact, got '${critic}'`);
if (!['reach', 'infostate'].includes(weighting)) throw new Error(`--weighting: reach or infostate, got '${weighting}'`);
if (!['seat', 'infostate'].includes(baselineKind))
  throw new Error(`--baseline: seat or infostate, got '${baselineKind}'`);
if (!['uniform', 'moving'].includes(magnetKind)) throw new Error(`--magnet: uniform or moving, got '${magnetKind}'`);
if (!['uniform', 'linear'].includes(averaging)) throw new Error(`--average: uniform or linear, got '${averaging}'`);

const saveEvery = Number(arg('save-every', '50'));
// --opponents self (both seats the learner) or a pool of frozen snapshots drawn by latest | uniform | prioritised
const opponentRule = arg('opponents', 'self');
if (opponentRule !== 'self' && !POOL_SAMPLINGS.includes(opponentRule as PoolSampling))
  throw new Error(`--opponents: self, ${POOL_SAMPLINGS.join(', ')}; got '${opponentRule}'`);
const poolSize = Number(arg('pool-size', '10'));
const snapshotEvery = Number(arg('snapshot-every', '25'));
const eloGames = Number(arg('elo-games', '20'));
// --explore-moves k --explore-share p: exploring starts; in the first p of each iteration's episodes the first k moves are
// uniformly random and not trained on, so the learner meets positions its own play avoids (an opponent's other openings)
const exploreMoves = Number(arg('explore-moves', '0'));
const exploreEpisodes = Math.round(Number(arg('explore-share', '0.5')) * Number(arg('episodes', '512')));
// a perfect-information game is measured against perfect play (its tables would need every
// one of tic-tac-toe's 550,000 move orders each iteration): uniform magnet, no average
const measure = arg('measure', game.name === 'tictactoe' ? 'minimax' : 'exploitability');
if (!['exploitability', 'minimax'].includes(measure))
  throw new Error(`--measure: exploitability or minimax, got '${measure}'`);
if (measure === 'minimax' && magnetKind !== 'uniform')
  throw new Error('--measure minimax keeps no policy table: use --magnet uniform');
const solver = new Minimax();
const representatives =
  critic === 'exact' ? representativeStates(game) : new Map<string, { player: number; state: GameState }>();
/** the MLP's greedy move: its likeliest legal move */
const greedy = (s: GameState) => {
  const legal = s.legalActions();
  const logits = tf.tidy(() => mlp.logits(tf.tensor2d([s.observationVector(s.currentPlayer())])).arraySync()[0]);
  return legal.reduce((best, a) => (logits[a] > logits[best] ? a : best), legal[0]);
};

// --backend: cpu by default (acting's tiny products are fastest there); wasm for large distillation fits
await initBackend(arg('backend', 'cpu') as 'cpu' | 'wasm', arg('backend', 'cpu') === 'cpu' ? 'off' : 'auto');
const mlp =
  saved?.mlp ??
  new MlpPolicy({ inputSize: game.observationSize, hiddenSizes: [64, 64], numActions: game.numActions, seed });
const lr = Number(arg('lr', '0.003'));
const lrMinRatio = Number(arg('lr-min-ratio', '1'));
if (!(lrMinRatio > 0 && lrMinRatio <= 1)) throw new Error(`--lr-min-ratio: in (0, 1], got ${lrMinRatio}`);
const trainer = new JointTrainer(
  { m: mlp },
  {
    lr,
    clipLow: 0.2,
    clipHigh: 0.2,
    klCoef: alpha,
    klKind: 'k3',
    aggMode: 'token-mean',
    maxGradNorm: 1,
    microBatch: 1 << 20,
  },
);
if (saved) await restoreOptimizerState(`${resumeDir}/checkpoint`, saved.attachments, trainer.optimizer('m'));
const poolOptions = { capacity: poolSize, sampling: opponentRule as PoolSampling };
const pool =
  opponentRule === 'self'
    ? undefined
    : saved?.state.pool
      ? OpponentPool.restore<MlpPolicy>(poolOptions, saved.state.pool, (n) =>
          fromWeights(mlp.config, saved.state.snapshots![n]),
        )
      : new OpponentPool<MlpPolicy>({ ...poolOptions, seed: seed * 7919 });
if (pool && pool.size === 0) pool.add('it0', copyOf(mlp));
const baseline: number[] = saved?.state.baseline ?? new Array(game.numPlayers).fill(0);
// --baseline infostate: an EMA of the returns seen at each information state (a tabular critic, read before it is updated)
const stateBaseline = new Map<string, number>(saved?.state.stateBaseline ?? []);
// --gradient all-actions and distill: the critic of each move's return (exact: none, the game tree answers)
const moveCritic = new MoveCritic(critic === 'counts' ? 'counts' : 'sampled', game.numActions, decay, saved?.state);
let drawSeed: number = saved?.state.drawSeed ?? seed * 100003;
const average = saved ? AveragePolicy.restore(game, saved.state.average) : new AveragePolicy(game);
// the magnet as a table; uniform to start (and throughout with --magnet uniform)
const magnet: TabularPolicy = saved?.state.magnet ?? (measure === 'minimax' ? {} : tabulateMlp(game, mlp));
if (!saved)
  for (const row of Object.values(magnet)) for (const a of Object.keys(row)) row[a] = 1 / Object.keys(row).length;
const magnetLogProb = (key: string, action: number, legal: boolean[]) =>
  Math.log(Math.max(1e-8, magnet[key]?.[String(action)] ?? 1 / legal.filter(Boolean).length));
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
      const vs = [0, 1].map((seat) =>
        playVsMinimax(() => game.newInitialState(), greedy, { seat, games: 200, seed: it * 2 + seat + 1 }, solver),
      );
      log({
        game: game.name,
        iteration: it,
        seed,
        alpha,
        vs_minimax: { seat0: vs[0], seat1: vs[1] },
        losses: vs[0].losses + vs[1].losses,
      });
    }
  }
  if (pool && it % every === 0) {
    // Elo over the pool: a round robin of sampled play among uniform random (1000 by definition), every snapshot and the learner
    const players: Record<string, Actor> = {
      random: randomActor,
      ...Object.fromEntries(pool.names().map((n) => [n, pool.snapshot(n)])),
      learner: mlp,
    };
    const elo = eloRatings(roundRobin(game, players, eloGames, { next: 900_000_007 + it }), 'random');
    log({
      game: game.name,
      iteration: it,
      elo: Object.fromEntries(Object.entries(elo).map(([k, v]) => [k, Math.round(v)])),
      opponents: opponentRule,
      drawn: Object.fromEntries(pool.names().map((n, i) => [n, +pool.probabilities()[i].toFixed(3)])),
    });
  }
  const current = measure === 'minimax' ? {} : tabulateMlp(game, mlp);
  if (measure === 'exploitability') average.add(current, averaging === 'linear' ? it + 1 : 1);
  if (magnetKind === 'moving' && it > 0) {
    for (const [key, row] of Object.entries(magnet))
      for (const a of Object.keys(row)) row[a] = (1 - magnetRate) * row[a] + magnetRate * current[key][a];
  }
  if (measure === 'exploitability' && it % every === 0) {
    log({
      game: game.name,
      iteration: it,
      seed,
      alpha,
      magnet: magnetKind,
      exploitability: +exploitability(game, fromTable(current)).toFixed(5),
      average: +exploitability(game, fromTable(average.table())).toFixed(5),
      ...(gradient === 'distill' ? { fit_steps: lastFit.steps, fit_kl: +lastFit.kl.toExponential(3) } : {}),
    });
  }
  if (it === iterations) break;
  // play every episode in lockstep: one batched act per actor and decision step; with a
  // pool, the learner takes seat (episode mod players) and a drawn snapshot the others
  const opponents = pool ? Array.from({ length: episodes }, () => pool!.sample()) : [];
  const actors: Record<string, Actor> = {
    learner: mlp,
    ...Object.fromEntries((pool?.names() ?? []).map((n) => [n, pool!.snapshot(n)])),
    ...(exploreMoves > 0 ? { explore: randomActor } : {}),
  };
  const seeds = { next: drawSeed };
  const actorOf = (ep: number, seat: number, st: GameState) => {
    if (ep < exploreEpisodes && st.history().length < exploreMoves) return 'explore';
    return pool && seat !== ep % game.numPlayers ? opponents[ep] : 'learner';
  };
  const { states, moves } = playLockstep(game, episodes, actorOf, actors, seeds);
  drawSeed = seeds.next;
  const taken = moves.filter((m) => m.actor === 'learner');
  if (pool) states.forEach((st, ep) => pool!.record(opponents[ep], scoreOf(st, ep % game.numPlayers)));
  const returns = states.map((s) => s.returns());
  const samples: TrainSample[] = taken.map((t) => ({
    model: 'm',
    role: `seat${t.seat}`,
    prompt: t.features,
    completion: [t.action],
    legal: t.legal,
    oldLogProbs: [t.logProb],
    advantages:
      returns[t.ep][t.seat] - (baselineKind === 'infostate' ? (stateBaseline.get(t.key) ?? 0) : baseline[t.seat]),
    refLogProbs: [magnetLogProb(t.key, t.action, t.legal)],
  }));
  // SPIRAL's baseline: read above, updated after
  const seen = new Map<string, number[]>();
  for (const t of taken) {
    const list = seen.get(t.key) ?? [];
    list.push(returns[t.ep][t.seat]);
    seen.set(t.key, list);
  }
  for (const [key, list] of seen)
    stateBaseline.set(
      key,
      decay * (stateBaseline.get(key) ?? 0) + (1 - decay) * (list.reduce((a, b) => a + b, 0) / list.length),
    );
  for (let p = 0; p < game.numPlayers; p++)
    baseline[p] = decay * baseline[p] + (1 - decay) * (returns.reduce((a, r) => a + r[p], 0) / returns.length);
  // --lr-min-ratio below 1: a cosine decay over the run (Adam keeps taking lr-sized steps in noise, so the rate sets the noise floor)
  trainer.setLearningRate(
    lr *
      lrMultiplier({ kind: lrMinRatio < 1 ? 'cosine' : 'constant', warmup: 0, minRatio: lrMinRatio }, it, iterations),
  );
  if (gradient === 'all-actions') trainer.step(allActions(taken, returns, current));
  else if (gradient === 'distill') allActions(taken, returns, current);
  else
    trainer.step(
      weighting === 'infostate'
        ? perState(
            samples,
            taken.map((t) => t.key),
            drawSeed++,
          )
        : samples,
    );
  if (pool && (it + 1) % snapshotEvery === 0) pool.add(`it${it + 1}`, copyOf(mlp))?.dispose();
  if (outDir && ((it + 1) % saveEvery === 0 || it + 1 === iterations)) {
    const snapshots = Object.fromEntries((pool?.names() ?? []).map((n) => [n, weightsOf(pool!.snapshot(n))]));
    const state = {
      next: it + 1,
      baseline,
      stateBaseline: [...stateBaseline],
      drawSeed,
      magnet,
      average: average.state(),
      pool: pool?.state(),
      snapshots,
      ...moveCritic.state(),
    };
    await saveRun(outDir, mlp, await encodeOptimizerState(trainer.optimizer('m')), {
      args: Object.fromEntries(settings.map((k) => [k, arg(k, '')]).filter(([, v]) => v !== '')),
      state,
    });
  }
}

/**
 * `--weighting infostate`: the same number of samples from every information state seen
 * (drawn with replacement, seeded), so that each state's policy moves by its own conditional
 * advantage as in MMD's behavioural form, instead of in proportion to how often it is
 * reached (the policy gradient's weighting, which leaves rare states nearly untrained).
 */
function perState(samples: TrainSample[], keys: string[], drawSeed: number): TrainSample[] {
  const byKey = new Map<string, number[]>();
  keys.forEach((k, i) => {
    const list = byKey.get(k);
    if (list) list.push(i);
    else byKey.set(k, [i]);
  });
  const each = Math.ceil(samples.length / byKey.size);
  const rng = new Rng(drawSeed);
  const out: TrainSample[] = [];
  for (const list of byKey.values()) for (let j = 0; j < each; j++) out.push(samples[list[rng.int(list.length)]]);
  return out;
}

/**
 * `--gradient all-actions` (the all-actions policy gradient of QPG / mean actor-critic,
 * Srinivasan et al. 2018, with MMD's magnet term moved into the values): the critic's Q is
 * updated from this iteration's returns (the first sight sets it), then every visited
 * information state gives one row per legal move a with advantage
 * pi(a) (Q'(a) - sum_b pi(b) Q'(b)), where Q'(a) = Q(a) - alpha log(pi(a) / magnet(a)) and an
 * unseen move takes the state's pi-weighted mean. At ratio 1 the rows' gradient is that of
 * sum_a pi(a) Q(a) - alpha KL(pi || magnet) at every state alike, as in MMD's behavioural
 * form, rather than only the sampled move's, weighted by how often the state is reached.
 */
function allActions(
  moves: { key: string; seat: number; features: number[]; action: number; legal: boolean[]; ep: number }[],
  returns: number[][],
  current: TabularPolicy,
): TrainSample[] {
  const rows: { key: string; seat: number; features: number[]; legal: boolean[]; q: (number | null)[] }[] = [];
  if (critic === 'exact') {
    // a diagnostic, not RL: every information state with its exact action values under the current policy
    for (const [k, v] of actionValues(game, fromTable(current))) {
      if (v.den === 0) continue;
      const key = k.slice(k.indexOf(':') + 1);
      const { player, state } = representatives.get(key)!;
      const q = new Array<number | null>(game.numActions).fill(null);
      v.legal.forEach((a, i) => {
        q[a] = v.num[i] / v.den;
      });
      rows.push({ key, seat: player, features: state.observationVector(player), legal: q.map((x) => x !== null), q });
    }
  } else {
    const first = new Map<string, (typeof moves)[number]>();
    for (const m of moves) if (!first.has(m.key)) first.set(m.key, m);
    for (const [key, q] of moveCritic.update(
      moves.map((m) => ({ key: m.key, action: m.action, value: returns[m.ep][m.seat] })),
    )) {
      const move = first.get(key)!;
      rows.push({ key, seat: move.seat, features: move.features, legal: move.legal, q });
    }
  }
  const logits = tf.tidy(() => mlp.logits(tf.tensor2d(rows.map((r) => r.features))).arraySync());
  const out: TrainSample[] = [];
  const fit: { features: number[]; legal: boolean[]; target: number[] }[] = [];
  rows.forEach((r, i) => {
    const { q } = r;
    const legal = r.legal.flatMap((ok, a) => (ok ? [a] : []));
    const top = Math.max(...legal.map((a) => logits[i][a]));
    const z = legal.reduce((t, a) => t + Math.exp(logits[i][a] - top), 0);
    const pi = new Map(legal.map((a) => [a, Math.exp(logits[i][a] - top) / z]));
    const known = legal.filter((a) => q[a] !== null);
    const mean = known.reduce((t, a) => t + pi.get(a)! * q[a]!, 0) / known.reduce((t, a) => t + pi.get(a)!, 0);
    const probs = legal.map((a) => pi.get(a)!);
    const logMagnet = legal.map((a) => magnetLogProb(r.key, a, r.legal));
    const values = legal.map((a) => q[a] ?? mean);
    if (gradient === 'distill') {
      // MMD's closed-form step at this state, with the critic's values: the target the network is fitted to
      const step = mmdStep(probs, logMagnet, values, alpha, eta);
      const target = new Array(game.numActions).fill(0);
      legal.forEach((a, k) => {
        target[a] = step[k];
      });
      fit.push({ features: r.features, legal: r.legal, target });
      return;
    }
    const advantages = allActionsAdvantages(probs, logMagnet, values, alpha);
    legal.forEach((a, k) => {
      out.push({
        model: 'm',
        role: `seat${r.seat}`,
        prompt: r.features,
        completion: [a],
        legal: r.legal,
        oldLogProbs: [Math.log(probs[k])],
        advantages: advantages[k],
      });
    });
  });
  if (gradient === 'distill') distill(fit);
  return out;
}

/**
 * `--gradient distill`: `--inner` Adam steps (the trainer's optimizer and rate) of the mean
 * cross-entropy from each visited state's MMD target to the network, every state weighted
 * alike. Adam's steps stay lr-sized however small the gradient, so following the policy
 * gradient itself leaves a noise floor set by the rate; fitting a target moves the policy by
 * MMD's step `--eta` instead, and the network only has to track it.
 */
function distill(rows: { features: number[]; legal: boolean[]; target: number[] }[]): void {
  if (!rows.length) return;
  const x = tf.tensor2d(rows.map((r) => r.features));
  const y = tf.tensor2d(rows.map((r) => r.target));
  const off = tf.tensor2d(rows.map((r) => r.legal.map((ok) => (ok ? 0 : -1e9))));
  // the target's own entropy term, so that the loss minus it is the mean KL(target || network)
  const crossEntropy = () => tf.neg(tf.sum(y.mul(tf.logSoftmax(mlp.logits(x).add(off))))).div(rows.length) as tf.Scalar;
  const selfTerm = tf.tidy(
    () =>
      tf
        .sum(y.mul(tf.log(y.add(1e-30))))
        .div(rows.length)
        .dataSync()[0],
  );
  const meanKl = () => tf.tidy(() => selfTerm + crossEntropy().dataSync()[0]);
  let steps = 0;
  for (; steps < inner; steps++) {
    // once the network holds the target, further Adam steps (lr-sized whatever the gradient) would only add drift
    if (fitTol > 0 && meanKl() < fitTol) break;
    trainer.optimizer('m').minimize(crossEntropy, false, mlp.variables());
  }
  lastFit = { steps, kl: meanKl() };
  tf.dispose([x, y, off]);
}
