/**
 * `coevolve worker --redis URL`: a rollout worker process. It takes rollout jobs from the
 * queue, plays each with its own copy of every model at the version the job names (fetched
 * once, cached), and returns the episodes as the job's result. A job names its arena,
 * judges and roles by registered name and carries its tasks as JSON: a kind this worker does
 * not know (built in, or from its own --plugin), or a version it cannot fetch, fails the job
 * at once with the reason in its result (no retry). Killed mid-job, its job goes to another
 * worker once its lock expires (BullMQ's stalled-job check). A Hugging Face model's base is read
 * from this machine's disk (the config's path, or where `--base FROM=TO` maps it) and must hash
 * as the learner's; only what the update changes travels (src/distributed/hf-weights.ts).
 */
import { firstValueFrom, toArray } from 'rxjs';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { Agents } from '../core/agents.js';
import { playMembers } from '../core/operators/play-groups.js';
import { describeBackend, initBackend, type BackendChoice } from '../backend/index.js';
import { loadNative } from '../backend/native/library.js';
import { parseConfig } from '../config/load.js';
import { hashSeed } from '../engine/loop-parts.js';
import { createContainer, Resolver } from '../registry.js';
import type { TinyLM } from '../models/tinylm.js';
import { remoteServers } from '../openai/remote.js';
import { loadPlugins } from '../plugins/load.js';
import { BatchingServer } from '../serving/server.js';
import { CharTokenizer } from '../tokenizer/index.js';
import type { Tokenizer } from '../tokenizer/types.js';
import type { HfPolicy } from '../models/hf/policy.js';
import { HfWorkerModels, parseBaseMaps, type HfPlayed } from '../distributed/hf-weights.js';
import { JOB_NAME, queueName, RolloutJobSchema, type RolloutJob, type RolloutResult } from '../distributed/jobs.js';
import { safeUrl } from '../distributed/learner.js';
import {
  blobKind,
  decodeWeights,
  directoryWeights,
  loadWeightsInto,
  redisWeights,
  type WeightStore,
} from '../distributed/weights.js';

export interface WorkerOptions {
  redis: string;
  queue: string;
  plugins?: string[];
  backend?: string;
  /** native matrix products when a library loads (auto), or tfjs's own (off) */
  accelerate?: 'auto' | 'off';
  /** a job's lock: a killed worker's job is handed on once it expires (BullMQ lockDuration) */
  lockMs?: number;
  /** how often stalled jobs are looked for (BullMQ stalledInterval) */
  stalledMs?: number;
  /** how many times a job may stall (its worker killed or blocked past its lock) before it fails as stalled; the learner then queues it again (BullMQ maxStalledCount) */
  maxStalled?: number;
  /** `FROM=TO`: a Hugging Face base the run's config names at FROM (or under it) is read from TO on this machine */
  bases?: string[];
  /** native matrix-product threads (OpenBLAS); default 1, as loadNative sets it (one worker per core) */
  threads?: number;
  log?: (line: string) => void;
}

export interface RunningWorker {
  close(): Promise<void>;
}

/** A model a worker plays, with its tokenizer. */
interface Played {
  model: TinyLM | HfPolicy;
  tokenizer: Tokenizer;
  /** a TinyLM's character tokenizer (what remote models and the default context read) */
  chars?: CharTokenizer;
  dispose(): void;
}

/**
 * One model per id, holding the version the last job asked for; a new version is written into
 * it in place (cheaper than building a model per version). Blobs of recent versions stay, so a
 * stale job's version is fetched once. A Hugging Face model's base is read here, once, and
 * checked against the learner's (src/distributed/hf-weights.ts).
 */
class WeightCache {
  private readonly models = new Map<string, Played & { at: string }>();
  private readonly blobs = new Map<string, Buffer>();
  constructor(
    private readonly redis: Redis,
    private readonly hf: HfWorkerModels,
  ) {}

  async get(job: RolloutJob, model: string): Promise<Played> {
    const version = job.versions[model];
    if (version === undefined) throw new UnrecoverableError(`job names no version of model '${model}'`);
    const where = 'prefix' in job.weights ? job.weights.prefix : job.weights.dir;
    const key = `${where}|${model}|${version}`;
    const held = this.models.get(model);
    if (held?.at === key) return held;
    let blob = this.blobs.get(key);
    if (!blob) {
      const store: WeightStore =
        'prefix' in job.weights ? redisWeights(this.redis, job.weights.prefix) : directoryWeights(job.weights.dir);
      blob = await store.get(model, version);
      if (!blob)
        throw new UnrecoverableError(
          `model '${model}' version ${version} cannot be fetched from ${'prefix' in job.weights ? `Redis (${job.weights.prefix})` : job.weights.dir}`,
        );
      this.blobs.set(key, blob);
      for (const old of [...this.blobs.keys()].filter((k) => k.split('|')[1] === model).slice(0, -4))
        this.blobs.delete(old);
    }
    const hf = blobKind(blob) === 'hf';
    const fits =
      held &&
      (hf
        ? 'header' in held && this.hf.loadInto(held as HfPlayed, blob)
        : held.model.kind === 'tinylm' && loadWeightsInto(held.model, blob));
    if (held && fits) {
      held.at = key;
      return held;
    }
    held?.dispose();
    this.models.delete(model);
    const fresh = hf ? this.decodeHf(model, blob) : this.decodeTiny(blob);
    this.models.set(model, { ...fresh, at: key });
    return this.models.get(model)!;
  }

  private decodeTiny(blob: Buffer): Played {
    const { model, tokenizer } = decodeWeights(blob);
    return { model, tokenizer, chars: tokenizer, dispose: () => model.dispose() };
  }

  private decodeHf(model: string, blob: Buffer): Played {
    try {
      return this.hf.decode(model, blob);
    } catch (e) {
      // this worker cannot read or trust the base: playing again here would fail again
      throw new UnrecoverableError((e as Error).message);
    }
  }
}

export async function startWorker(o: WorkerOptions): Promise<RunningWorker> {
  const log = o.log ?? ((l: string) => console.error(l));
  const maps = parseBaseMaps(o.bases ?? []); // a malformed --base is said before anything starts
  log(describeBackend(await initBackend((o.backend ?? 'auto') as BackendChoice, o.accelerate ?? 'auto')));
  if (o.threads !== undefined) loadNative()?.setThreads(o.threads);
  const definitions = await loadPlugins(o.plugins ?? []);
  const resolver = createContainer(definitions).get(Resolver);
  const connection = new Redis(o.redis, { maxRetriesPerRequest: null });
  connection.on('error', () => {}); // BullMQ reconnects; an outage is said once when it starts and once when it ends
  let [seen, lost] = [false, false];
  connection.on('reconnecting', () => {
    if (!lost) log(`worker: ${seen ? 'lost' : 'cannot reach'} Redis at ${safeUrl(o.redis)}; reconnecting`);
    lost = true;
  });
  connection.on('ready', () => {
    if (lost && seen) log(`worker: Redis at ${safeUrl(o.redis)} is back`);
    [seen, lost] = [true, false];
  });
  const hf = new HfWorkerModels(maps);
  const cache = new WeightCache(connection, hf);

  const play = async (job: Job): Promise<RolloutResult> => {
    const t0 = performance.now();
    const parsed = RolloutJobSchema.safeParse(job.data);
    if (!parsed.success)
      throw new UnrecoverableError(
        `not a rollout job: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    const data = parsed.data as RolloutJob;
    let plan;
    let c;
    try {
      c = parseConfig({ ...data.config, plugins: [] }, `job ${job.id}`);
      plan = resolver.plan(c);
    } catch (e) {
      throw new UnrecoverableError(`this worker cannot play job ${job.id}: ${(e as Error).message}`);
    }
    const local: Record<string, Played> = {};
    for (const [id, m] of Object.entries(c.models)) if (m.kind !== 'remote') local[id] = await cache.get(data, id);
    if (!Object.keys(local).length) throw new UnrecoverableError(`job ${job.id} has no local model to play`);
    // as the learner has it: the TinyLM models' shared character tokenizer (the default one when there are none)
    const chars = Object.values(local).find((l) => l.chars)?.chars ?? new CharTokenizer();
    const servers = Object.fromEntries(
      Object.entries(local).map(([id, l]) => [
        id,
        new BatchingServer(id, l.model, hashSeed(data.seed, data.index, id)),
      ]),
    );
    const remotes = remoteServers(c, chars);
    const bindings = Object.fromEntries(
      Object.entries(c.roles).map(([id, r]) => [
        id,
        {
          role: plan.roles[id],
          model: r.model,
          server: servers[r.model] ?? remotes[r.model],
          maxNewTokens: r.maxNewTokens,
          stopStrings: r.stop,
          tokenizer: local[r.model]?.tokenizer,
          system: r.system,
        },
      ]),
    );
    const recent = new Set(data.recent);
    const agents = new Agents(
      bindings,
      chars,
      {
        maxNewTokens: c.arena.maxNewTokens,
        temperature: c.arena.temperature,
        topK: c.arena.topK,
        topP: c.arena.topP,
        stopStrings: c.arena.stop,
      },
      (p) => recent.has(p),
    );
    const bad = data.members.find(([t]) => t >= data.tasks.length);
    if (bad) throw new UnrecoverableError(`job ${job.id} names task ${bad[0]} of ${data.tasks.length}`);
    const episodes = await firstValueFrom(
      playMembers(
        plan.arena,
        data.members.map(([t, g]) => ({ task: data.tasks[t], g })),
        agents,
      ).pipe(toArray()),
    );
    const tokens = Object.values(servers).reduce((n, s) => n + s.stats.generatedTokens, 0);
    return { episodes, versions: data.versions, tokens, seconds: (performance.now() - t0) / 1000 };
  };

  const worker = new Worker(
    queueName(o.queue),
    async (job) =>
      job.name === JOB_NAME ? play(job) : Promise.reject(new UnrecoverableError(`unknown job kind '${job.name}'`)),
    {
      connection,
      concurrency: 1, // one thread of compute: more jobs at once would only interleave
      lockDuration: o.lockMs ?? 60000,
      stalledInterval: o.stalledMs ?? 15000,
      maxStalledCount: o.maxStalled ?? 3,
    },
  );
  worker.on('error', () => {});
  await worker.waitUntilReady();
  log(`worker: taking rollout jobs from ${queueName(o.queue)} on ${safeUrl(o.redis)}`);
  return {
    close: async () => {
      // a graceful close waits for Redis to acknowledge it, forever when Redis is gone: then the connection is dropped
      // first and the job in hand abandoned (it could not report anyway; its lock lapses and it is played again)
      const down = connection.status !== 'ready';
      if (down) {
        log(`worker: Redis at ${safeUrl(o.redis)} is unreachable; stopping without it`);
        connection.disconnect();
      }
      await worker.close(down);
      connection.disconnect();
    },
  };
}
