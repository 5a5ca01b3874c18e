/**
 * The learner's side of rollouts on BullMQ: each iteration's tasks go out as jobs (whole
 * groups per job), any number of `coevolve worker` processes play them with the published
 * weights, and the learner gathers exactly one result per job, in job order. With
 * `maxStaleness` k, the jobs of the next k iterations are queued before this one's update,
 * played with weights up to k versions old (the update corrects them: rl/rollout-is.ts).
 *
 * Faults: a worker killed mid-job leaves its job to BullMQ's stalled-job check, which hands
 * it to another worker; the learner takes one result per job id, so no episode is lost or
 * counted twice. If Redis goes away the learner waits, saying so, and re-adds any job Redis
 * lost (same id, same data). A resumed learner starts a new session: the old session's
 * waiting jobs are drained and its results never awaited.
 */
import { randomUUID } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { Episode, Task } from '../core/types.js';
import type { HfPolicy } from '../models/hf/policy.js';
import type { TinyLM } from '../models/tinylm.js';
import type { CharTokenizer } from '../tokenizer/index.js';
import { encodeHfWeights } from './hf-weights.js';
import { JOB_NAME, jobId, queueName, type RolloutJob, type RolloutResult } from './jobs.js';
import { directoryWeights, encodeWeights, redisWeights, type WeightStore } from './weights.js';

export interface RedisRolloutConfig {
  url: string;
  queue: string;
  maxStaleness: number;
  /** episodes per job (a group may span jobs: its members are numbered across them) */
  jobEpisodes: number;
  /** where weights are published: Redis, or a directory every worker can read */
  weightsDir?: string;
  /** how many times one job that ended for a passing reason (a stalled worker, lost weights) is queued again */
  jobRetries: number;
}

/**
 * A job that failed for good: its worker threw on every attempt (a bug, a kind it does not
 * know), or it stalled more than `jobRetries` times. The run stops; the store keeps its last
 * checkpoint, so `coevolve run --resume` continues once the cause is fixed.
 */
export class RolloutJobFailed extends Error {}

/**
 * Whether a failed job may simply be played again: its worker stalled past BullMQ's limit
 * (killed, or its event loop blocked longer than the lock), or its weights were gone (Redis
 * restarted without them). Anything else failed in the worker's own code on every attempt.
 */
function passing(reason: string): boolean {
  return /cannot be fetched|stalled more than allowable limit/i.test(reason);
}

/** The URL with its password masked, for logs. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable Redis URL)';
  }
}

export class RedisRollouts {
  private readonly pending = new Map<number, RolloutJob[]>();
  /** the newest published weights, to publish again when Redis lost them */
  private readonly latest = new Map<string, { version: number; blob: Buffer }>();
  private waiting = false;
  /** resolves the gather loop's wait when a job completes or fails (QueueEvents: a blocking read, no busy polling) */
  private wake: () => void = () => {};
  /** a job ended since the last look */
  private ended = false;
  /** how often each job id was queued again after a passing failure */
  private readonly retried = new Map<string, number>();

  private constructor(
    private readonly o: RedisRolloutConfig,
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly weights: WeightStore,
    readonly session: string,
    private readonly prefix: string,
    private readonly log: (line: string) => void,
    private readonly events: QueueEvents,
    private readonly listen: Redis,
  ) {
    for (const e of ['completed', 'failed'] as const)
      events.on(e, () => {
        this.ended = true;
        this.wake();
      });
  }

  /** Connects, drains the queue's waiting jobs of earlier sessions and drops their weights. */
  static async connect(o: RedisRolloutConfig, log: (line: string) => void): Promise<RedisRollouts> {
    const redis = new Redis(o.url, { maxRetriesPerRequest: null, lazyConnect: true });
    redis.on('error', () => {}); // an outage is reported once, below
    try {
      await redis.connect();
    } catch (e) {
      redis.disconnect();
      throw new Error(`rollout.url: cannot reach Redis at ${safeUrl(o.url)}: ${(e as Error).message}`);
    }
    const queue = new Queue(queueName(o.queue), { connection: redis });
    queue.on('error', () => {}); // outages are reported once, by the connection's events
    await queue.drain(true);
    const stale = await redis.keys(`coevolve:${o.queue}:*`);
    if (stale.length) await redis.del(...stale);
    const session = randomUUID().slice(0, 8);
    const prefix = `coevolve:${o.queue}:${session}`;
    const weights = o.weightsDir ? directoryWeights(o.weightsDir) : redisWeights(redis, prefix);
    log(
      `rollouts: queue ${queueName(o.queue)} on ${safeUrl(o.url)}, session ${session}, weights in ${o.weightsDir ?? 'Redis'}`,
    );
    const listen = new Redis(o.url, { maxRetriesPerRequest: null });
    listen.on('error', () => {});
    const events = new QueueEvents(queueName(o.queue), { connection: listen });
    events.on('error', () => {});
    await events.waitUntilReady();
    const r = new RedisRollouts(o, redis, queue, weights, session, prefix, log, events, listen);
    // commands wait for the connection to come back (no retry limit), so an outage shows here
    redis.on('reconnecting', () => r.outage(true));
    redis.on('ready', () => r.outage(false));
    return r;
  }

  private outage(down: boolean): void {
    if (down === this.waiting) return;
    this.waiting = down;
    this.log(
      down
        ? `rollouts: waiting for Redis at ${safeUrl(this.o.url)}: connection lost; jobs and results resume when it is back`
        : `rollouts: Redis at ${safeUrl(this.o.url)} is back`,
    );
  }

  /**
   * Publishes every model's weights as `version`, keeping the versions a stale job may still
   * need: a TinyLM's whole, a Hugging Face model's adapter (or, fully fine-tuned, every weight)
   * with its base named by path and sha256 (hf-weights.ts).
   */
  async publish(
    models: Readonly<Record<string, TinyLM | HfPolicy>>,
    tokenizer: CharTokenizer,
    version: number,
  ): Promise<void> {
    for (const [id, m] of Object.entries(models)) {
      const blob = m.kind === 'hf' ? encodeHfWeights(m) : encodeWeights(m, tokenizer);
      this.latest.set(id, { version, blob });
      await this.retrying(() => this.weights.put(id, version, blob));
      await this.retrying(() => this.weights.prune(id, version - this.o.maxStaleness - 1));
    }
  }

  /**
   * Queues iteration `it` and the next `maxStaleness` ones (up to `last`) with the weights held
   * now, version it - 1, then gathers `it`'s episodes, each turn marked with its staleness
   * (how many versions behind it - 1 its model's weights were).
   */
  async playIteration(
    it: number,
    o: {
      last: number;
      maxStaleness: number;
      models: string[];
      config: Record<string, unknown>;
      groupSize: number;
      tasks: (j: number) => Task[];
      seed: (j: number) => number;
      recent: string[];
    },
  ): Promise<{ episodes: Episode[]; tokens: number; seconds: number }> {
    const versions = Object.fromEntries(o.models.map((id) => [id, it - 1]));
    for (let j = it; j <= Math.min(o.last, it + o.maxStaleness); j++) {
      if (!this.pending.has(j))
        await this.enqueue(j, o.tasks(j), {
          config: o.config,
          groupSize: o.groupSize,
          seed: o.seed(j),
          versions,
          recent: o.recent,
        });
    }
    const got = await this.gather(it);
    const episodes = got.episodes.map(({ versions: v, ...e }) => ({
      ...e,
      turns: e.turns.map((t) => (v[t.model] === undefined ? t : { ...t, staleness: it - 1 - v[t.model] })),
    }));
    return { episodes, tokens: got.tokens, seconds: got.seconds };
  }

  /** Queues iteration `iteration`'s tasks as jobs to be played with `versions`. */
  async enqueue(
    iteration: number,
    tasks: readonly Task[],
    o: {
      config: Record<string, unknown>;
      groupSize: number;
      seed: number;
      versions: Record<string, number>;
      recent: string[];
    },
  ): Promise<void> {
    const all = tasks.flatMap((_, t) => Array.from({ length: o.groupSize }, (_, g) => [t, g] as [number, number]));
    const jobs: RolloutJob[] = [];
    for (let k = 0; k * this.o.jobEpisodes < all.length; k++) {
      const members = all.slice(k * this.o.jobEpisodes, (k + 1) * this.o.jobEpisodes);
      // a job carries only its tasks, renumbered
      const used = [...new Set(members.map(([t]) => t))];
      const mine: Array<[number, number]> = members.map(([t, g]) => [used.indexOf(t), g]);
      jobs.push({
        session: this.session,
        iteration,
        index: k,
        config: o.config,
        tasks: used.map((t) => tasks[t]),
        members: mine,
        seed: o.seed,
        versions: o.versions,
        weights: this.o.weightsDir ? { dir: this.o.weightsDir } : { prefix: this.prefix },
        recent: o.recent,
      });
    }
    this.pending.set(iteration, jobs);
    for (const job of jobs) await this.retrying(() => this.add(job));
  }

  private add(job: RolloutJob): Promise<unknown> {
    return this.queue.add(JOB_NAME, job, {
      jobId: jobId(job),
      attempts: 3,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  /** Every job of `iteration`, once each: the episodes in job order, and per episode the versions it was played with. */
  async gather(
    iteration: number,
  ): Promise<{ episodes: Array<Episode & { versions: Record<string, number> }>; tokens: number; seconds: number }> {
    const jobs = this.pending.get(iteration);
    if (!jobs) throw new Error(`rollouts: iteration ${iteration} was never queued`);
    const results: Array<RolloutResult | undefined> = jobs.map(() => undefined);
    while (results.some((r) => r === undefined)) {
      this.ended = false;
      for (const [k, job] of jobs.entries()) {
        if (results[k]) continue;
        const found = await this.retrying(() => Job.fromId<RolloutJob, RolloutResult>(this.queue, jobId(job)));
        if (!found) {
          // Redis lost it (a restart without persistence): the same job again, same id, with the weights held now
          jobs[k] = await this.requeue(job);
          continue;
        }
        const state = await this.retrying(() => found.getState());
        if (state === 'completed') {
          // the job was read before it completed: its result is read again now that it has one
          const done =
            found.returnvalue ??
            (await this.retrying(() => Job.fromId<RolloutJob, RolloutResult>(this.queue, jobId(job))))?.returnvalue;
          if (done) results[k] = done;
        } else if (state === 'failed') {
          // as above: a job read before it failed has no reason yet (seen once, in a Redis restart); it is read again
          const failed =
            found.failedReason === undefined
              ? await this.retrying(() => Job.fromId<RolloutJob, RolloutResult>(this.queue, jobId(job)))
              : found;
          if (failed && failed.failedReason === undefined) continue; // still no reason: looked at again on the next pass
          if (!failed) continue; // removed meanwhile: found missing, and queued again, on the next pass
          const id = jobId(job);
          const reason = failed.failedReason ?? '';
          const tries = (this.retried.get(id) ?? 0) + 1;
          if (!passing(reason))
            throw new RolloutJobFailed(`rollout job ${id} (iteration ${iteration}) failed in its worker: ${reason}`);
          if (tries > this.o.jobRetries)
            throw new RolloutJobFailed(
              `rollout job ${id} (iteration ${iteration}) failed ${tries} time${tries === 1 ? '' : 's'}, past rollout.jobRetries (${this.o.jobRetries}); the last time: ${reason}`,
            );
          this.retried.set(id, tries);
          this.log(`rollouts: job ${id} ${reason}; queued again (${tries} of ${this.o.jobRetries})`);
          // played again with the weights held now
          await this.retrying(() => failed.remove());
          jobs[k] = await this.requeue(job);
        }
      }
      // until a job ends (an event), or 250 ms pass: a lost job or a missed event is found by looking again
      if (results.some((r) => r === undefined) && !this.ended)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 250);
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
    }
    this.pending.delete(iteration);
    const done = results as RolloutResult[];
    return {
      episodes: done.flatMap((r) => r.episodes.map((e) => ({ ...e, versions: r.versions }))),
      tokens: done.reduce((n, r) => n + r.tokens, 0),
      seconds: done.reduce((n, r) => n + r.seconds, 0),
    };
  }

  /** Publishes the newest weights again and re-adds `job` to be played with them (its staleness shrinks, never grows). */
  private async requeue(job: RolloutJob): Promise<RolloutJob> {
    const versions = { ...job.versions };
    for (const [id, l] of this.latest) {
      await this.retrying(() => this.weights.put(id, l.version, l.blob));
      versions[id] = l.version;
    }
    const again = { ...job, versions };
    await this.retrying(() => this.add(again));
    return again;
  }

  /** Runs `f`, waiting out a Redis outage (said once when it starts and once when it ends). */
  private async retrying<T>(f: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const r = await f();
        if (this.waiting) {
          this.waiting = false;
          this.log(`rollouts: Redis at ${safeUrl(this.o.url)} is back`);
        }
        return r;
      } catch (e) {
        if (!isConnectionError(e)) throw e;
        if (!this.waiting) {
          this.waiting = true;
          this.log(`rollouts: waiting for Redis at ${safeUrl(this.o.url)} (${(e as Error).message})...`);
        }
        await sleep(250);
      }
    }
  }

  async close(): Promise<void> {
    // BullMQ leaves connections it was given open: each is closed here, or the process would not exit
    await this.events.close();
    await this.queue.close();
    this.listen.disconnect();
    this.redis.disconnect();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isConnectionError(e: unknown): boolean {
  const m = `${(e as Error)?.message ?? ''} ${(e as NodeJS.ErrnoException)?.code ?? ''}`;
  return /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|Connection is closed|connection is closed|Stream isn't writeable|enableOfflineQueue|LOADING|Reached the max retries|socket/i.test(
    m,
  );
}
