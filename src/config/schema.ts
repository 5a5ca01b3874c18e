/**
 * The experiment config: one YAML file naming models, roles, an arena, judges, tasks and a
 * trainer. Every object is strict (an unknown key is an error, so a typo never silently falls
 * back to a default). Kinds of arenas, judges and roles are plain strings here; a registry
 * resolves them later and lists the names it knows.
 *
 * This module imports only types from the tensor code, so loading a config never loads
 * TensorFlow.js. The models' entries (model-schema.ts) and the trainer (trainer-schema.ts) stand
 * alone; the rest stays here because its cross-field checks (a role's model exists, a KL term
 * has a reference, the phases and the pool name real roles) read every section together.
 */
import { z } from 'zod';
import { always, id, int, isRecord, nonNegInt, posInt, SAFE_NAME, safeName, unsafe } from './fields.js';
import { inferenceServerIssues } from './inference.js';
import { CollapseSchema, STOP_ON } from '../collapse/options.js';
import { ModelSchema } from './model-schema.js';
import { ADVANTAGES, AGG_MODES, KL_KINDS, KlRewardSchema, LR_SCHEDULES, TrainerSchema } from './trainer-schema.js';
import type { BackendChoice } from '../backend/index.js';
import type { Accelerate } from '../backend/accelerate.js';
import type { TinyLMConfig } from '../models/tinylm.js';
import type { KlKind } from '../rl/kl.js';
import type { AggMode } from '../rl/loss.js';
import type { LrScheduleKind } from '../rl/schedule.js';
import type { TrainerConfig } from '../rl/trainer.js';

// Literal lists kept beside the types they mirror; the checks at the bottom of this file fail
// to compile if either side gains or loses a member (the trainer's live in trainer-schema.ts).
export const BACKENDS = ['auto', 'gpu', 'node', 'wasm', 'cpu'] as const;
export const ACCELERATIONS = ['auto', 'off'] as const;
export const TASK_SOURCES = ['generate', 'file', 'none'] as const;

/** The model id a role's adapter becomes (src/config/adapters.ts). */
export const adapterModelId = (model: string, adapter: string) => `${model}-${adapter}`;

/** A stop string: an empty one would end every answer before it starts. */
const stopString = z
  .string()
  .min(1, 'a stop string must be non-empty text (an empty one would end every answer at once)');

export const RoleSchema = z.strictObject({
  kind: z.string().min(1), // role implementation, e.g. 'solver', 'proposer'
  model: z.string().min(1), // a key of `models`: the policy that plays this role
  system: z.string().min(1).optional(), // the system message when the model speaks through a chat template (default: the role kind's instructions, roles/)
  adapter: safeName().optional(), // kind hf: this role's own LoRA adapter on the model's frozen base, by name (roles naming one adapter share it); see src/config/adapters.ts
  train: z.boolean().default(true), // false: the role plays but never learns (a frozen proposer)
  maxNewTokens: posInt().optional(), // this role's longest completion (default arena.maxNewTokens): a one-token verdict beside long working
  stop: z.array(stopString).optional(), // this role's stop strings, in place of arena.stop ([] for none)
  advantage: z.enum(ADVANTAGES).optional(), // this role's advantage estimator (default trainer.advantage)
  klCoef: z.number().nonnegative().optional(), // this role's KL loss weight (default trainer.klCoef)
  klReward: KlRewardSchema.optional(), // KL to the reference as a reward penalty (verl's apply_kl_penalty)
  lossWeight: z.number().nonnegative().optional(), // this role's weight in the summed loss of a shared model (default 1)
});

export const PhaseSchema = z.strictObject({
  roles: z.array(z.string().min(1)).min(1, 'a phase trains at least one role'), // role ids that train in this phase
  iterations: posInt(), // how long the phase lasts; the list of phases repeats
});

export const EvaluatorSchema = z.strictObject({
  kind: z.string().min(1), // evaluator implementation, e.g. 'accuracy', 'proposals'
  name: safeName(), // metrics appear as eval/<name>/...
  role: z.string().min(1).optional(), // the role evaluated (default: the first role of the kind the evaluator needs)
  every: posInt().optional(), // evaluate every this many iterations (default eval.every)
  options: z.record(z.string(), z.unknown()).default({}), // evaluator-specific options
});

export const BufferSchema = z.strictObject({
  size: posInt().default(256), // recent valid proposed tasks kept (duplicate checks, replay)
  replay: nonNegInt().default(0), // tasks drawn from the buffer into each iteration's tasks
});

const column = z.string().min(1);

/** Which column of a task file is what (src/tasks/dataset.ts); unset ones are `prompt`, `answer`, `id`. */
export const FieldMapSchema = z.strictObject({
  // the prompt column (a string, or chat messages: an optional system message, then a user message), or a template of `{column}`s
  prompt: z.union([column, z.strictObject({ template: z.string().min(1) })]).optional(),
  answer: z.union([column, z.strictObject({ field: column, after: z.string().min(1).optional() })]).optional(), // the reference answer; `after`: what marks it in the column (GSM8K's "####")
  id: column.optional(), // a unique id per row (default: <family>-<row number>)
  system: column.optional(), // a system message per row
});

export const TaskSourceSchema = z
  .strictObject({
    source: z.enum(TASK_SOURCES), // 'generate' from the family's generator, read a 'file', or 'none' (a proposer writes them)
    count: posInt().optional(), // how many tasks to generate (source 'generate')
    path: z.string().min(1).optional(), // task file (source 'file'): JSONL, or Parquet (.parquet), as Hugging Face datasets ship them
    fields: FieldMapSchema.optional(), // the file's column names (source 'file'), when not prompt/answer/id
  })
  .superRefine((s, ctx) => {
    if (!isRecord(s)) return;
    const { source, path, count } = s;
    if (source === 'file' && path === undefined)
      ctx.addIssue({ code: 'custom', path: ['path'], message: "required when source is 'file'" });
    if (source !== 'file' && s.fields !== undefined)
      ctx.addIssue({ code: 'custom', path: ['fields'], message: "only for source 'file'" });
    if (source === 'generate' && count === undefined)
      ctx.addIssue({ code: 'custom', path: ['count'], message: "required when source is 'generate'" });
  }, always);

export const TasksSchema = z.strictObject({
  family: z.string().min(1), // task family that makes and verifies tasks, e.g. 'arithmetic'
  difficulty: z.record(z.string(), z.unknown()).default({}), // family-specific knobs
  train: TaskSourceSchema, // where training tasks come from
  eval: TaskSourceSchema.optional(), // held-out evaluation tasks (the default evaluator); evaluators may add more
  perIteration: posInt().default(32), // tasks (groups) played per iteration
});

export const ArenaSchema = z.strictObject({
  kind: z.string().min(1).default('solve'), // arena implementation
  groupSize: posInt().default(8), // episodes per task (G of GRPO); all of them are judged
  trainPerGroup: posInt().optional(), // train on only the first this many of each group (TTRL votes on more than it trains on)
  maxNewTokens: posInt().default(8), // longest completion per turn (prompt + this must fit the model's positions)
  stop: z.array(stopString).default([]), // stop strings (vLLM's stop): an answer ends once its text holds one, cut before it; the tokens keep the one that completed it
  temperature: z.number().nonnegative().default(1), // sampling temperature (0 = greedy)
  topK: nonNegInt().default(0), // keep the k most likely tokens (0 = off)
  topP: z.number().gt(0).max(1).default(1), // nucleus sampling mass (1 = off)
  options: z.record(z.string(), z.unknown()).default({}), // arena-specific options, checked by the arena
});

export const JudgeSchema = z.strictObject({
  kind: z.string().min(1), // judge implementation, e.g. 'exact-match'
  weight: z.number().default(1), // weight of this judge's reward in the sum
  options: z.record(z.string(), z.unknown()).default({}), // judge-specific options
});

/**
 * Where rollouts are played: in this process (its worker threads), by `coevolve worker`
 * processes through a BullMQ queue on Redis, or on an OpenAI-compatible inference server
 * (vLLM, SGLang, `coevolve serve --enable-lora`) that loads each trained adapter at run time
 * (src/openai/rollouts.ts; the config's checks in src/config/inference.ts).
 */
export const RolloutSchema = z
  .strictObject({
    engine: z.enum(['local', 'redis', 'openai']).default('local'),
    url: z.string().min(1).optional(), // redis://[:password@]host:port (keep Redis off public interfaces); engine openai: the server's base URL, e.g. http://127.0.0.1:8000/v1
    apiKeyEnv: z.string().min(1).optional(), // engine openai: the environment variable holding the server's API key (the key stays out of the saved config)
    adapterDir: z.string().min(1).optional(), // engine openai: where adapters are written for the server to read, a path it sees as the learner does (default: <run>/served-adapters)
    timeoutMs: posInt().default(600000), // engine openai: one request's timeout
    retries: int().min(0).default(3), // engine openai: retries of a request that failed in transit or with a 5xx/429, with exponential backoff
    queue: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'a plain name')
      .default('coevolve'), // the queue workers take jobs from; one run at a time per queue
    maxStaleness: int().min(0).default(0), // rollouts may be played with weights this many versions old (queued ahead of the update)
    jobEpisodes: posInt().default(64), // episodes per job (a group's members may go to different workers)
    isThreshold: z.number().positive().default(2), // verl's rollout_is_threshold: the cap of the truncated importance weights of stale rollouts
    weightsDir: z.string().min(1).optional(), // publish weights to this directory (every worker must read it) instead of Redis
    // a job whose worker stalled past BullMQ's limit (blocked or died) or whose weights Redis lost is queued again
    // this many times; past that the run stops, resumable
    jobRetries: int().min(0).default(3),
  })
  .superRefine((r, ctx) => {
    if (isRecord(r) && r.engine === 'redis' && r.url === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: "required for engine 'redis', e.g. redis://127.0.0.1:6379",
      });
    if (isRecord(r) && r.engine === 'openai' && r.url === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: "required for engine 'openai': the inference server's base URL, e.g. http://127.0.0.1:8000/v1",
      });
  }, always);

/** Self-play against frozen past selves (src/engine/opponents.ts). */
export const OpponentsSchema = z.strictObject({
  roles: z.array(z.string().min(1)).min(2), // the roles that take turns as the learner; the others of an episode play a snapshot (all on one model)
  sampling: z.enum(['latest', 'uniform', 'prioritised']).default('prioritised'), // how each episode's opponent is drawn from the pool
  poolSize: posInt().default(10), // snapshots kept; the oldest leaves
  snapshotEvery: posInt().default(25), // iterations between snapshots
});

export const EvalSchema = z.strictObject({
  every: posInt().default(10), // evaluate every this many iterations
  samples: posInt().default(16), // samples per eval task, for maj@N
  temperature: z.number().positive().optional(), // sampling temperature for maj@N (default: the arena's, or 1 if it is greedy)
});

export const ExperimentSchema = z
  .strictObject({
    name: safeName(), // experiment name; names the run directory
    seed: int().default(0), // seed of everything random
    backend: z.enum(BACKENDS).default('auto'), // tensor backend
    accelerate: z.enum(ACCELERATIONS).default('auto'), // native matrix products when a library loads (auto), or tfjs's own (off)
    workers: z.union([z.literal('auto'), posInt()]).default('auto'), // threads that roll out and train, each with a replica of the models (auto: one per core)
    iterations: posInt(), // training iterations to run
    outDir: z.string().min(1).default('runs'), // parent of run directories
    models: z.record(id, ModelSchema).refine((m) => Object.keys(m).length > 0, 'at least one model is required'), // model id -> model
    roles: z.record(id, RoleSchema).refine((r) => Object.keys(r).length > 0, 'at least one role is required'), // role id -> role
    tasks: TasksSchema, // task family and sources
    arena: ArenaSchema.prefault({}), // how episodes are played
    judges: z.array(JudgeSchema).min(1, 'at least one judge is required'), // reward sources, summed by weight
    trainer: TrainerSchema.prefault({}), // RL update settings (unset fields take DEFAULT_TRAINER)
    eval: EvalSchema.prefault({}), // periodic evaluation
    checkpointEvery: posInt().default(5), // save a checkpoint every this many iterations
    collapse: CollapseSchema.prefault({}), // the collapse watch's thresholds (src/collapse, docs/collapse.md); every run keeps the watch
    stopOn: z.enum(STOP_ON).optional(), // 'collapse': end the run at the first collapse flagged, and name the best checkpoint
    opponents: OpponentsSchema.optional(), // the learner against a pool of its past selves instead of itself
    episodesEvery: posInt().default(1), // store the episodes of every this many iterations (a game plays thousands an iteration)
    phases: z.array(PhaseSchema).min(1).optional(), // which roles train when, cycled (default: every training role, always)
    evaluators: z.array(EvaluatorSchema).default([]), // named evaluations beside tasks.eval
    buffer: BufferSchema.prefault({}), // the task buffer of recent valid proposals
    rollout: RolloutSchema.prefault({}), // where rollouts are played: here, or by worker processes through Redis
    plugins: z.array(z.string().min(1)).default([]), // modules that define arenas, judges, roles, task families or evaluators: paths (from the working directory) or package names
  })
  .superRefine((c, ctx) => {
    if (!isRecord(c)) return;
    const models = isRecord(c.models) ? c.models : {};
    const roles = isRecord(c.roles) ? c.roles : {};
    const known = Object.keys(models);
    for (const [field, rec] of [
      ['models', models],
      ['roles', roles],
    ] as const) {
      for (const key of Object.keys(rec))
        if (!SAFE_NAME.test(key)) ctx.addIssue({ code: 'custom', path: [field], message: `an id ${unsafe(key)}` });
    }
    for (const [roleId, role] of Object.entries(roles)) {
      const model = isRecord(role) ? role.model : undefined;
      if (
        typeof model === 'string' &&
        isRecord(models[model]) &&
        (models[model] as Record<string, unknown>).kind === 'remote' &&
        role.train !== false
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['roles', roleId, 'train'],
          message: `model "${model}" is remote (inference only): set train: false`,
        });
      }
      if (typeof model === 'string' && model !== '' && !Object.hasOwn(models, model)) {
        ctx.addIssue({
          code: 'custom',
          path: ['roles', roleId, 'model'],
          message: `unknown model "${model}"; known models: ${known.join(', ') || '(none)'}`,
        });
      }
    }
    for (const [roleId, role] of Object.entries(roles)) {
      if (
        !isRecord(role) ||
        role.adapter === undefined ||
        typeof role.model !== 'string' ||
        !isRecord(models[role.model])
      )
        continue;
      const m = models[role.model] as Record<string, unknown>;
      if (m.kind !== 'hf')
        ctx.addIssue({
          code: 'custom',
          path: ['roles', roleId, 'adapter'],
          message: `an adapter is trained on a Hugging Face base; model "${role.model}" is ${String(m.kind ?? 'tinylm')}`,
        });
      else if (Object.hasOwn(models, adapterModelId(role.model, String(role.adapter))))
        ctx.addIssue({
          code: 'custom',
          path: ['roles', roleId, 'adapter'],
          message: `the adapter's model id "${adapterModelId(role.model, String(role.adapter))}" is taken by a model of that name; rename one`,
        });
    }
    // a starting adapter no role names would be loaded for nothing: most likely a misspelt name
    for (const [modelId, m] of Object.entries(models)) {
      if (!isRecord(m) || !isRecord(m.adapters)) continue;
      const named = Object.values(roles).flatMap((r) =>
        isRecord(r) && r.model === modelId && typeof r.adapter === 'string' ? [r.adapter] : [],
      );
      for (const name of Object.keys(m.adapters))
        if (!named.includes(name))
          ctx.addIssue({
            code: 'custom',
            path: ['models', modelId, 'adapters', name],
            message: `no role plays adapter "${name}" on model "${modelId}"; its roles' adapters: ${[...new Set(named)].join(', ') || '(none)'}`,
          });
    }
    const arena: Record<string, unknown> = isRecord(c.arena) ? c.arena : {};
    if (
      typeof arena.trainPerGroup === 'number' &&
      typeof arena.groupSize === 'number' &&
      arena.trainPerGroup > arena.groupSize
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['arena', 'trainPerGroup'],
        message: `must be at most arena.groupSize (${arena.groupSize})`,
      });
    }
    const klCoef = isRecord(c.trainer) ? c.trainer.klCoef : undefined;
    if (isRecord(c.trainer) && c.trainer.refSync !== undefined && !(typeof klCoef === 'number' && klCoef > 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['trainer', 'refSync'],
        message: 'needs trainer.klCoef > 0 (the reference is only used by the KL term)',
      });
    }
    // every role that trains with a KL term (the trainer's, its own, or in its reward) needs its model's reference
    const flagged = new Set<string>();
    const phased = Array.isArray(c.phases)
      ? new Set(c.phases.flatMap((ph) => (isRecord(ph) && Array.isArray(ph.roles) ? ph.roles : [])))
      : undefined;
    for (const [roleId, r] of Object.entries(roles)) {
      if (!isRecord(r) || typeof r.model !== 'string' || !Object.hasOwn(models, r.model)) continue;
      if (r.train === false || (phased && !phased.has(roleId))) continue; // a frozen role has no KL term
      const own = typeof r.klCoef === 'number' ? r.klCoef : typeof klCoef === 'number' ? klCoef : 0;
      const why =
        r.klReward !== undefined
          ? `roles.${roleId}.klReward`
          : own > 0
            ? typeof r.klCoef === 'number'
              ? `roles.${roleId}.klCoef > 0`
              : 'trainer.klCoef > 0'
            : undefined;
      const spec = models[r.model];
      // a game policy's reference is its magnet, a table (uniform unless set)
      if (why && isRecord(spec) && spec.reference !== true && spec.kind !== 'mlp' && !flagged.has(r.model)) {
        flagged.add(r.model);
        ctx.addIssue({
          code: 'custom',
          path: ['models', r.model, 'reference'],
          message: `must be true when ${why} (the KL term needs a frozen reference copy)`,
        });
      }
    }
    // normalize-then-sum forms the advantages itself (TRL's): no other estimator, no KL in the reward
    if (isRecord(c.trainer) && c.trainer.rewardAggregation === 'normalize-then-sum') {
      if (c.trainer.advantage !== undefined && c.trainer.advantage !== 'grpo')
        ctx.addIssue({
          code: 'custom',
          path: ['trainer', 'advantage'],
          message: `must be grpo with trainer.rewardAggregation normalize-then-sum (it forms the advantages itself), got ${String(c.trainer.advantage)}`,
        });
      for (const [roleId, r] of Object.entries(roles)) {
        if (!isRecord(r)) continue;
        if (r.advantage !== undefined && r.advantage !== 'grpo')
          ctx.addIssue({
            code: 'custom',
            path: ['roles', roleId, 'advantage'],
            message: `must be grpo with trainer.rewardAggregation normalize-then-sum, got ${String(r.advantage)}`,
          });
        if (r.klReward !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['roles', roleId, 'klReward'],
            message:
              'cannot be used with trainer.rewardAggregation normalize-then-sum (the KL penalty is not a judge to normalise)',
          });
      }
    }
    const phases = Array.isArray(c.phases) ? c.phases : [];
    phases.forEach((p, i) => {
      const named = isRecord(p) && Array.isArray(p.roles) ? p.roles : [];
      named.forEach((r, k) => {
        if (typeof r === 'string' && !Object.hasOwn(roles, r))
          ctx.addIssue({
            code: 'custom',
            path: ['phases', i, 'roles', k],
            message: `unknown role "${r}"; known roles: ${Object.keys(roles).join(', ')}`,
          });
      });
    });
    // the pool copies one model: every role that takes turns as the learner plays on it
    const pooled = isRecord(c.opponents) && Array.isArray(c.opponents.roles) ? c.opponents.roles : [];
    const on = new Set<unknown>();
    pooled.forEach((r, k) => {
      if (typeof r !== 'string') return;
      const role = roles[r];
      if (!isRecord(role))
        ctx.addIssue({
          code: 'custom',
          path: ['opponents', 'roles', k],
          message: `unknown role "${r}"; known roles: ${Object.keys(roles).join(', ')}`,
        });
      else on.add(role.model);
    });
    if (on.size > 1)
      ctx.addIssue({
        code: 'custom',
        path: ['opponents', 'roles'],
        message: `the roles play on ${[...on].join(' and ')}; a pool copies one model, so they must share it`,
      });
    if (isRecord(c.rollout) && c.rollout.engine === 'openai') inferenceServerIssues(models, roles, ctx);
  }, always);

export * from './model-schema.js';
export * from './trainer-schema.js';

/** A validated experiment config with every default filled in. */
export type ExperimentConfig = z.output<typeof ExperimentSchema>;
/** What a config file may contain (defaults still optional). */
export type ExperimentInput = z.input<typeof ExperimentSchema>;
export type ModelSpec = ExperimentConfig['models'][string];
export type RoleSpec = ExperimentConfig['roles'][string];
export type TaskSourceSpec = ExperimentConfig['tasks']['train'];
export type JudgeSpec = ExperimentConfig['judges'][number];
export type TrainerSpec = ExperimentConfig['trainer'];

// ---- compile-time checks that the literal lists and field sets match the runtime types ----
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type _Checks = [
  Assert<Same<(typeof BACKENDS)[number], BackendChoice>>,
  Assert<Same<(typeof ACCELERATIONS)[number], Accelerate>>,
  Assert<Same<(typeof AGG_MODES)[number], AggMode>>,
  Assert<Same<(typeof KL_KINDS)[number], KlKind>>,
  Assert<Same<(typeof LR_SCHEDULES)[number], LrScheduleKind>>,
  // every TrainerConfig field can be set, with a compatible type
  Assert<
    Same<
      keyof TrainerConfig,
      Exclude<
        keyof TrainerSpec,
        | 'advantage'
        | 'rewardAggregation'
        | 'raeDecay'
        | 'dropEqualGroups'
        | 'ppoEpochs'
        | 'miniBatches'
        | 'lrSchedule'
        | 'refSync'
        | 'gradient'
        | 'critic'
        | 'mmd'
      >
    >
  >,
  Assert<Required<Pick<TrainerSpec, keyof TrainerConfig>> extends TrainerConfig ? true : false>,
  // every TinyLMConfig field can be set, with a compatible type
  Assert<Same<keyof TinyLMConfig, keyof NonNullable<ModelSpec['config']>>>,
  Assert<Required<NonNullable<ModelSpec['config']>> extends Required<TinyLMConfig> ? true : false>,
];
