/**
 * The experiment config: one YAML file naming models, roles, an arena, judges, tasks and a
 * trainer. Every object is strict (an unknown key is an error, so a typo never silently falls
 * back to a default). Kinds of arenas, judges and roles are plain strings here; a registry
 * resolves them later and lists the names it knows.
 *
 * This module imports only types from the tensor code, so loading a config never loads
 * TensorFlow.js.
 */
import { z } from 'zod';
import type { BackendChoice } from '../backend/index.js';
import type { Accelerate } from '../backend/accelerate.js';
import type { TinyLMConfig } from '../models/tinylm.js';
import type { KlKind } from '../rl/kl.js';
import type { AggMode } from '../rl/loss.js';
import type { LrScheduleKind } from '../rl/schedule.js';
import type { TrainerConfig } from '../rl/trainer.js';

// Literal lists kept beside the types they mirror; the checks at the bottom of this file fail
// to compile if either side gains or loses a member.
export const BACKENDS = ['auto', 'gpu', 'node', 'wasm', 'cpu'] as const;
export const ACCELERATIONS = ['auto', 'off'] as const;
export const AGG_MODES = [
  'token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-mean',
  'seq-mean-token-sum-norm',
] as const;
export const KL_KINDS = ['k1', 'kl', 'abs', 'k2', 'mse', 'k3', 'low_var_kl'] as const;
export const REWARD_AGGREGATIONS = ['sum', 'normalize-then-sum'] as const;
export const ADVANTAGES = [
  'grpo',
  'drgrpo',
  'rloo',
  'reinforce++',
  'reinforce++-baseline',
  'rae',
  'infostate',
] as const;
export const GRADIENTS = ['sampled', 'all-actions', 'distill'] as const;
export const LR_SCHEDULES = ['constant', 'cosine'] as const;
export const TASK_SOURCES = ['generate', 'file', 'none'] as const;
export const KL_CONTROLS = ['fixed', 'adaptive'] as const;

// zod's own .int() aborts the whole parse on a fraction (so cross-field checks would be
// skipped and the error would list fewer problems); this check does not.
const int = () =>
  z.number().superRefine((v, ctx) => {
    if (!Number.isSafeInteger(v)) ctx.addIssue({ code: 'custom', message: `expected integer, received ${v}` });
  });
const posInt = () => int().positive();
const nonNegInt = () => int().nonnegative();
// Ids and names become folder names (checkpoints/<model>, runs/<name>), so each must be one
// plain path component: no '/', no '..', nothing hidden.
const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;
const unsafe = (v: string) =>
  `must be a plain name (letters, digits, '.', '_', '-'; not starting with '.' or '-'), got ${JSON.stringify(v)}`;
const safeName = () =>
  z.string().superRefine((v, ctx) => {
    if (!SAFE_NAME.test(v)) ctx.addIssue({ code: 'custom', message: unsafe(v) });
  });
// record keys are checked in the cross-field pass, where the error can name the key
const id = z.string().min(1, 'must not be empty');
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// Cross-field checks run even when other fields failed, so one error lists every problem;
// they therefore read their input defensively.
const always = { when: () => true };

/** Partial TinyLM architecture; whatever is left out comes from the checkpoint or the builder's defaults. */
export const TinyLMConfigSchema = z
  .strictObject({
    vocabSize: posInt().optional(), // number of token ids
    dModel: posInt().optional(), // width of the residual stream
    nHeads: posInt().optional(), // attention heads; must divide dModel
    nLayers: posInt().optional(), // transformer blocks
    context: posInt().optional(), // longest sequence (prompt + completion)
    valueHead: z.boolean().optional(), // add PPO's value head
    seed: int().optional(), // seed of the weight initialisation
  })
  .superRefine((c, ctx) => {
    if (!isRecord(c)) return;
    const { dModel, nHeads } = c;
    if (
      Number.isInteger(dModel) &&
      Number.isInteger(nHeads) &&
      (nHeads as number) > 0 &&
      (dModel as number) % (nHeads as number) !== 0
    ) {
      ctx.addIssue({ code: 'custom', path: ['nHeads'], message: `must divide dModel (${dModel}), got ${nHeads}` });
    }
  }, always);

/** An inference-only model behind an OpenAI-compatible endpoint (`coevolve serve`, vLLM, llama.cpp...). */
export const RemoteSchema = z.strictObject({
  url: z.string().url(), // the API base, e.g. http://127.0.0.1:8000/v1
  model: z.string().min(1), // the model id the endpoint serves
  apiKeyEnv: z.string().min(1).optional(), // the environment variable holding its API key (never the key itself in a config)
  timeoutMs: posInt().default(30000), // per request
  retries: int().min(0).default(2), // retries with exponential backoff on connection errors, timeouts, 429 and 5xx (the openai client's)
});

/** A LoRA adapter to train on a Hugging Face model, with PEFT's semantics (src/models/hf/lora.ts). */
export const LoraSchema = z.strictObject({
  r: posInt().default(8), // rank
  alpha: z.number().positive().default(16), // scaling alpha / r
  rslora: z.boolean().default(false), // scaling alpha / sqrt(r) instead
  dropout: z.number().min(0).lt(1).default(0), // on the adapter's input, while training
  targetModules: z.union([z.array(z.string().min(1)).min(1), z.string().min(1)]).default('all-linear'), // module names or suffixes, a whole-name regex, or all-linear (every projection but the head)
});

/** A policy that reads numbers (a game's observation vector) and scores actions; its input and output sizes are the arena's. */
export const MlpSchema = z.strictObject({
  hiddenSizes: z.array(posInt()).default([64, 64]), // widths of the hidden layers, first to last
  activation: z.enum(['tanh', 'relu']).default('tanh'), // after each hidden layer
});

/**
 * The KL term's reference as a table over the game's information states (the magnet of
 * magnetic mirror descent, Sokota et al. 2022): uniform over each state's legal moves, or
 * moving: after every update it takes a share `rate` of the policy's table, so the
 * regularisation follows the learner and its fixed point is a Nash equilibrium.
 */
export const MagnetSchema = z.strictObject({
  kind: z.enum(['uniform', 'moving']).default('uniform'),
  rate: z.number().gt(0).max(1).default(0.01), // moving: the policy's share of the magnet after each update
});

export const ModelSchema = z
  .strictObject({
    checkpoint: z.string().min(1).optional(), // dir of a saved model to start from
    // model class: a TinyLM trained here, a Hugging Face directory, a remote endpoint (inference only), or an MLP on a game's numbers
    kind: z.enum(['tinylm', 'hf', 'remote', 'mlp']).default('tinylm'),
    config: TinyLMConfigSchema.optional(), // architecture (for a fresh model, or checked against the checkpoint)
    path: z.string().min(1).optional(), // kind hf: the Hugging Face model directory (config.json, safetensors, tokenizer.json); nothing is downloaded
    adapter: z.string().min(1).optional(), // kind hf: a PEFT LoRA adapter directory to start from (then trained)
    lora: LoraSchema.optional(), // kind hf: train a new LoRA adapter on the frozen base (default: full fine-tuning)
    reference: z.boolean().default(false), // keep a frozen copy for the KL term
    remote: RemoteSchema.optional(), // kind remote: where the model is served
    mlp: MlpSchema.optional(), // kind mlp: its layers (the arena gives its input and action counts)
    magnet: MagnetSchema.optional(), // kind mlp: the KL reference as a table over the game's states (default uniform)
  })
  .superRefine((m, ctx) => {
    if (!isRecord(m)) return;
    if (m.kind === 'hf') {
      if (m.path === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['path'],
          message: "required for kind 'hf': a Hugging Face model directory",
        });
      for (const f of ['checkpoint', 'config'] as const)
        if (m[f] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [f],
            message: "kind 'hf' reads its weights and architecture from path; remove it",
          });
      if (m.adapter !== undefined && m.lora !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['lora'],
          message: 'the adapter directory has its own LoRA settings; give adapter or lora, not both',
        });
    } else
      for (const f of ['path', 'adapter', 'lora'] as const)
        if (m[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: "only for kind 'hf'" });
    if (m.kind === 'mlp') {
      if (m.config !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['config'],
          message: "kind 'mlp' takes its layers from mlp: { hiddenSizes }",
        });
      if (m.reference === true)
        ctx.addIssue({
          code: 'custom',
          path: ['reference'],
          message: "kind 'mlp' keeps its KL reference as a table: set magnet instead",
        });
    } else
      for (const f of ['mlp', 'magnet'] as const)
        if (m[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: "only for kind 'mlp'" });
    if (m.kind === 'remote') {
      if (m.remote === undefined)
        ctx.addIssue({ code: 'custom', path: ['remote'], message: "required for kind 'remote': { url, model }" });
      for (const f of ['checkpoint', 'config'] as const)
        if (m[f] !== undefined)
          ctx.addIssue({ code: 'custom', path: [f], message: 'a remote model has no local weights; remove it' });
      if (m.reference === true)
        ctx.addIssue({ code: 'custom', path: ['reference'], message: 'a remote model cannot be a KL reference' });
    } else if (m.remote !== undefined)
      ctx.addIssue({ code: 'custom', path: ['remote'], message: "only for kind 'remote'" });
  }, always);

export const KlRewardSchema = z
  .strictObject({
    type: z.enum(KL_CONTROLS).default('fixed'), // verl's kl_ctrl.type
    coef: z.number().nonnegative(), // starting β (verl's kl_coef)
    targetKl: z.number().positive().optional(), // adaptive: the KL aimed at (verl's target_kl)
    horizon: posInt().optional(), // adaptive: samples per full correction (verl's horizon)
    kind: z.enum(KL_KINDS).default('kl'), // estimator (verl's algorithm.kl_penalty, default 'kl' = k1)
  })
  .superRefine((k, ctx) => {
    if (!isRecord(k) || k.type !== 'adaptive') return;
    for (const f of ['targetKl', 'horizon'] as const)
      if (k[f] === undefined) ctx.addIssue({ code: 'custom', path: [f], message: "required when type is 'adaptive'" });
  }, always);

/** The model id a role's adapter becomes (src/config/adapters.ts). */
export const adapterModelId = (model: string, adapter: string) => `${model}-${adapter}`;

export const RoleSchema = z.strictObject({
  kind: z.string().min(1), // role implementation, e.g. 'solver', 'proposer'
  model: z.string().min(1), // a key of `models`: the policy that plays this role
  system: z.string().min(1).optional(), // the system message when the model speaks through a chat template (default: the role kind's instructions, roles/)
  adapter: safeName().optional(), // kind hf: this role's own LoRA adapter on the model's frozen base, by name (roles naming one adapter share it); see src/config/adapters.ts
  train: z.boolean().default(true), // false: the role plays but never learns (a frozen proposer)
  maxNewTokens: posInt().optional(), // this role's longest completion (default arena.maxNewTokens): a one-token verdict beside long working
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

export const TaskSourceSchema = z
  .strictObject({
    source: z.enum(TASK_SOURCES), // 'generate' from the family's generator, read a 'file', or 'none' (a proposer writes them)
    count: posInt().optional(), // how many tasks to generate (source 'generate')
    path: z.string().min(1).optional(), // JSONL file of tasks (source 'file')
  })
  .superRefine((s, ctx) => {
    if (!isRecord(s)) return;
    const { source, path, count } = s;
    if (source === 'file' && path === undefined)
      ctx.addIssue({ code: 'custom', path: ['path'], message: "required when source is 'file'" });
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
  maxNewTokens: posInt().default(8), // longest completion per turn
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

export const TrainerSchema = z.strictObject({
  lr: z.number().positive().optional(), // Adam learning rate
  beta1: z.number().min(0).lt(1).optional(), // Adam beta1
  beta2: z.number().min(0).lt(1).optional(), // Adam beta2
  epsilon: z.number().positive().optional(), // Adam epsilon
  clipLow: z.number().nonnegative().optional(), // PPO clip: ratio >= 1 - clipLow
  clipHigh: z.number().nonnegative().optional(), // PPO clip: ratio <= 1 + clipHigh
  clipRatioC: z.number().gt(1).optional(), // dual-clip bound for negative advantages
  aggMode: z.enum(AGG_MODES).optional(), // how token losses become one number per role
  entropyCoef: z.number().optional(), // weight of the entropy bonus
  klCoef: z.number().nonnegative().optional(), // weight of the KL-to-reference term (needs a reference model)
  klKind: z.enum(KL_KINDS).optional(), // KL estimator
  valueCoef: z.number().nonnegative().optional(), // weight of the value loss
  clipRangeValue: z.number().positive().optional(), // clip range of the value loss
  maxGradNorm: z.number().positive().optional(), // global gradient-norm clip
  temperature: z.number().positive().optional(), // logits are divided by this before log-probs
  microBatch: z // samples per forward/backward pass; larger updates accumulate exact gradients
    .number()
    .superRefine((v, ctx) => {
      if (!(Number.isSafeInteger(v) && v > 0))
        ctx.addIssue({ code: 'custom', message: `must be a positive integer (samples per pass), got ${v}` });
    })
    .optional(),
  advantage: z.enum(ADVANTAGES).default('grpo'), // advantage estimator
  // several judges: 'sum' weighs their rewards into one before the estimator; 'normalize-then-sum' is TRL's
  // multi_objective_aggregation="normalize_then_sum" (each judge normalised in its group, summed, normalised over the batch)
  rewardAggregation: z.enum(REWARD_AGGREGATIONS).default('sum'),
  raeDecay: z.number().gt(0).lt(1).optional(), // 'rae': decay of each role's moving baseline (SPIRAL's 0.95 when unset)
  // how an MLP learns from its games (src/games/update.ts): 'sampled' is the policy gradient of the moves played;
  // 'all-actions' and 'distill' use the critic's value of every legal move at each state visited (klCoef is the magnet's weight)
  gradient: z.enum(GRADIENTS).default('sampled'),
  critic: z
    .strictObject({
      kind: z.enum(['sampled', 'counts']).default('sampled'), // an EMA of each iteration's mean, or forgetting sums and counts
      decay: z.number().min(0).lt(1).default(0.95), // forgetting per iteration (also the 'infostate' baseline's)
    })
    .prefault({}), // the tabular values of each information state and move
  mmd: z
    .strictObject({
      eta: z.number().positive().default(0.02), // MMD's step size
      fitSteps: posInt().default(200), // at most this many Adam steps fit the network to the step's targets
      fitTol: z.number().nonnegative().default(1e-5), // stop once the mean KL(target || network) is under this (0: always fitSteps)
    })
    .prefault({}), // 'distill': MMD's closed-form step at each visited state, fitted by cross-entropy
  dropEqualGroups: z.boolean().default(false), // drop groups whose rewards are all equal (no signal)
  ppoEpochs: posInt().default(1), // optimizer passes over each iteration's samples
  miniBatches: posInt().default(1), // optimizer steps per pass: the samples shuffled and cut into this many parts (verl's ppo_mini_batch_size, as a count)
  lrSchedule: z
    .strictObject({
      kind: z.enum(LR_SCHEDULES).default('constant'), // 'cosine' decays by a half cosine to minRatio · lr
      warmup: nonNegInt().default(0), // iterations over which the rate rises from 0
      minRatio: z.number().min(0).max(1).default(0), // cosine floor, as a share of lr
      cycle: posInt().optional(), // restart the schedule every this many iterations (default: one run-long cycle)
      cycleDecay: z.number().gt(0).max(1).optional(), // cycle k peaks at lr · cycleDecay^k (timm's cycle_decay)
    })
    .prefault({}), // learning rate per iteration (verl's warmup_style / min_lr_ratio)
  refSync: z
    .strictObject({
      steps: posInt(), // iterations between syncs (TRL's ref_model_sync_steps)
      mixupAlpha: z.number().gt(0).max(1).default(0.6), // policy's share of the new reference (TRL's ref_model_mixup_alpha)
    })
    .optional(), // move the KL reference toward the policy (TRL's sync_ref_model)
});

/** Where rollouts are played: in this process (its worker threads), or by `coevolve worker` processes through a BullMQ queue on Redis. */
export const RolloutSchema = z
  .strictObject({
    engine: z.enum(['local', 'redis']).default('local'),
    url: z.string().min(1).optional(), // redis://[:password@]host:port (keep Redis off public interfaces)
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
    const hf = Object.entries(models)
      .filter(([, m]) => isRecord(m) && m.kind === 'hf')
      .map(([k]) => k);
    if (hf.length && isRecord(c.rollout) && c.rollout.engine === 'redis')
      ctx.addIssue({
        code: 'custom',
        path: ['rollout', 'engine'],
        message: `rollout workers play TinyLM models only so far; ${hf.join(', ')} (kind hf) roll out in this process: use engine local`,
      });
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
  }, always);

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
