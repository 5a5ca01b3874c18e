import * as tf from '@tensorflow/tfjs';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { firstValueFrom, toArray } from 'rxjs';
import { Agents } from '../core/agents.js';
import { playGroups } from '../core/operators/play-groups.js';
import { describeBackend, describeKernels, initBackend } from '../backend/index.js';
import { loadNative } from '../backend/native/library.js';
import type { ExperimentConfig } from '../config/schema.js';
import { createProgress } from '../progress/index.js';
import { encodeOptimizerState, restoreOptimizerState } from '../rl/optimizer-state.js';
import { refSyncDue, syncTargetModel } from '../rl/ref-sync.js';
import { lrMultiplier } from '../rl/schedule.js';
import { JointTrainer } from '../rl/trainer.js';
import { startReplicas, workerCount, type Replicas } from '../parallel/replicas.js';
import { BatchingServer } from '../serving/server.js';
import { RemoteModelError, remoteServers } from '../openai/remote.js';
import { InferenceRollouts } from '../openai/rollouts.js';
import { RedisRollouts, RolloutJobFailed } from '../distributed/learner.js';
import { correctStale } from '../rl/stale.js';
import type { Episode } from '../core/types.js';
import type { RunStore } from '../store/run.js';
import { evalMetrics, type Evaluator } from './evaluators/index.js';
import { freshLoopState, loadLoopState, saveLoopState } from './loop-state.js';
import {
  addReferenceLogProbs,
  hashSeed,
  iterationTasks,
  miniBatches,
  recordWrittenTasks,
  roleTraining,
  stepMetrics,
} from './loop-parts.js';
import { loadModels, saveModels, saveReferences, textModels, type LoadedModels } from './models.js';
import { phaseIndex, trainingRoles } from './phases.js';
import { preflight, type Checked } from './preflight.js';
import { GradientProbe } from './probe.js';
import type { Definition } from '../plugins/definition.js';
import { planExperiment } from '../registry.js';
import type { Plan } from './plan.js';
import { rolloutMetrics, scoreEpisodes, toSamples } from './rewards.js';
import { addMagnetLogProbs, learnerUpdates, makeLearners } from './learners.js';
import { ActServer } from '../serving/act-server.js';
import { CollapseWatch, recordBest, stopLine, warning } from '../collapse/watch.js';
import { Opponents } from './opponents.js';

export interface LoopOptions {
  log?: (line: string) => void;
  stream?: NodeJS.WriteStream;
  /** the task sets and evaluators as preflight checked them, when the caller already did (before making the run folder) */
  checked?: Checked;
  /** resume with a fresh optimizer when the checkpoint's optimizer state is missing or unwanted */
  freshOptimizer?: boolean;
  /** kinds a script defined itself, beside the config's plugins */
  definitions?: readonly Definition[];
  /** how often a long evaluation says how far it got, in ms (default 30 s) */
  evalNoteMs?: number;
}

/**
 * The experiment, top to bottom: resolve and check everything (before any work), load
 * models, then per iteration, in named phases: rollout (tasks, or seeds a proposer writes
 * on, played as episodes through the batching servers), score (every judge on the batch),
 * advantages (per role: its estimator, its KL reward), update (one joint step per model, the
 * phase's training roles only), store (episodes, metrics, task buffer, checkpoint), evaluate
 * (the named evaluators). Resumes from the store's last checkpoint: later iterations are
 * dropped and replayed, but only once the checkpoint has loaded whole. With `workers` above
 * one, replicas in worker threads take a share of every rollout batch and of every update's
 * gradients (src/parallel); a fixed worker count repeats a run from its seed.
 */
export async function runLoop(c: ExperimentConfig, store: RunStore, o: LoopOptions = {}): Promise<void> {
  const log = o.log ?? ((l: string) => console.error(l));
  const plan = await planExperiment(c, o.definitions);
  const checked = o.checked ?? (await preflight(c, plan, log));
  const info = await initBackend(c.backend, c.accelerate);
  log(describeBackend(info));
  const resumeDir = store.lastCheckpointDir() ?? undefined;
  const workers = workerCount(c.workers);
  // the thread count decides how batches are cut, so it is part of how results round
  const changed = await store.recordCompute(describeKernels(info) + (workers > 1 ? ` x ${workers} threads` : ''));
  if (changed && resumeDir)
    log(
      `note: this run was written on ${changed}; the resumed iterations are not bit-identical to an uninterrupted run`,
    );
  const loaded = await loadModels(c, resumeDir, { freshOptimizer: o.freshOptimizer, features: plan.arena.features });
  const models = loaded.models;
  // Old log-probs were taken at the sampling temperature, so the update scores at it too.
  const temperature = c.trainer.temperature ?? (c.arena.temperature > 0 ? c.arena.temperature : 1);
  // replicas in worker threads copy the TinyLM and Hugging Face models (src/parallel/copies.ts)
  const replicated = textModels(models);
  if (workers > 1 && Object.keys(replicated).length)
    log(
      `workers: ${workers} threads${c.workers === 'auto' ? ' (auto: one per core)' : ''}, each with a replica of ${Object.keys(replicated).join(', ')}`,
    );
  const replicas = Object.keys(replicated).length
    ? await startReplicas(workers, { backend: info.chosen, accelerate: c.accelerate }, replicated)
    : undefined;
  // a Hugging Face model's products take one core per thread with replicas, every core without
  if (Object.values(models).some((m) => m.kind === 'hf')) loadNative()?.setThreads(replicas ? 1 : workers);
  try {
    await iterate(c, store, o, { plan, ...checked, ...loaded, resumeDir, temperature, replicas, log });
  } finally {
    await replicas?.close();
  }
}

/** What the iterations need, resolved and loaded before the first. */
interface Setup extends LoadedModels, Checked {
  plan: Plan;
  resumeDir: string | undefined;
  temperature: number;
  replicas: Replicas | undefined;
  log: (line: string) => void;
}

async function iterate(c: ExperimentConfig, store: RunStore, o: LoopOptions, s: Setup): Promise<void> {
  // rollouts by worker processes through Redis: the weights they play with go out by version
  const workersQueue =
    c.rollout.engine === 'redis'
      ? await RedisRollouts.connect({ ...c.rollout, url: c.rollout.url! }, s.log)
      : undefined;
  // rollouts on an inference server: each update goes out as a LoRA adapter it loads
  const inference =
    c.rollout.engine === 'openai'
      ? await InferenceRollouts.connect(
          {
            ...c.rollout,
            url: c.rollout.url!,
            adapterDir: c.rollout.adapterDir ?? join(store.dir, 'served-adapters'),
          },
          basename(store.dir),
          s.tokenizers,
        )
      : undefined;
  try {
    await iterateWith(c, store, o, s, workersQueue, inference);
  } catch (e) {
    if (e instanceof RolloutJobFailed)
      throw new RolloutJobFailed(
        `${e.message}. The run stops; it resumes from its last checkpoint with: coevolve run --resume ${store.dir}`,
        { cause: e },
      );
    throw e;
  } finally {
    await workersQueue?.close();
    await inference?.close();
  }
}

async function iterateWith(
  c: ExperimentConfig,
  store: RunStore,
  o: LoopOptions,
  s: Setup,
  workersQueue: RedisRollouts | undefined,
  inference: InferenceRollouts | undefined,
): Promise<void> {
  const {
    plan,
    train,
    evaluators,
    models,
    references,
    tokenizer,
    tokenizers,
    attachments,
    resumeDir,
    temperature,
    replicas,
    log,
  } = s;
  const trainer = new JointTrainer(models, { ...c.trainer, temperature }, replicas);
  const remotes = remoteServers(c, tokenizer);
  const { rollout: _where, plugins: _code, ...jobConfig } = c; // jobs carry kinds by name, never code, nor the Redis URL
  for (const id of resumeDir ? Object.keys(models) : []) {
    if (o.freshOptimizer) log(`models.${id}: starting a fresh optimizer (--fresh-optimizer)`);
    else await restoreOptimizerState(`${resumeDir}/${id}`, attachments[id] ?? {}, trainer.optimizer(id));
  }
  const state = resumeDir ? loadLoopState(resumeDir, c) : freshLoopState(c);
  for (const ev of evaluators)
    if (ev.restore && state.evaluators[ev.name] !== undefined) ev.restore(state.evaluators[ev.name]);
  const learners = makeLearners(c, plan.arena, models, state.learners);
  const opponents = await Opponents.open(c, models, state.opponents, resumeDir);
  plan.live.alignment = (role, probe, chunks) =>
    new GradientProbe(
      models[c.roles[role].model],
      tokenizers[c.roles[role].model] ?? tokenizer,
      probe,
      plan.roles[role],
      temperature,
      c.roles[role].system,
    ).alignment(chunks);
  const start = await store.resume();
  if (start > 0) log(`resuming after iteration ${start} from ${resumeDir}`);
  if (workersQueue) await workersQueue.publish(textModels(models), tokenizer, start); // version v: the weights after v updates
  if (inference)
    log(`rollout: adapters loaded into ${c.rollout.url} in ${(await inference.publish(models, start)).toFixed(2)}s`);
  const sampling = {
    maxNewTokens: c.arena.maxNewTokens,
    temperature: c.arena.temperature,
    topK: c.arena.topK,
    topP: c.arena.topP,
    stopStrings: c.arena.stop,
  };
  const progress = createProgress(c.iterations, { stream: o.stream, label: c.name });
  const context = (it: number, thorough: boolean) => ({
    models,
    tokenizer,
    tokenizers,
    family: plan.family,
    iteration: it,
    thorough,
    replicas,
  });
  const evaluate = async (it: number, due: (e: Evaluator) => boolean, thorough: boolean) => {
    const m: Record<string, number> = {};
    for (const ev of evaluators.filter(due)) {
      // an evaluation can take minutes (a thorough one always may): say what runs, how far it got
      // every `evalNoteMs` (counted as episodes end: a timer would not fire while generation holds
      // the thread) and how long it took
      const name = ev.name || 'tasks.eval';
      const t = performance.now();
      let episodes = 0;
      let noted = t;
      const onEpisode = () => {
        episodes++;
        const now = performance.now();
        if (now - noted < (o.evalNoteMs ?? 30_000)) return;
        noted = now;
        log(`evaluating ${name} at iteration ${it}: ${episodes} episodes in ${((now - t) / 1000).toFixed(0)}s`);
      };
      if (thorough) log(`evaluating ${name} at iteration ${it}...`);
      Object.assign(m, evalMetrics(ev, await ev.run({ ...context(it, thorough), onEpisode })));
      if (thorough || noted > t) log(`evaluated ${name} in ${((performance.now() - t) / 1000).toFixed(1)}s`);
    }
    return m;
  };
  if (!store.readMetrics().some((r) => r.iteration === 0)) {
    for (const ev of evaluators) ev.track?.(context(0, true));
    store.appendMetrics({ iteration: 0, ...(await evaluate(0, () => true, true)) });
  }
  // the watch reads the metrics so far: a resumed run's rebuild it as the run first saw them
  const history = store.readMetrics();
  const watch = new CollapseWatch(c.collapse);
  for (const row of history) watch.observe(row);
  for (let it = start + 1; it <= c.iterations; it++) {
    const t0 = performance.now();
    const roles = trainingRoles(c, it);
    // rollout
    const servers = Object.fromEntries(
      Object.entries(models).map(([id, m]) => [
        id,
        m.kind === 'mlp'
          ? new ActServer(id, m, hashSeed(c.seed, it, id), c.arena.temperature)
          : new BatchingServer(id, m, hashSeed(c.seed, it, id), undefined, replicas),
      ]),
    );
    const pooled = opponents?.servers(it, c.arena.temperature) ?? {};
    const bindings = Object.fromEntries(
      Object.entries(c.roles).map(([id, r]) => [
        id,
        {
          role: plan.roles[id],
          model: r.model,
          ...(servers[r.model] instanceof ActServer
            ? { actor: servers[r.model] as ActServer }
            : {
                server:
                  inference?.server(r.model) ?? (servers[r.model] as BatchingServer | undefined) ?? remotes[r.model],
              }),
          maxNewTokens: r.maxNewTokens,
          stopStrings: r.stop,
          tokenizer: tokenizers[r.model],
          system: r.system,
        },
      ]),
    );
    const agents = new Agents(bindings, tokenizer, sampling, (p) => state.buffer.has(p));
    // an episode that meets a remote endpoint gone down is dropped and counted; the run goes on
    const failed: RemoteModelError[] = [];
    const dropped = (e: unknown) => e instanceof RemoteModelError && failed.push(e) > 0;
    let episodes: Episode[];
    const poolMetrics: Record<string, number> = {};
    let elsewhere = 0;
    let jobSeconds: number | undefined;
    if (workersQueue) {
      const got = await workersQueue.playIteration(it, {
        last: c.iterations,
        maxStaleness: c.rollout.maxStaleness,
        models: Object.keys(models),
        config: jobConfig,
        groupSize: c.arena.groupSize,
        tasks: (j) => iterationTasks(c, plan.arena, train, state.buffer, j, state.carried),
        seed: (j) => hashSeed(c.seed, j, 'rollout'),
        recent: state.buffer.entries().map((b) => b.task.prompt),
      });
      ({ episodes, tokens: elsewhere, seconds: jobSeconds } = got);
    } else {
      const tasks = iterationTasks(c, plan.arena, train, state.buffer, it, state.carried);
      const contexts = opponents
        ? (k: number, n: number) => agents.with(opponents.bindingsFor(k, n, agents.roles, pooled))
        : agents;
      episodes = await firstValueFrom(
        playGroups(plan.arena, tasks, c.arena.groupSize, contexts, dropped).pipe(toArray()),
      );
      if (opponents) {
        const place = new Map(
          tasks.flatMap((t, i) =>
            Array.from({ length: c.arena.groupSize }, (_, g) => [`${t.id}#${g}`, i * c.arena.groupSize + g]),
          ),
        );
        Object.assign(
          poolMetrics,
          opponents.record(episodes, (e) => place.get(e.id)!),
        );
      }
    }
    if (failed.length) log(`iteration ${it}: ${failed.length} episodes failed: ${failed[0].message}`);
    if (inference) elsewhere = inference.takeTokens();
    const tRollout = (performance.now() - t0) / 1000;
    // score
    const judged = await scoreEpisodes(plan, episodes, c.arena.trainPerGroup);
    // a frozen opponent's turns (model `<id>@<snapshot>`) are judged but never train
    const scored = judged.filter(
      (s) => roles.has(s.episode.turns[s.turn].role) && s.episode.turns[s.turn].model in models,
    );
    // advantages
    await addReferenceLogProbs(c, scored, references, temperature);
    addMagnetLogProbs(c, scored, learners);
    const {
      samples: sampled,
      metrics: klMetrics,
      credited,
    } = toSamples(scored, c.trainer, roleTraining(c, state.controllers), state.baselines, state.states);
    const staleness = episodes.flatMap((e) => e.turns.map((t) => t.staleness ?? 0));
    const stale = inference
      ? await correctStale(sampled, credited, textServers(servers), temperature, c.rollout.isThreshold, true)
      : workersQueue
        ? {
            ...(await correctStale(sampled, credited, textServers(servers), temperature, c.rollout.isThreshold)),
            'rollout/staleness_mean': staleness.reduce((a, b) => a + b, 0) / Math.max(1, staleness.length),
            'rollout/staleness_max': Math.max(0, ...staleness),
          }
        : {};
    // update
    const lr = trainer.config.lr * lrMultiplier(c.trainer.lrSchedule, it - 1, c.iterations);
    trainer.setLearningRate(lr);
    const t1 = performance.now();
    const learned = learnerUpdates(c, scored, sampled, learners, trainer);
    const samples = learned.samples;
    const steps = samples.length
      ? Array.from({ length: c.trainer.ppoEpochs }, (_, e) =>
          miniBatches(samples, c.trainer.miniBatches, hashSeed(c.seed, it, `minibatch-${e}`)).map((part) =>
            trainer.step(part),
          ),
        ).flat()
      : [];
    for (const learner of Object.values(learners)) learner.afterUpdate();
    opponents?.afterUpdate(it, models);
    const tTrain = (performance.now() - t1) / 1000;
    if (workersQueue) await workersQueue.publish(textModels(models), tokenizer, it);
    const published: Record<string, number> = inference
      ? { 'time/adapter_publish_s': await inference.publish(models, it) }
      : {};
    const metrics: Record<string, number> = {
      'episodes/failed': failed.length,
      ...rolloutMetrics(plan, episodes, judged),
      ...(plan.arena.metrics?.(episodes) ?? {}),
      ...klMetrics,
      ...learned.metrics,
      ...poolMetrics,
      ...stale,
      ...published,
      samples: samples.length,
      lr,
    };
    if (c.phases) metrics.phase = phaseIndex(c, it);
    const synced = refSyncDue(c.trainer.refSync, it);
    if (synced) {
      for (const [id, ref] of Object.entries(references))
        syncTargetModel(ref.weights, models[id].weights, c.trainer.refSync!.mixupAlpha);
      metrics.ref_synced = 1;
    }
    Object.assign(
      metrics,
      stepMetrics(steps, servers, samples, tRollout, tTrain, elsewhere, samples.length ? c.trainer.ppoEpochs : 0),
    );
    if (jobSeconds !== undefined) metrics['time/rollout_job_s'] = jobSeconds; // the workers' own time on this iteration's jobs, summed: over rollout_s, how many played at once
    // store
    recordWrittenTasks(episodes, plan.family, state.buffer, it);
    if (plan.arena.carry) {
      state.carried = plan.arena.carry.next(state.carried, episodes, it);
      Object.assign(metrics, plan.arena.carry.metrics?.(state.carried) ?? {});
    }
    const last = it === c.iterations;
    for (const ev of evaluators) ev.track?.(context(it, false));
    Object.assign(metrics, await evaluate(it, (e) => it % e.every === 0 || last || synced, last || synced));
    metrics['time/iteration_s'] = (performance.now() - t0) / 1000;
    const seen = watch.observe({ iteration: it, ...finite(metrics) });
    Object.assign(metrics, seen.metrics);
    for (const f of seen.fresh) log(`collapse: ${f.id} at iteration ${it}: ${f.detail}`);
    const stop = c.stopOn === 'collapse' && seen.flagged.length > 0;
    const end = last || stop;
    // what each turn earned and was trained with goes out with it (coevolve export, the dashboard)
    for (const s of judged) s.episode.turns[s.turn].reward = s.reward;
    for (const { turn, advantage } of credited) turn.advantage = advantage;
    if (it % c.episodesEvery === 0 || end) store.appendEpisodes(it, episodes);
    const row = { iteration: it, ...finite(metrics) };
    store.appendMetrics(row);
    history.push(row);
    if (it % c.checkpointEvery === 0 || end) {
      const dir = store.checkpointDir(it);
      mkdirSync(dir, { recursive: true });
      const optimizers = Object.fromEntries(
        await Promise.all(
          Object.keys(models).map(async (id) => [id, await encodeOptimizerState(trainer.optimizer(id))] as const),
        ),
      );
      await saveModels(dir, models, tokenizer, { iteration: it }, optimizers);
      // A synced reference is no longer the starting checkpoint, so it is saved too.
      if (c.trainer.refSync) await saveReferences(dir, references, tokenizer, { iteration: it });
      for (const ev of evaluators) if (ev.state) state.evaluators[ev.name] = ev.state();
      for (const [id, learner] of Object.entries(learners)) state.learners[id] = learner.state();
      if (opponents) state.opponents = await opponents.save(dir, tokenizer);
      saveLoopState(dir, state);
      await store.recordCheckpoint(it, dir);
      await recordBest(store, history, c.collapse.watch);
    }
    progress.tick(it, pickShown(metrics, plan.arena.progress ?? []), warning(seen.flagged));
    if (stop) {
      progress.done();
      log(await stopLine(store, seen.flagged));
      break;
    }
  }
  progress.done();
  await store.setStatus('done');
  for (const m of [...Object.values(models), ...Object.values(references)]) m.dispose();
  opponents?.dispose();
  trainer.dispose();
  log(`done: ${store.dir} (tensors alive: ${tf.memory().numTensors})`);
}

/** What the progress line shows: rewards, accuracies, and the metrics the arena names. */
function pickShown(m: Record<string, number>, arena: readonly string[]): Record<string, number> {
  const keys = Object.keys(m).filter(
    (k) =>
      k.startsWith('reward/') ||
      k === 'accuracy/train' ||
      /^eval\/(.+\/)?(pass1|maj\d+|mean\d+|valid)$/.test(k) ||
      arena.includes(k),
  );
  return Object.fromEntries(keys.map((k) => [k.replace(/^(reward|accuracy|eval)\//, ''), m[k]]));
}

/** The language models' servers (a stale rollout's log-probs are rescored on them). */
function textServers(servers: Record<string, BatchingServer | ActServer>): Record<string, BatchingServer> {
  return Object.fromEntries(
    Object.entries(servers).filter((e): e is [string, BatchingServer] => e[1] instanceof BatchingServer),
  );
}

/** Metrics without the undefined ones (a mean over nothing), so every stored number is real. */
function finite(m: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => Number.isFinite(v)));
}
