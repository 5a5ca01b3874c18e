/**
 * `coevolve pretrain`: a base made by supervised training, as a run. The run directory (the
 * run store: one writer, metrics, hashed checkpoints) holds its curves and its state every
 * `checkpointEvery` steps; `resumePretrain` continues a killed one to the same weights as an
 * unkilled run; the base itself is written to `out:` once training ends.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describeBackend, initBackend } from '../backend/index.js';
import { loadNative } from '../backend/native/library.js';
import { resolveTaskFamily } from '../registry.js';
import { SupervisedTrainer } from '../rl/supervised.js';
import { HfPolicy } from '../models/hf/policy.js';
import { startReplicas, workerCount } from '../parallel/replicas.js';
import { freeRunDir, RunStore, type MetricsRow } from '../store/run.js';
import { cellDifficulty, pretrainCorpus } from './corpus.js';
import { describeEvaluation, evaluateBase, evaluationMetrics, type Base, type BaseEvaluation } from './evaluate.js';
import { StepProgress } from './progress.js';
import { baseRecord, checkOut, writeBase } from './save.js';
import { parsePretrainConfig, type PretrainConfig } from './schema.js';
import { buildExamples, buildModel, shareUnusedRows } from './setup.js';
import { loadPretrainState, savePretrainState } from './state.js';

export interface PretrainResult {
  checkpoint: string;
  /** the run directory */
  run: string;
  steps: number;
  heldOut?: BaseEvaluation['heldOut'];
  heldOutSets: Record<string, number>;
  proposer?: Omit<NonNullable<BaseEvaluation['proposer']>, 'prompts'>;
  verdicts?: number;
  critic?: BaseEvaluation['critic'];
  memory?: BaseEvaluation['memory'];
  game?: BaseEvaluation['game'];
  flow?: BaseEvaluation['flow'];
  observer?: BaseEvaluation['observer'];
  bank?: BaseEvaluation['bank'];
  /** training seconds, over every process that trained the run */
  seconds: number;
}

export interface PretrainOptions {
  /** replace `out:` even if it holds files that are not a base's */
  overwrite?: boolean;
  /** where progress lines go (default stderr) */
  log?: (line: string) => void;
  /** the run directory (default `<outDir>/pretrain/<name>`, or the first free `-2`, `-3`... beside it) */
  runDir?: string;
  /** seconds between progress lines at most (default 30) */
  progressEvery?: number;
  /** called once the run directory is open and locked (the CLI releases the lock on Ctrl-C with it) */
  onOpen?: (store: RunStore<unknown>) => void;
}

/** The default run directory of a pretrain config. */
export const pretrainRunDir = (c: PretrainConfig) => join(c.outDir, 'pretrain', c.name);

/** Starts a new pretrain run of `config`; `out:` is checked before the run directory is made. */
export async function pretrain(config: PretrainConfig, o: PretrainOptions = {}): Promise<PretrainResult> {
  checkOut(config, o.overwrite);
  await checkConfig(config);
  const store = await RunStore.create(o.runDir ?? freeRunDir(pretrainRunDir(config)), config, {
    kind: 'pretrain',
    planned: config.train.steps,
    log: o.log,
  });
  (o.log ?? console.error)(`run directory: ${store.dir}`);
  return run(store, config, o, false);
}

/** Continues the pretrain run in `dir` from its last checkpoint (from the start, if it has none). */
export async function resumePretrain(dir: string, o: PretrainOptions = {}): Promise<PretrainResult> {
  const store = await RunStore.open(dir, { kind: 'pretrain', write: true, log: o.log });
  try {
    const config = parsePretrainConfig(store.config, `${dir}/config.yaml`);
    checkOut(config, o.overwrite);
    return await run(store, config, o, true);
  } catch (e) {
    store.close();
    throw e;
  }
}

async function run(
  store: RunStore<unknown>,
  config: PretrainConfig,
  o: PretrainOptions,
  resuming: boolean,
): Promise<PretrainResult> {
  const log = o.log ?? console.error;
  try {
    o.onOpen?.(store);
    const result = await train(store, config, { ...o, log }, resuming);
    await store.setStatus('done');
    return result;
  } catch (err) {
    await store.setStatus('failed', (err as Error).message);
    throw err;
  } finally {
    store.close();
  }
}

async function train(
  store: RunStore<unknown>,
  config: PretrainConfig,
  o: PretrainOptions & { log: (line: string) => void },
  resuming: boolean,
): Promise<PretrainResult> {
  const { log } = o;
  const { family, limits } = await checkConfig(config);
  const corpus = pretrainCorpus(config, family);
  const info = await initBackend(config.backend, config.accelerate);
  const compute = describeBackend(info);
  log(compute);
  const before = await store.recordCompute(compute);
  if (before) log(`the run computed on ${before} before: the resumed run rounds differently from an unkilled one`);
  const trainee = await buildModel(config);
  const { model } = trainee;
  const { examples, probes } = await buildExamples(config, trainee, family, corpus, log);
  if (config.sharedRows) shareUnusedRows(trainee, examples, !config.init, log);
  const trainer = new SupervisedTrainer(model, examples, {
    batchSize: config.train.batchSize,
    lr: config.train.lr,
    seed: config.seed,
  });
  const resumed = resuming ? await resumeState(store, model, trainer, log) : undefined;
  // replicas in worker threads copy a TinyLM (started after a resume, with its weights); a
  // Hugging Face model trains in this thread, its matrix products on every core
  const workers = workerCount(config.workers);
  const replicas =
    model.kind === 'tinylm' && workers > 1
      ? await startReplicas(workers, { backend: info.chosen, accelerate: config.accelerate }, { base: model })
      : undefined;
  if (replicas) log(`workers: ${workers} threads, each with a replica of the model`);
  if (model.kind === 'hf') loadNative()?.setThreads(workers);
  trainer.share(replicas && { replicas, id: 'base' });
  // the proposer's longest example bounds what it may write when sampled
  const proposalTokens = config.proposer
    ? Math.max(0, ...examples.slice(corpus.train.length).map((e) => e.completion.length))
    : 0;
  const base: Base = { ...trainee, family, corpus, probes, limits, replicas, proposalTokens };
  const watched = (e: BaseEvaluation) => stopMeasure(config.stopOn, e);
  const every = config.checkpointEvery ?? config.evalEvery;
  const progress = new StepProgress(config.train.steps, trainer.steps, log, o.progressEvery ?? 30);
  let seconds = resumed?.seconds ?? 0;
  let evaluation: BaseEvaluation;
  try {
    if (resumed) evaluation = resumed.evaluation;
    else {
      evaluation = await evaluateBase(base, config, config.seed);
      store.appendMetrics({ iteration: 0, ...evaluationMetrics(evaluation) });
      log(`step 0 ${describeEvaluation(evaluation)}`);
    }
    while (trainer.steps < config.train.steps && watched(evaluation) < config.stopAtAccuracy) {
      const t0 = performance.now();
      const loss = trainer.step();
      const dt = (performance.now() - t0) / 1000;
      await new Promise(setImmediate); // a step is synchronous: Ctrl-C and SIGTERM are heard between steps, not at the next evaluation
      seconds += dt;
      const steps = trainer.steps;
      const row: MetricsRow = { iteration: steps, 'losses/base/loss': loss, 'time/iteration_s': dt };
      const last = steps === config.train.steps;
      if (steps % config.evalEvery === 0 || last) {
        evaluation = await evaluateBase(base, config, config.seed + steps);
        Object.assign(row, evaluationMetrics(evaluation));
        log(`step ${steps} loss=${loss.toFixed(4)} ${describeEvaluation(evaluation)} ${seconds.toFixed(0)}s`);
      } else progress.step(steps, loss);
      store.appendMetrics(row);
      const ends = last || watched(evaluation) >= config.stopAtAccuracy;
      if (steps % every === 0 || ends) await checkpoint(store, model, trainer, evaluation, seconds);
    }
  } finally {
    trainer.dispose();
    await replicas?.close();
  }
  const record = baseRecord(config, trainer.steps, evaluation);
  await writeBase(config, trainee.base, record, corpus, o.overwrite);
  log(`base written to ${config.out} (${trainer.steps} steps)`);
  if (trainee.base.kind === 'hf') trainee.base.model.dispose();
  model.dispose();
  return result(config, store.dir, trainer.steps, evaluation, seconds);
}

/** What the config names, resolved and checked against each other before any work: its task family and bounds. */
async function checkConfig(config: PretrainConfig) {
  const family = await resolveTaskFamily(config.task.family, config.plugins);
  const limits = cellDifficulty(family, config.task.difficulty, {}, 'task.difficulty');
  if (config.stopOn !== 'heldout' && !isMetric(config.stopOn) && !Object.hasOwn(config.heldOutSets, config.stopOn))
    throw new Error(
      `stopOn: '${config.stopOn}' is not heldout, an eval/ measure or a heldOutSets name (${Object.keys(config.heldOutSets).join(', ') || 'none'})`,
    );
  if (config.proposer && (!family.parseProposal || !family.measure))
    throw new Error(`proposer: task family '${family.name}' cannot read proposals`);
  return { family, limits };
}

/** Loads the run's last checkpoint, if any, into the fresh model and trainer; without one the run restarts from step 0. */
async function resumeState(
  store: RunStore<unknown>,
  model: Parameters<typeof loadPretrainState>[1],
  trainer: SupervisedTrainer,
  log: (line: string) => void,
) {
  const from = await store.resume();
  const dir = store.lastCheckpointDir();
  if (!dir) {
    await store.truncateAfter(-1); // nothing durable: its step-0 evaluation is made again
    log(`resuming ${store.dir} from the start: it has no checkpoint`);
    return undefined;
  }
  const state = await loadPretrainState(dir, model, trainer);
  log(`resuming ${store.dir} from step ${from}`);
  return state;
}

/** Saves the state at this step, records it, and keeps the two newest (an HF state is the model and Adam's moments: hundreds of MB). */
async function checkpoint(
  store: RunStore<unknown>,
  model: Parameters<typeof savePretrainState>[1],
  trainer: SupervisedTrainer,
  evaluation: BaseEvaluation,
  seconds: number,
): Promise<void> {
  const dir = store.checkpointDir(trainer.steps);
  // the state holds the variables as they are: the shared row's copies brought up to it first
  if (model instanceof HfPolicy) model.base.spreadSharedRow();
  await savePretrainState(dir, model, trainer, { evaluation, seconds });
  await store.recordCheckpoint(trainer.steps, dir);
  const old = store.record.checkpoints.slice(0, -2);
  for (const c of old) await rm(join(store.dir, c.dir), { recursive: true, force: true });
  if (old.length) await store.forgetCheckpoints(old.map((c) => c.iteration));
}

function result(
  config: PretrainConfig,
  run: string,
  steps: number,
  e: BaseEvaluation,
  seconds: number,
): PretrainResult {
  const stats = e.proposer && { samples: e.proposer.samples, valid: e.proposer.valid, cells: e.proposer.cells };
  return {
    checkpoint: config.out,
    run,
    steps,
    heldOut: e.heldOut,
    heldOutSets: e.sets,
    ...(stats && { proposer: stats }),
    ...(e.verdicts !== undefined && { verdicts: e.verdicts }),
    ...(e.critic && { critic: e.critic }),
    ...(e.memory && { memory: e.memory }),
    ...(e.game && { game: e.game }),
    ...(e.flow !== undefined && { flow: e.flow }),
    ...(e.observer && { observer: e.observer }),
    ...(e.bank !== undefined && { bank: e.bank }),
    seconds,
  };
}

const isMetric = (stopOn: string) => stopOn.startsWith('eval/');

/**
 * What `stopOn` watches in an evaluation: held-out pass@1, an extra set's, or any of the
 * base's measures by its metric name (`eval/observer/copies`); a measure the base does not
 * have is an error, not a run that never stops.
 */
export function stopMeasure(stopOn: string, e: BaseEvaluation): number {
  if (stopOn === 'heldout') return e.heldOut?.pass1 ?? 0;
  if (!isMetric(stopOn)) return e.sets[stopOn];
  const m = evaluationMetrics(e);
  if (!(stopOn in m))
    throw new Error(`stopOn: this base has no measure '${stopOn}' (it has ${Object.keys(m).join(', ') || 'none'})`);
  return m[stopOn];
}
