import { rolePrompt } from '../../roles/prompt.js';
import { z } from 'zod';
import { initBackend, describeBackend, BACKEND_CHOICES, type BackendChoice } from '../backend/index.js';
import { ACCELERATE_CHOICES, type Accelerate } from '../backend/accelerate.js';
import { rm } from 'node:fs/promises';
import { Agents } from '../../arenas/agents.js';
import { JudgeRole, ProposerRole } from '../../roles/others.js';
import { SolverRole } from '../../roles/solver.js';
import type { Task } from '../core/types.js';
import { checkReplaceable } from '../models/checkpoint.js';
import { loadModel, saveModel } from '../models/store.js';
import { SupervisedTrainer } from '../models/supervised.js';
import { TinyLM } from '../models/tinylm.js';
import type { PolicyInput } from '../models/types.js';
import { BatchingServer } from '../serving/server.js';
import { drawUnseen, mixtureSource, type MixtureCell } from '../tasks/common.js';
import { tasksJsonl } from '../tasks/jsonl.js';
import { taskFamily } from '../tasks/index.js';
import type { ParsedProposal, TaskFamily } from '../tasks/types.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { Rng } from '../util/rng.js';
import { evaluateSolver, type EvalResult } from './evaluate.js';
import { startReplicas, workerCount, type Replicas } from '../parallel/replicas.js';
import { resolveTaskFamily } from './registry.js';
import { JudgeCorpusSchema, judgeExamples } from './judge-corpus.js';
import { CriticCorpusSchema } from './critic-corpus.js';
import { MemoryCorpusSchema } from './memory-corpus.js';
import { GameCorpusSchema } from './game-corpus.js';
import { roleCorpus, roleEvaluation, type RoleProbes } from './role-corpus.js';
import { readTasksJsonl } from '../tasks/jsonl.js';
import { ArchitectureSchema, createHfModel, writeHfDirectory } from '../models/hf/create.js';
import { HfPolicy } from '../models/hf/policy.js';
import { roleTokenizer } from '../models/hf/text.js';
import type { LanguageModel } from '../models/generate.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { join } from 'node:path';

/** The file a pretrained Hugging Face base records its pretraining in (steps, held-out accuracy), beside the model's own files. */
const PRETRAIN_RECORD = 'coevolve-pretrain.json';

/** Throws unless `dir` is absent, empty, or a base pretrain wrote (its record file is there). */
function checkHfReplaceable(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0 && !existsSync(join(dir, PRETRAIN_RECORD)))
    throw new Error(`${dir} holds files that are not a base pretrain wrote`);
}

const Difficulty = z.record(z.string(), z.unknown());
/** weighted difficulties; each difficulty is merged over `task.difficulty`, so shared fields are written once */
const Mixture = z.array(z.strictObject({ difficulty: Difficulty.default({}), weight: z.number().positive() })).min(1);

/** `coevolve pretrain CONFIG`: makes a base solver (and proposer) by supervised training on generated tasks. */
export const PretrainSchema = z
  .strictObject({
    /** name of the base model */
    name: z.string(),
    /** seed of the corpus, the initialisation and the batch order */
    seed: z.number().int().default(0),
    backend: z.enum(BACKEND_CHOICES as unknown as [BackendChoice, ...BackendChoice[]]).default('auto'),
    accelerate: z.enum(ACCELERATE_CHOICES as unknown as [Accelerate, ...Accelerate[]]).default('auto'), // native matrix products (auto) or tfjs's own (off)
    /** threads that train and evaluate, each with a replica of the model (auto: one per core); a fixed count repeats a run from its seed */
    workers: z.union([z.literal('auto'), z.number().int().positive()]).default('auto'),
    /** the task family and difficulty the corpus is drawn from; with a proposer, also the bounds a valid proposal keeps to */
    task: z.strictObject({ family: z.string(), difficulty: Difficulty.default({}) }),
    /** draw the solver corpus and its held-out set from these cells by weight instead of from `task.difficulty` alone */
    mixture: Mixture.optional(),
    /** `share` of the training examples teach the proposer role to write tasks drawn from `mixture` (default: the solver's) */
    proposer: z
      .strictObject({
        share: z.number().gt(0).lt(1),
        mixture: Mixture.optional(),
        samples: z.number().int().positive().default(64),
      })
      .optional(),
    /**
     * `share` of the training examples teach the judge role's verdicts, in the judge's own format
     * (roles/others.ts): shown a task and an answer, the right one or another task's, it says y or
     * n; shown two, one of each in a random order (`pairwise` of the examples), it names the right
     * one, A or B. Held-out verdicts on the held-out tasks measure it.
     */
    verdicts: z
      .strictObject({
        share: z.number().gt(0).lt(1),
        pairwise: z.number().min(0).max(1).default(0.5),
        heldOut: z.number().int().positive().default(64),
      })
      .optional(),
    /** corpus size (solver, proposer and verdict examples together) and a held-out set (no prompt shared with the corpus) */
    corpus: z.strictObject({ train: z.number().int().positive(), heldOut: z.number().int().positive() }),
    /** more held-out sets, evaluated and saved beside the checkpoint as `<name>.jsonl`; distinct prompts, none in the corpus */
    heldOutSets: z
      .record(
        z.string().regex(/^(?!heldout$)[A-Za-z0-9][A-Za-z0-9_-]*$/, 'a set name is a plain name other than heldout'),
        z.strictObject({ difficulty: Difficulty.default({}), count: z.number().int().positive() }),
      )
      .default({}),
    /** TinyLM shape; vocabSize comes from the tokenizer */
    model: z
      .strictObject({
        dModel: z.number().int().positive(),
        nHeads: z.number().int().positive(),
        nLayers: z.number().int().positive(),
        context: z.number().int().positive(),
      })
      .optional(),
    /** instead of a TinyLM, a new model of a real architecture with a real tokenizer, written as a Hugging Face directory */
    architecture: ArchitectureSchema.optional(),
    train: z.strictObject({
      steps: z.number().int().positive(),
      batchSize: z.number().int().positive(),
      lr: z.number().positive(),
    }),
    /** check held-out greedy accuracy this often, and stop once it reaches `stopAtAccuracy` (a deliberately partial base) */
    evalEvery: z.number().int().positive().default(50),
    stopAtAccuracy: z.number().min(0).max(1).default(1),
    /** which set `stopAtAccuracy` watches: the held-out set, or one of `heldOutSets` */
    stopOn: z.string().default('heldout'),
    /** answers longer than this are cut (the solver's maxNewTokens) */
    maxNewTokens: z.number().int().positive().default(8),
    /** where the checkpoint goes */
    out: z.string(),
    /** start from this checkpoint's weights instead of a fresh model (same architecture and tokenizer): a base that gains a skill */
    init: z.string().optional(),
    /** modules that define task families (paths from the working directory, or package names), as an experiment's `plugins` */
    plugins: z.array(z.string().min(1)).default([]),
    /** teach `init` the judge role's verdict format instead of solving (src/engine/judge-corpus.ts): its examples replace the solver corpus, whose held-out set still measures the solver */
    judge: JudgeCorpusSchema.optional(),
    /**
     * teach `init` (a solver that writes sums with working) the critic role's verdicts on the training
     * tasks instead (src/engine/critic-corpus.ts); held-out verdicts on carry slips and random errors measure it
     */
    critic: CriticCorpusSchema.optional(),
    /**
     * teach a model the memory arena's two roles on the training dialogues instead (src/engine/memory-corpus.ts);
     * the share of valid outputs on the held-out dialogues measures it, not solving
     */
    memory: MemoryCorpusSchema.optional(),
    /**
     * teach a model a game's legal moves as the player role writes them instead (src/engine/game-corpus.ts):
     * `corpus.train` examples; the legal mass and exploitability of its table measure it, not solving
     */
    game: GameCorpusSchema.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.judge && c.init === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['init'],
        message: 'a judge base starts from a solver: name its checkpoint',
      });
    const roleCorpora = (['judge', 'critic', 'memory', 'game'] as const).filter((k) => c[k] !== undefined);
    if (roleCorpora.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: [roleCorpora[1]],
        message: `one role corpus at a time: ${roleCorpora.join(' and ')} are given`,
      });
    if (c.critic && c.init === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['init'],
        message: 'a critic base starts from a solver that writes working: name its checkpoint',
      });
    for (const k of ['critic', 'memory', 'game'] as const)
      if (c[k] && (c.verdicts || c.proposer || c.architecture))
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message: `a ${k} base teaches its role only, to a TinyLM: drop verdicts, proposer and architecture`,
        });
    if (c.judge && c.verdicts)
      ctx.addIssue({
        code: 'custom',
        path: ['verdicts'],
        message: 'a judge base has its own judge corpus (judge:); drop verdicts or judge',
      });
    if (c.judge && c.proposer)
      ctx.addIssue({
        code: 'custom',
        path: ['proposer'],
        message: 'a judge base teaches the judge role only; drop proposer or judge',
      });
    if ((c.model === undefined) === (c.architecture === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['model'],
        message: 'give model (a TinyLM) or architecture (a Hugging Face model), one of them',
      });
    if (c.architecture && (c.init || c.judge))
      ctx.addIssue({
        code: 'custom',
        path: ['architecture'],
        message: 'a new architecture starts from its own initialisation: drop init and judge',
      });
  });
export type PretrainConfig = z.output<typeof PretrainSchema>;

/** A pretrain YAML file, checked; an error names the file and each wrong field. */
export function loadPretrainConfig(path: string): PretrainConfig {
  const parsed = PretrainSchema.safeParse(parseYaml(readFileSync(path, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `${path}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** What a base's proposer writes: the share that parses inside the task bounds, and how the valid ones measure. */
export interface ProposalStats {
  samples: number;
  valid: number;
  cells: Record<string, number>;
  prompts: string[];
}

/** Held-out accuracy of the solver on every set, and the proposer's validity when there is one. */
export interface BaseEvaluation {
  /** absent for a memory base (its dialogues are not solved) */
  heldOut?: EvalResult;
  sets: Record<string, number>;
  proposer?: ProposalStats;
  verdicts?: number;
  /** a critic base: greedy verdict (and check) accuracy on held-out carry slips and random errors */
  critic?: Record<'slip' | 'random', { verdict: number; check?: number }>;
  /** a memory base: the share of sampled outputs that parse, per role, on the held-out dialogues */
  memory?: { manager: number; answer: number };
  /** a game base: the mass its table puts on legal moves, and the table's exploitability */
  game?: { legalMass: number; exploitability: number };
}

export interface PretrainResult {
  checkpoint: string;
  steps: number;
  heldOut?: EvalResult;
  heldOutSets: Record<string, number>;
  proposer?: Omit<ProposalStats, 'prompts'>;
  verdicts?: number;
  critic?: BaseEvaluation['critic'];
  memory?: BaseEvaluation['memory'];
  game?: BaseEvaluation['game'];
  seconds: number;
}

/** The tasks of a config: solver training tasks, proposer completions (as tasks), the held-out set and the extra sets. */
export interface PretrainCorpus {
  train: Task[];
  proposals: Task[];
  test: Task[];
  sets: Record<string, Task[]>;
  verdicts: Verdict[];
  verdictTest: Verdict[];
}

/** A judge example: a task, the answers shown, and the verdict that is right. */
export interface Verdict {
  task: Task;
  answers: string[];
  verdict: string;
}

/**
 * Draws the corpus from one Rng seeded with `seed`: solver tasks, then proposer tasks,
 * then the held-out set (skipping every corpus prompt, repeats allowed, as disjointSplit),
 * then each extra set (distinct, skipping the corpus). Without mixture and proposer this is
 * exactly `disjointSplit(family, task.difficulty, train, heldOut, seed)`.
 */
export function pretrainCorpus(
  config: PretrainConfig,
  family: TaskFamily<unknown> = taskFamily(config.task.family),
): PretrainCorpus {
  const cells = (field: string, mixture: PretrainConfig['mixture']): MixtureCell<unknown>[] =>
    (mixture ?? [{ difficulty: {}, weight: 1 }]).map((c, i) => ({
      difficulty: cellDifficulty(
        family,
        config.task.difficulty,
        c.difficulty,
        mixture ? `${field}[${i}].difficulty` : 'task.difficulty',
      ),
      weight: c.weight,
    }));
  const solver = mixtureSource(family, cells('mixture', config.mixture));
  const rng = new Rng(config.seed);
  const nProposals = config.proposer ? Math.round(config.proposer.share * config.corpus.train) : 0;
  const nVerdicts = config.verdicts ? Math.round(config.verdicts.share * config.corpus.train) : 0;
  const name = family.name;
  const train = Array.from({ length: config.corpus.train - nProposals - nVerdicts }, (_, i) => ({
    ...solver(rng, i),
    id: `${name}-train-${i}`,
  }));
  const proposer =
    config.proposer &&
    mixtureSource(
      family,
      cells(config.proposer.mixture ? 'proposer.mixture' : 'mixture', config.proposer.mixture ?? config.mixture),
    );
  const proposals = Array.from({ length: nProposals }, (_, i) => ({
    ...proposer!(rng, i),
    id: `${name}-proposal-${i}`,
  }));
  const seen = new Set([...train, ...proposals].map((t) => t.prompt));
  const test = drawUnseen(rng, solver, config.corpus.heldOut, seen, { what: 'corpus.heldOut' }).map((t, i) => ({
    ...t,
    id: `${name}-test-${i}`,
  }));
  const sets: Record<string, Task[]> = {};
  for (const [set, s] of Object.entries(config.heldOutSets)) {
    const source = mixtureSource(family, [
      {
        difficulty: cellDifficulty(family, config.task.difficulty, s.difficulty, `heldOutSets.${set}.difficulty`),
        weight: 1,
      },
    ]);
    sets[set] = drawUnseen(rng, source, s.count, seen, { what: `heldOutSets.${set}`, distinct: true }).map((t, i) => ({
      ...t,
      id: `${name}-${set}-${i}`,
    }));
  }
  // drawn last, so a config without verdicts draws the corpus it always did; verdict tasks are
  // kept off the held-out prompts (their right answers are shown), held-out verdicts are on them
  const verdicts = config.verdicts
    ? verdictExamples(
        rng,
        drawUnseen(rng, solver, nVerdicts, new Set([...test, ...Object.values(sets).flat()].map((t) => t.prompt)), {
          what: 'verdicts',
        }),
        config.verdicts.pairwise,
        'verdict',
      )
    : [];
  const verdictTest = config.verdicts
    ? verdictExamples(rng, test.slice(0, config.verdicts.heldOut), config.verdicts.pairwise, 'verdict-test')
    : [];
  return { train, proposals, test, sets, verdicts, verdictTest };
}

/**
 * Verdict examples on `tasks` (each with an answer): a wrong answer is another task's answer
 * that differs from the right one (any family: no answer is made up); `pairwise` of them show
 * two answers, the rest one.
 */
function verdictExamples(rng: Rng, tasks: Task[], pairwise: number, tag: string): Verdict[] {
  const answers = [...new Set(tasks.map((t) => t.answer).filter((a): a is string => a !== undefined))];
  if (answers.length < 2)
    throw new Error(`verdicts: the tasks have fewer than two distinct answers; a wrong answer cannot be drawn`);
  return tasks.map((task, i) => {
    const right = task.answer;
    if (right === undefined) throw new Error(`verdicts: task ${task.id} has no answer`);
    let wrong = right;
    while (wrong === right) wrong = answers[rng.int(answers.length)];
    const t = { ...task, id: `${task.family}-${tag}-${i}` };
    if (rng.next() < pairwise)
      return rng.next() < 0.5
        ? { task: t, answers: [right, wrong], verdict: 'A' }
        : { task: t, answers: [wrong, right], verdict: 'B' };
    return rng.next() < 0.5 ? { task: t, answers: [right], verdict: 'y' } : { task: t, answers: [wrong], verdict: 'n' };
  });
}

function cellDifficulty(
  family: TaskFamily<unknown>,
  base: Record<string, unknown>,
  cell: Record<string, unknown>,
  field: string,
): unknown {
  return family.validate({ ...base, ...cell }, field);
}

/** The proposer's prompt: its role renders a request for a new task of the family. */
function proposerPrompt(tokenizer: Tokenizer, family: TaskFamily<unknown>): number[] {
  const role = new ProposerRole();
  return rolePrompt(tokenizer, role, role.render({ task: { id: 'seed', family: family.name, prompt: '' } }));
}

/** Supervised examples: each solver task's answer (or working), and each proposer task's prompt as what the proposer writes. */
function trainingExamples(corpus: PretrainCorpus, tokenizer: Tokenizer, family: TaskFamily<unknown>): PolicyInput[] {
  const solverRole = new SolverRole((o) => family.parseAnswer(o));
  const solver = corpus.train.map((t) => ({
    prompt: rolePrompt(tokenizer, solverRole, t.prompt),
    completion: [...tokenizer.encode(t.target ?? t.answer!), tokenizer.eos],
  }));
  const prompt = proposerPrompt(tokenizer, family);
  const judge = new JudgeRole();
  const verdicts = corpus.verdicts.map((v) => ({
    prompt: rolePrompt(tokenizer, judge, judge.render({ task: v.task, answers: v.answers })),
    completion: [...tokenizer.encode(v.verdict), tokenizer.eos],
  }));
  return [
    ...solver,
    ...corpus.proposals.map((t) => ({ prompt, completion: [...tokenizer.encode(t.prompt), tokenizer.eos] })),
    ...verdicts,
  ];
}

/**
 * Samples `samples` proposals at temperature 1 and reads each with the family's own
 * parser inside `limits`; valid ones are counted by the family's measure (its values
 * joined by '/', e.g. operands/digits/minDigits/totalDigits for arithmetic).
 */
export async function sampleProposals(
  model: LanguageModel,
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
  limits: unknown,
  o: { samples: number; maxNewTokens: number; seed: number },
): Promise<ProposalStats> {
  if (!family.parseProposal || !family.measure)
    throw new Error(`proposer: task family '${family.name}' cannot read proposals (no parseProposal and measure)`);
  const server = new BatchingServer('proposer', model, o.seed);
  const agents = new Agents({ proposer: { role: new ProposerRole(), model: 'proposer', server } }, tokenizer, {
    temperature: 1,
    maxNewTokens: o.maxNewTokens,
  });
  const seed: Task = { id: 'seed', family: family.name, prompt: '' };
  const turns = await Promise.all(Array.from({ length: o.samples }, () => agents.act('proposer', { task: seed })));
  const stats: ProposalStats = { samples: o.samples, valid: 0, cells: {}, prompts: [] };
  for (const turn of turns) {
    const read: ParsedProposal = turn.action.valid
      ? family.parseProposal(turn.action.value!, limits)
      : { error: turn.action.error ?? 'invalid' };
    if (!('task' in read)) continue;
    const cell = Object.values(family.measure(read.task)).join('/');
    stats.cells[cell] = (stats.cells[cell] ?? 0) + 1;
    stats.prompts.push(read.task.prompt);
  }
  stats.valid = stats.prompts.length / o.samples;
  return stats;
}

/**
 * Trains and saves the base. The `out:` folder is checked first: a checkpoint there is
 * replaced, anything else is refused before any training, unless `overwrite` (then the
 * folder is deleted and made anew).
 */
export async function pretrain(
  config: PretrainConfig,
  o: { overwrite?: boolean; log?: (line: string) => void } = {},
): Promise<PretrainResult> {
  const log = o.log ?? console.error;
  if (!o.overwrite) {
    try {
      if (config.architecture) checkHfReplaceable(config.out);
      else checkReplaceable(config.out);
    } catch (e) {
      throw new Error(`out: ${(e as Error).message}; pass --overwrite to replace the folder`);
    }
  }
  const family = await resolveTaskFamily(config.task.family, config.plugins);
  const limits = cellDifficulty(family, config.task.difficulty, {}, 'task.difficulty');
  if (config.stopOn !== 'heldout' && !Object.hasOwn(config.heldOutSets, config.stopOn))
    throw new Error(
      `stopOn: '${config.stopOn}' is not heldout or a heldOutSets name (${Object.keys(config.heldOutSets).join(', ') || 'none'})`,
    );
  if (config.proposer && (!family.parseProposal || !family.measure))
    throw new Error(`proposer: task family '${family.name}' cannot read proposals`);
  const corpus = pretrainCorpus(config, family);
  const info = await initBackend(config.backend, config.accelerate);
  log(describeBackend(info));
  const made = config.architecture && createHfModel(config.architecture, config.seed);
  const { model, tokenizer }: { model: TinyLM | HfPolicy; tokenizer: Tokenizer } = made
    ? { model: new HfPolicy(made.model), tokenizer: roleTokenizer(made.tokenizer, config.architecture!.tokenizer) }
    : config.init
      ? await initialModel(config)
      : {
          model: new TinyLM({ ...config.model!, vocabSize: new CharTokenizer().size, seed: config.seed }),
          tokenizer: new CharTokenizer(),
        };
  const { examples, probes } = config.judge
    ? {
        examples: judgeExamples(
          model as TinyLM,
          tokenizer as CharTokenizer,
          readTasksJsonl(config.judge.tasks, family.name),
          config.judge,
          config.seed,
        ),
        probes: {},
      }
    : config.critic || config.memory || config.game
      ? await roleCorpus(config, model as TinyLM, tokenizer as CharTokenizer, corpus, log)
      : { examples: trainingExamples(corpus, tokenizer, family), probes: {} };
  // replicas in worker threads copy TinyLM models; a Hugging Face model trains in this thread
  const workers = model.kind === 'tinylm' ? workerCount(config.workers) : 1;
  if (workers > 1) log(`workers: ${workers} threads, each with a replica of the model`);
  const replicas =
    model.kind === 'tinylm'
      ? await startReplicas(workers, { backend: info.chosen, accelerate: config.accelerate }, { base: model })
      : undefined;
  const base = {
    model,
    tokenizer,
    family,
    corpus,
    probes,
    limits,
    proposalTokens: config.proposer
      ? Math.max(0, ...examples.slice(corpus.train.length).map((e) => e.completion.length))
      : 0,
    replicas,
  };
  const watched = (e: BaseEvaluation) =>
    config.stopOn === 'heldout' ? (e.heldOut?.pass1 ?? 0) : e.sets[config.stopOn];
  const t0 = performance.now();
  let steps = 0;
  let evaluation: BaseEvaluation;
  const trainer = new SupervisedTrainer(
    model,
    examples,
    { batchSize: config.train.batchSize, lr: config.train.lr, seed: config.seed },
    replicas && { replicas, id: 'base' },
  );
  try {
    evaluation = await evaluateBase(base, config, config.seed);
    while (steps < config.train.steps && watched(evaluation) < config.stopAtAccuracy) {
      const losses: number[] = [];
      for (const end = Math.min(steps + config.evalEvery, config.train.steps); steps < end; steps++)
        losses.push(trainer.step());
      evaluation = await evaluateBase(base, config, config.seed + steps);
      log(
        `step ${steps} loss=${losses[losses.length - 1].toFixed(4)} ${describeEvaluation(evaluation)} ${((performance.now() - t0) / 1000).toFixed(0)}s`,
      );
    }
  } finally {
    trainer.dispose();
    await replicas?.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  if (o.overwrite) await rm(config.out, { recursive: true, force: true });
  const { heldOut, sets, proposer } = evaluation;
  const stats = proposer && { samples: proposer.samples, valid: proposer.valid, cells: proposer.cells };
  const extra = {
    name: config.name,
    steps,
    ...(heldOut && { heldOutPass1: heldOut.pass1 }),
    task: config.task,
    ...(config.mixture && { mixture: config.mixture }),
    ...(config.proposer && { proposer: { ...config.proposer, ...stats } }),
    ...(config.judge && { judge: config.judge, from: config.init }),
    ...(config.critic && { critic: { ...config.critic, heldOutAccuracy: evaluation.critic }, from: config.init }),
    ...(config.memory && { memory: { ...config.memory, heldOutValid: evaluation.memory } }),
    ...(config.game && { game: { ...config.game, ...evaluation.game } }),
    ...(config.verdicts && { verdicts: { ...config.verdicts, heldOutAccuracy: evaluation.verdicts } }),
    ...(Object.keys(sets).length > 0 && { heldOutSets: sets }),
  };
  // The held-out prompts were never trained on: later RL runs evaluate on them.
  const attachments = Object.fromEntries([
    ['heldout.jsonl', tasksJsonl(corpus.test)],
    ...Object.entries(corpus.sets).map(([name, tasks]) => [`${name}.jsonl`, tasksJsonl(tasks)]),
  ]);
  if (made)
    writeHfDirectory(config.out, made.model, made.raw, config.architecture!.tokenizer, {
      ...attachments,
      [PRETRAIN_RECORD]: JSON.stringify(extra, null, 2),
    });
  else await saveModel(config.out, model as TinyLM, tokenizer as CharTokenizer, extra, attachments);
  made?.model.dispose();
  model.dispose();
  return {
    checkpoint: config.out,
    steps,
    heldOut,
    heldOutSets: sets,
    ...(stats && { proposer: stats }),
    ...(evaluation.verdicts !== undefined && { verdicts: evaluation.verdicts }),
    ...(evaluation.critic && { critic: evaluation.critic }),
    ...(evaluation.memory && { memory: evaluation.memory }),
    ...(evaluation.game && { game: evaluation.game }),
    seconds,
  };
}

/**
 * The `init:` checkpoint, checked to have the config's architecture and, for a solver corpus,
 * the default tokenizer. A judge or critic base keeps its solver's tokenizer: the role's prompt
 * is rendered in it, as the runs that load the base will.
 */
async function initialModel(config: PretrainConfig): Promise<{ model: TinyLM; tokenizer: CharTokenizer }> {
  const tokenizer = new CharTokenizer();
  const loaded = await loadModel(config.init!);
  if (loaded.kind !== 'tinylm') throw new Error(`init: ${config.init} holds a ${loaded.kind}, not a tinylm`);
  for (const [k, v] of Object.entries(config.model ?? {})) {
    const have = (loaded.model.config as unknown as Record<string, unknown>)[k];
    if (have !== v) throw new Error(`init: ${config.init} has ${k} ${String(have)}, model.${k} says ${v}`);
  }
  if ((config.judge || config.critic) && loaded.tokenizer) return { model: loaded.model, tokenizer: loaded.tokenizer };
  if (JSON.stringify(loaded.tokenizer?.spec) !== JSON.stringify(tokenizer.spec))
    throw new Error(`init: ${config.init} has another tokenizer than the default one pretrain uses`);
  return { model: loaded.model, tokenizer };
}

interface Base {
  model: LanguageModel;
  tokenizer: Tokenizer;
  family: TaskFamily<unknown>;
  corpus: PretrainCorpus;
  probes: RoleProbes;
  limits: unknown;
  proposalTokens: number;
  replicas?: Replicas;
}

/** Greedy pass@1 on the held-out set and each extra set; with a proposer, `samples` proposals sampled with `seed`. */
async function evaluateBase(b: Base, config: PretrainConfig, seed: number): Promise<BaseEvaluation> {
  const solve = (tasks: Task[]) =>
    evaluateSolver(b.model, b.tokenizer, b.family, tasks, {
      samples: 0,
      maxNewTokens: config.maxNewTokens,
      replicas: b.replicas,
      id: 'base',
    });
  const sets: Record<string, number> = {};
  for (const [name, tasks] of Object.entries(b.corpus.sets)) sets[name] = (await solve(tasks)).pass1;
  const proposer =
    config.proposer &&
    (await sampleProposals(b.model, b.tokenizer, b.family, b.limits, {
      samples: config.proposer.samples,
      maxNewTokens: b.proposalTokens,
      seed,
    }));
  const verdicts = b.corpus.verdictTest.length
    ? await verdictAccuracy(b.model, b.tokenizer, b.corpus.verdictTest)
    : undefined;
  return {
    // a memory or game base is measured by its formats: it answers no task
    ...(!b.probes.memory && !b.probes.game && { heldOut: await solve(b.corpus.test) }),
    sets,
    proposer,
    ...(verdicts !== undefined && { verdicts }),
    ...roleEvaluation(b.model as TinyLM, b.tokenizer as CharTokenizer, b.probes, config, seed),
  };
}

/** The share of `examples` whose greedy verdict is the right one (the judge role, as a run asks it). */
async function verdictAccuracy(model: LanguageModel, tokenizer: Tokenizer, examples: Verdict[]): Promise<number> {
  const server = new BatchingServer('judge', model, 0);
  const agents = new Agents({ judge: { role: new JudgeRole(), model: 'judge', server } }, tokenizer, {
    temperature: 0,
    maxNewTokens: 2,
  });
  const turns = await Promise.all(examples.map((v) => agents.act('judge', { task: v.task, answers: v.answers })));
  return turns.filter((t, i) => t.action.valid && t.action.value === examples[i].verdict).length / examples.length;
}

/** One evaluation as `key=value` fields of a log line. */
function describeEvaluation(e: BaseEvaluation): string {
  const fields = [
    ...(e.heldOut ? [`heldout_pass1=${e.heldOut.pass1.toFixed(3)}`] : []),
    ...Object.entries(e.sets).map(([name, pass1]) => `${name}_pass1=${pass1.toFixed(3)}`),
  ];
  if (e.verdicts !== undefined) fields.push(`verdict_accuracy=${e.verdicts.toFixed(3)}`);
  for (const [set, a] of Object.entries(e.critic ?? {}))
    fields.push(`critic_${set}_accuracy=${a.verdict}${a.check === undefined ? '' : ` critic_${set}_check=${a.check}`}`);
  if (e.memory) fields.push(`manager_valid=${e.memory.manager} answer_valid=${e.memory.answer}`);
  if (e.game)
    fields.push(`legal_mass=${e.game.legalMass.toFixed(4)} exploitability=${e.game.exploitability.toFixed(4)}`);
  if (e.proposer)
    fields.push(`proposer_valid=${e.proposer.valid.toFixed(3)} proposer_cells=${JSON.stringify(e.proposer.cells)}`);
  return fields.join(' ');
}
