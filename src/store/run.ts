/**
 * A run directory: everything one training run writes, laid out so a run killed at any
 * instant (SIGKILL included) can be reopened and resumed from its last checkpoint.
 *
 *   config.yaml                    the resolved config (defaults filled in): an experiment's, or a pretrain's
 *                                  (run.json's `kind` says which; the record of a run from before kinds has none)
 *   run.json                       status, progress, checkpoints (lowdb; atomic rename on write)
 *   metrics.jsonl                  one JSON object per line, each with an `iteration`
 *   episodes/shard-000000.jsonl    episodes, one per line, each with an `iteration`;
 *   episodes/shard-000001.jsonl    a new shard every `shardSize` episodes
 *   checkpoints/iter-000010/       model checkpoints
 *   run.lock                       who writes the run now (see lock.ts); absent when no one does
 *
 * One process writes a run: `create` and `open(dir, { write: true })` take the lock, and every
 * write checks it is still held; `open(dir)` reads only. `close()` releases the lock.
 *
 * Appends are one `appendFileSync` of whole lines per batch, so a kill leaves at most one
 * torn (unterminated) last line; readers skip it and the first append of a writer, like
 * `truncateAfter`, removes it. Resuming calls `truncateAfter(lastCheckpoint.iteration)`, so no
 * iteration's metrics or episodes are counted twice.
 *
 * The JSONL mechanics (torn tails, atomic rewrites) live in jsonl.ts. The rest is one piece:
 * the record, the lock, the logs and the checkpoints change together (a checkpoint is recorded
 * only once written; a resume truncates every log to the record's checkpoint).
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Low } from 'lowdb';
import { applyFilter, countLines, cutTornTail, planFilter, readJsonl, writeAtomic } from './jsonl.js';
import { JSONFile } from 'lowdb/node';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { Episode } from '../core/types.js';
import { loadConfig, parseConfig } from '../config/load.js';
import type { ExperimentConfig } from '../config/schema.js';
import { LOCK_FILE, RunLock } from './lock.js';

export type RunStatus = 'running' | 'done' | 'failed';

/** What a run trains: an experiment (`coevolve run`, iterations) or a base (`coevolve pretrain`, steps). */
export type RunKind = 'experiment' | 'pretrain';

export interface CheckpointRecord {
  iteration: number;
  /** the checkpoint's folder, relative to the run directory when inside it */
  dir: string;
}

export interface RunRecord {
  /** absent in runs written before pretraining was a run: an experiment */
  kind?: RunKind;
  /** the iterations (an experiment) or steps (a pretrain) the run plans; absent before kinds (the config's iterations) */
  planned?: number;
  status: RunStatus;
  /** ISO timestamps */
  createdAt: string;
  updatedAt: string;
  /** iterations completed and durable (the last checkpoint's iteration) */
  iterations: number;
  checkpoints: CheckpointRecord[];
  lastCheckpoint: CheckpointRecord | null;
  /** the iteration each resume restarted from, in order */
  resumedAt: number[];
  /** why the run failed, when status is 'failed' */
  error?: string;
  /** which kernels the process that last wrote the run computed on (e.g. `wasm + native sgemm (OpenBLAS)`): they round differently */
  compute?: string;
  /** the best checkpoint by the collapse watch's held-out metric (src/collapse); no `dir`: the starting weights */
  best?: { metric: string; iteration: number; dir?: string; value: number };
  /** why the run ended before its planned iterations (`stopOn`), at which iteration */
  stopped?: { on: string; iteration: number; detail: string };
}

/** A metrics row: any JSON fields plus the iteration it belongs to. */
export interface MetricsRow {
  iteration: number;
  [key: string]: unknown;
}

/** An episode as stored: the episode plus the iteration that played it. */
export type StoredEpisode = Episode & { iteration: number };

export interface RunStoreOptions {
  /** episodes per shard file (default 5000) */
  shardSize?: number;
  /** open to write (takes the run's lock); reading needs no lock (open only) */
  write?: boolean;
  /** where lock messages go (a stale lock taken over) */
  log?: (line: string) => void;
}

/** How a run of another kind than an experiment is created: its kind and what it plans; its config is stored as given. */
export interface RunKindOptions {
  kind: Exclude<RunKind, 'experiment'>;
  planned: number;
}

export const DEFAULT_SHARD_SIZE = 5000;
const RUN_JSON = 'run.json';
const CONFIG_YAML = 'config.yaml';
const METRICS = 'metrics.jsonl';
const EPISODES = 'episodes';
const CHECKPOINTS = 'checkpoints';
const SHARD_RE = /^shard-(\d{6,})\.jsonl$/;

const pad6 = (n: number) => String(n).padStart(6, '0');
export const shardName = (index: number) => `shard-${pad6(index)}.jsonl`;
export const checkpointName = (iteration: number) => `iter-${pad6(iteration)}`;

/** `base` if it is free, else the first free `-2`, `-3`... beside it, so a second run never clobbers the first. */
export function freeRunDir(base: string): string {
  if (!existsSync(base)) return base;
  for (let i = 2; ; i++) if (!existsSync(`${base}-${i}`)) return `${base}-${i}`;
}

export class RunStore<C = ExperimentConfig> {
  /** the run directory, absolute */
  readonly dir: string;
  readonly shardSize: number;
  /** current shard index and its complete line count; computed lazily before the first append */
  private shard: { index: number; lines: number } | undefined;
  /** files whose torn tail this process has already checked before appending */
  private readonly clean = new Set<string>();
  private closed = false;

  private constructor(
    dir: string,
    readonly config: C,
    private readonly db: Low<RunRecord>,
    options: RunStoreOptions,
    private readonly lock: RunLock | undefined,
  ) {
    this.dir = resolve(dir);
    const size = options.shardSize ?? DEFAULT_SHARD_SIZE;
    if (!Number.isInteger(size) || size <= 0)
      throw new Error(`RunStore: shardSize must be a positive integer, got ${size}`);
    this.shardSize = size;
  }

  /**
   * Starts a new run in `dir` (created if needed) and holds its lock. Fails if `dir` already
   * holds a run, or holds anything at all: a folder of someone else's files is never mixed
   * with a run's.
   */
  static async create(dir: string, config: ExperimentConfig, options?: RunStoreOptions): Promise<RunStore>;
  /** A run of another kind (a pretrain): its config, already checked by its command, is stored as given. */
  static async create<C extends { name: string }>(
    dir: string,
    config: C,
    options: RunStoreOptions & RunKindOptions,
  ): Promise<RunStore<C>>;
  static async create(
    dir: string,
    config: ExperimentConfig | { name: string },
    options: RunStoreOptions & Partial<RunKindOptions> = {},
  ): Promise<RunStore<unknown>> {
    const abs = resolve(dir);
    const kind = options.kind ?? 'experiment';
    // an experiment's config is resolved so config.yaml always loads back; another kind's comes checked
    const resolved = kind === 'experiment' ? parseConfig(config, 'RunStore.create config') : structuredClone(config);
    const planned = options.planned ?? (resolved as ExperimentConfig).iterations;
    if (existsSync(join(abs, RUN_JSON))) {
      throw new Error(
        `RunStore.create: ${abs} already holds a run (${RUN_JSON} exists); open it to resume, or choose another directory`,
      );
    }
    if (existsSync(abs) && !statSync(abs).isDirectory())
      throw new Error(`RunStore.create: ${abs} exists and is not a directory`);
    refuseForeign(abs, []);
    mkdirSync(abs, { recursive: true });
    const lock = RunLock.acquire(abs, options.log);
    try {
      refuseForeign(abs, [LOCK_FILE]); // another creator may have been faster
      mkdirSync(join(abs, EPISODES), { recursive: true });
      mkdirSync(join(abs, CHECKPOINTS), { recursive: true });
      // the config first, so a run.json always has its config beside it
      writeAtomic(join(abs, CONFIG_YAML), toYaml(resolved));
      const now = new Date().toISOString();
      const record: RunRecord = {
        kind,
        planned,
        status: 'running',
        createdAt: now,
        updatedAt: now,
        iterations: 0,
        checkpoints: [],
        lastCheckpoint: null,
        resumedAt: [],
      };
      const db = new Low<RunRecord>(new JSONFile<RunRecord>(join(abs, RUN_JSON)), record);
      await db.write();
      return new RunStore<unknown>(abs, resolved, db, options, lock);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /**
   * Opens an existing run (to resume it or to read it). A run of another kind than `kind`
   * (default: an experiment) is refused, naming its kind; `kind: 'any'` opens every run (reports).
   */
  static async open(dir: string, options?: RunStoreOptions & { kind?: 'experiment' }): Promise<RunStore>;
  static async open(dir: string, options: RunStoreOptions & { kind: 'pretrain' }): Promise<RunStore<unknown>>;
  static async open(dir: string, options: RunStoreOptions & { kind: 'any' }): Promise<RunStore<unknown>>;
  static async open(
    dir: string,
    options: RunStoreOptions & { kind?: RunKind | 'any' } = {},
  ): Promise<RunStore<unknown>> {
    const abs = resolve(dir);
    if (!existsSync(abs)) throw new Error(`RunStore.open: ${abs} is not a run directory: it does not exist`);
    if (!statSync(abs).isDirectory()) throw new Error(`RunStore.open: ${abs} is not a run directory: not a directory`);
    const runJson = join(abs, RUN_JSON);
    if (!existsSync(runJson)) throw new Error(`RunStore.open: ${abs} is not a run directory: it has no ${RUN_JSON}`);
    if (!existsSync(join(abs, CONFIG_YAML)))
      throw new Error(`RunStore.open: ${abs} is not a run directory: it has no ${CONFIG_YAML}`);
    const lock = options.write ? RunLock.acquire(abs, options.log) : undefined;
    try {
      return await RunStore.read(abs, runJson, options, lock);
    } catch (e) {
      lock?.release();
      throw e;
    }
  }

  private static async read(
    abs: string,
    runJson: string,
    options: RunStoreOptions & { kind?: RunKind | 'any' },
    lock: RunLock | undefined,
  ): Promise<RunStore<unknown>> {
    // an empty placeholder: Low keeps it only if the file parses to nothing, which checkRecord rejects
    const db = new Low<RunRecord>(new JSONFile<RunRecord>(runJson), {} as RunRecord);
    try {
      await db.read();
    } catch (e) {
      throw new Error(`RunStore.open: cannot read ${runJson}: ${(e as Error).message}`);
    }
    checkRecord(db.data, runJson);
    const kind = db.data.kind ?? 'experiment';
    const want = options.kind ?? 'experiment';
    const a = (k: RunKind) => `${k === 'experiment' ? 'an' : 'a'} ${k} run`;
    if (want !== 'any' && want !== kind) throw new Error(`RunStore.open: ${abs} is ${a(kind)}, not ${a(want)}`);
    const config =
      kind === 'experiment'
        ? loadConfig(join(abs, CONFIG_YAML))
        : parseYaml(readFileSync(join(abs, CONFIG_YAML), 'utf8'));
    return new RunStore<unknown>(abs, config, db, options, lock);
  }

  /** Releases the run's lock (a reader has none). The store cannot write afterwards. */
  close(): void {
    this.lock?.release();
    this.closed = true;
  }

  /** What the run trains (runs from before kinds are experiments). */
  get kind(): RunKind {
    return this.db.data.kind ?? 'experiment';
  }

  /** The config's name (every kind's config has one). */
  get name(): string {
    return (this.config as { name: string }).name;
  }

  /** The iterations or steps the run plans. */
  get planned(): number {
    return this.db.data.planned ?? (this.config as ExperimentConfig).iterations;
  }

  /** A copy of run.json as last written by this process. */
  get record(): Readonly<RunRecord> {
    return structuredClone(this.db.data);
  }

  get metricsPath(): string {
    return join(this.dir, METRICS);
  }

  get episodesDir(): string {
    return join(this.dir, EPISODES);
  }

  /** Where the checkpoint of `iteration` goes: `<run>/checkpoints/iter-000010` (not created). */
  checkpointDir(iteration: number): string {
    return join(this.dir, CHECKPOINTS, checkpointName(iteration));
  }

  /** The last checkpoint's folder as an absolute path, or null. */
  lastCheckpointDir(): string | null {
    const last = this.db.data.lastCheckpoint;
    return last ? resolve(this.dir, last.dir) : null;
  }

  // ------------------------------------------------------------------ appends

  /** Appends one metrics row (it must carry a numeric `iteration`). */
  appendMetrics(row: MetricsRow): void {
    if (typeof row?.iteration !== 'number' || !Number.isFinite(row.iteration)) {
      throw new Error(
        `RunStore.appendMetrics: the row needs a numeric iteration, got ${JSON.stringify(row?.iteration)}`,
      );
    }
    this.assertWriter('appendMetrics');
    const file = this.metricsPath;
    this.prepareAppend(file);
    appendFileSync(file, JSON.stringify(row) + '\n');
  }

  /** Appends episodes played in `iteration`, rolling to a new shard every `shardSize` episodes. */
  appendEpisodes(iteration: number, episodes: readonly Episode[]): void {
    if (!Number.isFinite(iteration))
      throw new Error(`RunStore.appendEpisodes: iteration must be a number, got ${iteration}`);
    this.assertWriter('appendEpisodes');
    if (episodes.length === 0) return;
    const shard = this.currentShard();
    let i = 0;
    while (i < episodes.length) {
      if (shard.lines >= this.shardSize) {
        shard.index++;
        shard.lines = 0;
      }
      const take = Math.min(this.shardSize - shard.lines, episodes.length - i);
      let chunk = '';
      for (let k = i; k < i + take; k++) chunk += JSON.stringify({ iteration, ...episodes[k] }) + '\n';
      const file = join(this.episodesDir, shardName(shard.index));
      this.prepareAppend(file);
      appendFileSync(file, chunk);
      shard.lines += take;
      i += take;
    }
  }

  // ------------------------------------------------------------------ run.json

  /** Records a saved checkpoint: the run is now durable up to `iteration`. */
  async recordCheckpoint(iteration: number, dir: string): Promise<void> {
    const rel = this.relativeDir(dir);
    const d = this.db.data;
    const rec = { iteration, dir: rel };
    d.checkpoints = [...d.checkpoints.filter((c) => c.iteration !== iteration), rec].sort(
      (a, b) => a.iteration - b.iteration,
    );
    d.lastCheckpoint = d.checkpoints[d.checkpoints.length - 1]!;
    d.iterations = Math.max(d.iterations, iteration);
    await this.write();
  }

  /** Forgets the records of older checkpoints whose folders the caller deleted; the last one stays. */
  async forgetCheckpoints(iterations: readonly number[]): Promise<void> {
    const d = this.db.data;
    if (d.lastCheckpoint && iterations.includes(d.lastCheckpoint.iteration))
      throw new Error(`RunStore.forgetCheckpoints: ${d.lastCheckpoint.iteration} is the last checkpoint`);
    d.checkpoints = d.checkpoints.filter((c) => !iterations.includes(c.iteration));
    await this.write();
  }

  /** Names the best checkpoint so far (src/collapse); it changes as checkpoints are saved. */
  async recordBest(best: NonNullable<RunRecord['best']>): Promise<void> {
    this.db.data.best = best;
    await this.write();
  }

  /** Records why the run ends early; the caller then marks it done. */
  async recordStop(stopped: NonNullable<RunRecord['stopped']>): Promise<void> {
    this.db.data.stopped = stopped;
    await this.write();
  }

  async setStatus(status: RunStatus, error?: string): Promise<void> {
    this.db.data.status = status;
    if (error !== undefined) this.db.data.error = error;
    else delete this.db.data.error;
    await this.write();
  }

  /**
   * Records which kernels this process computes on and returns what the run recorded before
   * when it differs: native and tfjs products round differently, so such a continuation is
   * not bit-identical to an uninterrupted run, and the caller says so.
   */
  async recordCompute(line: string): Promise<string | undefined> {
    const before = this.db.data.compute;
    this.db.data.compute = line;
    await this.write();
    return before !== undefined && before !== line ? before : undefined;
  }

  /**
   * Prepares to continue a run: drops everything after the last checkpoint (or everything,
   * with none), notes the resume and marks the run running. Returns the iteration to continue
   * after (0 without a checkpoint).
   */
  async resume(): Promise<number> {
    const from = this.db.data.lastCheckpoint?.iteration ?? 0;
    await this.truncateAfter(from);
    this.db.data.resumedAt.push(from);
    this.db.data.status = 'running';
    delete this.db.data.error;
    await this.write();
    return from;
  }

  /**
   * Removes every metrics row and episode with `iteration > n`, any torn last line, and
   * checkpoint records after `n` (their folders are left alone). Idempotent, so a kill in
   * the middle is repaired by calling it again. Assumes episodes were appended in
   * non-decreasing iteration order (shards are scanned from the newest and the scan stops
   * at the first non-empty shard that needs no change).
   */
  async truncateAfter(n: number): Promise<void> {
    this.assertWriter('truncateAfter');
    // Plan every rewrite before making any, so a corrupt line stops the resume with nothing changed.
    const keep = (obj: Record<string, unknown>) => (obj.iteration as number) <= n;
    const plans = [planFilter(this.metricsPath, keep)];
    const shards = listShards(this.episodesDir);
    for (let s = shards.length - 1; s >= 0; s--) {
      const plan = planFilter(join(this.episodesDir, shardName(shards[s]!)), keep);
      plans.push(plan);
      // an empty shard (a writer killed between making the file and writing to it) says nothing of the ones before
      if (!plan.changed && plan.kept.length > 0) break;
    }
    for (const p of plans) applyFilter(p, basename(p.file) === METRICS);
    this.shard = undefined; // recount before the next append
    this.clean.clear();

    const d = this.db.data;
    d.checkpoints = d.checkpoints.filter((c) => c.iteration <= n);
    d.lastCheckpoint = d.checkpoints[d.checkpoints.length - 1] ?? null;
    d.iterations = Math.min(d.iterations, n);
    // a best or a stop past the cut was measured on iterations that are replayed
    if (d.best && d.best.iteration > n) delete d.best;
    if (d.stopped && d.stopped.iteration >= n) delete d.stopped;
    await this.write();
  }

  // ------------------------------------------------------------------ reads

  /** Every complete metrics row, in order (a torn last line is skipped). */
  readMetrics(): MetricsRow[] {
    return readJsonl(this.metricsPath) as unknown as MetricsRow[];
  }

  /** Every stored episode, shard by shard, without loading more than one shard at a time. */
  *episodes(): Generator<StoredEpisode> {
    for (const index of listShards(this.episodesDir)) {
      yield* readJsonl(join(this.episodesDir, shardName(index))) as unknown as StoredEpisode[];
    }
  }

  /** Every stored episode as an array (small runs and tests). */
  readEpisodes(): StoredEpisode[] {
    return [...this.episodes()];
  }

  /** The shard files, oldest first (absolute paths). */
  shardFiles(): string[] {
    return listShards(this.episodesDir).map((i) => join(this.episodesDir, shardName(i)));
  }

  // ------------------------------------------------------------------ internals

  /** Every write goes through here: only the lock's holder writes, and only while it holds it. */
  private assertWriter(what: string): void {
    if (this.closed) throw new Error(`RunStore.${what}: the store of ${this.dir} is closed`);
    if (!this.lock)
      throw new Error(`RunStore.${what}: ${this.dir} was opened to read; open it with { write: true } to write`);
    this.lock.assertHeld();
  }

  private async write(): Promise<void> {
    this.assertWriter('write');
    this.db.data.updatedAt = new Date().toISOString();
    await this.db.write();
  }

  private relativeDir(dir: string): string {
    const abs = resolve(this.dir, dir);
    const rel = relative(this.dir, abs);
    return rel === '' || rel.startsWith('..' + sep) || rel === '..' || isAbsolute(rel) ? abs : rel.split(sep).join('/');
  }

  private currentShard(): { index: number; lines: number } {
    if (!this.shard) {
      const shards = listShards(this.episodesDir);
      if (shards.length === 0) this.shard = { index: 0, lines: 0 };
      else {
        const index = shards[shards.length - 1]!;
        const file = join(this.episodesDir, shardName(index));
        this.prepareAppend(file);
        this.shard = { index, lines: countLines(file) };
      }
    }
    return this.shard;
  }

  /** Before this process first appends to `file`, cut a torn last line left by a killed writer. */
  private prepareAppend(file: string): void {
    if (this.clean.has(file)) return;
    cutTornTail(file);
    this.clean.add(file);
  }
}

// -------------------------------------------------------------------- helpers

function checkRecord(d: unknown, where: string): asserts d is RunRecord {
  const r = d as Partial<RunRecord> | null;
  const ok =
    r !== null &&
    typeof r === 'object' &&
    ['running', 'done', 'failed'].includes(r.status as string) &&
    (r.kind === undefined || r.kind === 'experiment' || r.kind === 'pretrain') &&
    typeof r.iterations === 'number' &&
    Array.isArray(r.checkpoints) &&
    Array.isArray(r.resumedAt) &&
    (r.lastCheckpoint === null ||
      (typeof r.lastCheckpoint === 'object' && typeof r.lastCheckpoint?.iteration === 'number'));
  if (!ok)
    throw new Error(
      `RunStore.open: ${where} is not a run record (expected status, iterations, checkpoints, lastCheckpoint, resumedAt)`,
    );
}

/** Refuses a non-empty folder that is not a run: its files would be mixed with the run's, or deleted. */
function refuseForeign(dir: string, allowed: string[]): void {
  if (!existsSync(dir)) return;
  const found = readdirSync(dir).filter((f) => !allowed.includes(f));
  if (found.length === 0) return;
  const shown = found.slice(0, 5).join(', ') + (found.length > 5 ? `, and ${found.length - 5} more` : '');
  throw new Error(
    `RunStore.create: ${dir} is not empty and holds no ${RUN_JSON} (${shown}); a run starts in a new or empty folder`,
  );
}

function listShards(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => SHARD_RE.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}
