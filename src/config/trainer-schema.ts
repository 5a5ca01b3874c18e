/** The `trainer` section of an experiment config and the KL reward of a role: how a batch becomes an update. */
import { z } from 'zod';
import { always, isRecord, nonNegInt, posInt } from './fields.js';

// Literal lists kept beside the types they mirror; the checks at the bottom of schema.ts fail
// to compile if either side gains or loses a member.
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
export const KL_CONTROLS = ['fixed', 'adaptive'] as const;

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
