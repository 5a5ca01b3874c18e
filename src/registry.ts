/**
 * The registry of kinds: every kind a config can name, by concept (model kinds, task
 * families, arenas, roles, judges, evaluators, and pretrain's role corpora), with how each is
 * built and how its options are validated, and the inversify container that binds them.
 * Plugins add kinds through the same registries (src/plugins); a name taken twice is an error
 * naming both claimants. The memory bank (memory/) is no kind of its own: the memory-dialogue
 * arena keeps one.
 *
 * This is the composition point of src/: the one file under src/ that imports the kinds of
 * arenas/, roles/, judges/ and memory/ (test/layout.test.ts holds every other file of src/ to
 * that). The rest of src/ reaches a kind by its name, through the plan made here, or through
 * the tables exported here.
 *
 * How to read an entry: `kind(schema, make)` (src/config/kind.ts) pairs the strict zod schema
 * of the kind's `options:` (parsed at the config path, e.g. `judges.1.options`, before `make`
 * runs, so a misspelt option is an error naming the known ones) with the factory that builds it.
 * The cross-checks between kinds (a family for its arenas, an arena's roles bound to roles of
 * the right kind) are the Resolver's (src/engine/plan.ts).
 */
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { Container } from 'inversify';
import { z } from 'zod';
import { AdversarialCriticArena, CriticArenaOptionsSchema } from '../arenas/critic/index.js';
import { criticKind } from '../arenas/critic/evaluator.js';
import { criticAccuracy, criticExamples, CriticCorpusSchema, showings } from '../arenas/critic/corpus.js';
import { gameEvaluation, gameExamples, GameCorpusSchema } from '../arenas/game-corpus.js';
import { judgeExamples, JudgeCorpusSchema } from '../arenas/judge/corpus.js';
import { memoryExamples, MemoryCorpusSchema, memoryShowings, memoryValidRates } from '../arenas/memory-corpus.js';
import { flowExamples, FlowCorpusSchema, flowShowings, flowValidRate } from '../arenas/flow-corpus.js';
import { GameArena, GameArenaOptionsSchema } from '../arenas/game.js';
import { FiveRolesArena, FiveRolesOptionsSchema } from '../arenas/five-roles/index.js';
import { bankAccuracy, bankExamples, BankCorpusSchema, bankShowings } from '../arenas/five-roles/corpus.js';
import { bankKind } from '../arenas/five-roles/evaluator.js';
import { JudgeArena, JudgeArenaOptionsSchema } from '../arenas/judge/index.js';
import { verdictsKind } from '../arenas/judge/evaluator.js';
import { MemoryDialogueArena, MemoryDialogueOptionsSchema } from '../arenas/memory-dialogue.js';
import { memoryQaKind } from '../arenas/memory-qa.js';
import { FlowArena, FlowOptionsSchema } from '../arenas/flow.js';
import { flowKind } from '../arenas/flow-eval.js';
import { PeerArena, PeerArenaOptionsSchema } from '../arenas/peer.js';
import { SpyArena, SpyArenaOptionsSchema } from '../arenas/spy.js';
import { spyEvalKind } from '../arenas/spy-eval.js';
import { spyExamples, SpyCorpusSchema } from '../arenas/spy-corpus.js';
import { observerCopies, observerExamples, ObserverCorpusSchema } from '../arenas/observer/corpus.js';
import { observerKind } from '../arenas/observer/evaluator.js';
import { ObserverArena, ObserverArenaOptionsSchema } from '../arenas/observer/index.js';
import { ObserverRole } from '../roles/observer.js';
import { ProposeSolveArena, ProposeSolveOptionsSchema } from '../arenas/propose-solve.js';
import { CoverageJudge } from '../judges/coverage.js';
import { FormatJudge } from '../judges/format.js';
import { FunctionJudge } from '../judges/function.js';
import { GroundedJudge } from '../judges/grounded.js';
import { LearnabilityJudge } from '../judges/learnability.js';
import { MajorityJudge } from '../judges/majority.js';
import { OutcomeJudge } from '../judges/outcome.js';
import { PeerJudge } from '../judges/peer.js';
import { SelfCertaintyJudge } from '../judges/self-certainty.js';
import { UncertaintyJudge } from '../judges/uncertainty.js';
import { VerdictJudge } from '../judges/verdict.js';
import { VerifierJudge } from '../judges/verifier.js';
import { AnswerRole, MemoryManagerRole } from '../roles/memory.js';
import { CriticRole, JudgeRole, ProposerRole, SneakyRole } from '../roles/others.js';
import { PlayerRole } from '../roles/player.js';
import { PlannerRole } from '../roles/planner.js';
import { parseOptions } from './config/issues.js';
import { kindOf } from './config/kind.js';
import type { ModelSchema } from './config/model-schema.js';
import type { ExperimentConfig } from './config/schema.js';
import type { Arena, ArenaFactory, ArenaKind } from './core/arena.js';
import type { Judge, JudgeDeps, JudgeFactory, JudgeKind } from './core/judge.js';
import { SolveArena } from './core/solve.js';
import { SolverRole } from './core/solver.js';
import { accuracyKind } from './engine/evaluators/accuracy.js';
import { eloKind } from './engine/evaluators/elo.js';
import { exploitabilityKind } from './engine/evaluators/exploitability.js';
import { minimaxKind } from './engine/evaluators/minimax.js';
import { proposalsKind } from './engine/evaluators/proposals.js';
import type { EvaluatorKind } from './engine/evaluators/types.js';
import { Registry, Resolver, type Plan } from './engine/plan.js';
import type { Definition } from './plugins/definition.js';
import type { RoleFactory } from './core/role.js';
import { loadPlugins, type PluginDefinition } from './plugins/load.js';
import { arithmetic } from './tasks/arithmetic.js';
import { countdown } from './tasks/countdown.js';
import { dialogue } from './tasks/dialogue.js';
import { math } from './tasks/math/index.js';
import { wordProblems } from './tasks/word-problems.js';
import { readTasksJsonl, type TaskCheck } from './tasks/jsonl.js';
import { strings } from './tasks/strings.js';
import type { TaskFamily } from './core/task-family.js';

export { Registry, Resolver, type Plan } from './engine/plan.js';

// ---------------------------------------------------------------------------------------------
// model kinds (`models.<id>.kind`)

/**
 * Model kinds. Validated by ModelSchema (src/config/model-schema.ts: the fields each kind
 * takes; the `satisfies` below keeps this list and its enum the same); built by loadModels
 * (src/engine/models.ts), which switches on the kind.
 */
export const MODEL_KINDS = {
  tinylm: 'the char-level transformer trained here (src/models/tinylm.ts): made from `config`, or loaded from `init`',
  hf: 'a Hugging Face causal LM read from `path` (src/models/hf): trained whole or through LoRA adapters',
  remote: 'an OpenAI-compatible server at `remote.url` (src/openai): it acts and never trains',
  mlp: "an MLP on a game's observation vector (src/models/mlp.ts), for an arena with `features`",
} as const satisfies Record<z.output<typeof ModelSchema>['kind'], string>;

// ---------------------------------------------------------------------------------------------
// task families (`tasks.family`)

/**
 * Every built-in task family, by name: each is built already and validates its own
 * `tasks.difficulty` (`family.validate`, its schema `family.difficulty`). `any` because each
 * family has its own difficulty type; callers reach it through `validate`, which takes unknown.
 */
export const TASK_FAMILIES: Readonly<Record<string, TaskFamily<any>>> = Object.freeze({
  arithmetic,
  strings,
  dialogue,
  math,
  countdown,
  'word-problems': wordProblems,
});

/** The built-in family called `name`; throws listing the known names otherwise. */
export function taskFamily(name: string): TaskFamily<any> {
  // Object.hasOwn so that names like 'constructor' or 'toString' are unknown, not prototype members.
  if (!Object.hasOwn(TASK_FAMILIES, name)) {
    throw new Error(`unknown task family '${name}'; known: ${Object.keys(TASK_FAMILIES).join(', ')}`);
  }
  return TASK_FAMILIES[name];
}

// ---------------------------------------------------------------------------------------------
// arenas (`arena.kind`, `arena.options`)

const arena = kindOf<ArenaFactory>();

/** Arena kinds: each with its options' schema and its factory (given the options and the task family). */
export const ARENA_KINDS: Readonly<Record<string, ArenaKind>> = Object.freeze({
  solve: arena(z.strictObject({}), () => new SolveArena()),
  'propose-solve': arena(ProposeSolveOptionsSchema, (options, family) => new ProposeSolveArena(options, family)),
  game: arena(GameArenaOptionsSchema, (options) => new GameArena(options)),
  judge: arena(JudgeArenaOptionsSchema, (options, family) => new JudgeArena(options, family)),
  'adversarial-critic': arena(
    CriticArenaOptionsSchema,
    (options, family) => new AdversarialCriticArena(options, family),
  ),
  peer: arena(PeerArenaOptionsSchema, (options, family) => new PeerArena(options, family)),
  spy: arena(SpyArenaOptionsSchema, (options) => new SpyArena(options)),
  'memory-dialogue': arena(MemoryDialogueOptionsSchema, (options, family) => new MemoryDialogueArena(options, family)),
  flow: arena(FlowOptionsSchema, (options, family) => new FlowArena(options, family)),
  observer: arena(ObserverArenaOptionsSchema, (options, family) => new ObserverArena(options, family)),
  'five-roles': arena(FiveRolesOptionsSchema, (options, family) => new FiveRolesArena(options, family)),
});

/** Builds the built-in arena `name` from raw options, parsed as `arena.options` (what the resolver does, for code and tests). */
export function makeArena(name: string, options: unknown, family: TaskFamily<unknown>): Arena {
  if (!Object.hasOwn(ARENA_KINDS, name))
    throw new Error(`unknown arena '${name}'; known: ${Object.keys(ARENA_KINDS).sort().join(', ')}`);
  const k = ARENA_KINDS[name];
  return k.make(parseOptions(k.options, options, 'arena.options'), family);
}

// ---------------------------------------------------------------------------------------------
// roles (`roles.<id>.kind`)

/** Role kinds: a role takes no options; each factory gets the task family's answer parser. */
export const ROLE_KINDS: Readonly<Record<string, RoleFactory>> = Object.freeze({
  solver: (parseAnswer) => new SolverRole(parseAnswer),
  proposer: () => new ProposerRole(),
  critic: () => new CriticRole(),
  sneaky: (parseAnswer) => new SneakyRole(parseAnswer),
  judge: () => new JudgeRole(),
  memory: () => new MemoryManagerRole(),
  answer: () => new AnswerRole(),
  player: () => new PlayerRole(),
  planner: () => new PlannerRole(),
  observer: () => new ObserverRole(),
});

// ---------------------------------------------------------------------------------------------
// judges (`judges.<i>.kind`, `judges.<i>.options`)

const judge = kindOf<JudgeFactory>();

// the options most judges share: which roles it rewards and the name of its metrics
const roles = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
  error: 'a role id or a non-empty list of role ids',
});
const common = { role: roles.optional(), name: z.string().min(1).optional() };
const scores = { correct: z.number().optional(), wrong: z.number().optional(), invalid: z.number().optional() };
const p = z.enum(['verifier', 'vote', 'peer']).optional();

/**
 * Judge kinds, with their options (all optional). Options arrive as untyped JSON/YAML, so each
 * kind has a strict schema, parsed before any judge is built:
 * - 'verifier': role, name, correct, wrong, invalid — needs `deps.verify`;
 * - 'majority': role, name, minShare, maxShare (0..1);
 * - 'outcome': role, name, balance: the arena's outcome for the role (a game's return per seat),
 *   with balance weighted by the inverse frequency of each turn's truth class;
 * - 'function': module, export, role, name: a plain reward function `(prompts, completions, fields)
 *   => (number | null)[]` from a module, as TRL's reward_funcs (judges/function.ts);
 * - 'format': role, name, format ('think-answer' | 'think'), correct, wrong: whether a completion has
 *   the `<think>`/`<answer>` shape of TRL's format rewards;
 * - 'verdict': role (default 'judge'), name, correct, wrong, invalid, score ('verdict' | 'working'), weights (truth -> a weight > 0): whether a judge's verdict (or its working before it) is right;
 * - 'peer': role, name, invalid: the share of 'y' verdicts other turns gave an answer (peer judgement, a judge in the loop);
 * - 'self-certainty': role, name, normalize ('none' | 'group'), invalidReward;
 * - 'learnability' (Absolute Zero), 'uncertainty' (R-Zero) and 'coverage': proposer rewards
 *   read from the solver turns of each proposal's episode (options in their files);
 * - 'grounded' (SOAR): a proposal is worth what training the solver on it does on `probe`.
 */
export const JUDGE_KINDS: Readonly<Record<string, JudgeKind>> = Object.freeze({
  verifier: judge(z.strictObject({ ...common, ...scores }), (o, deps) => {
    if (typeof deps?.verify !== 'function')
      throw new Error("judge 'verifier': needs deps.verify, the task family's verifier");
    return new VerifierJudge(deps.verify, o);
  }),
  outcome: judge(z.strictObject({ ...common, balance: z.boolean().optional() }), (o) => new OutcomeJudge(o)),
  function: judge(
    z.strictObject({
      ...common,
      module: z.string().min(1, 'a path from the working directory, or a package'),
      export: z.string().min(1).optional(),
    }),
    (o) => new FunctionJudge(o as never),
  ),
  format: judge(
    z.strictObject({
      ...common,
      format: z.enum(['think-answer', 'think']).optional(),
      correct: z.number().optional(),
      wrong: z.number().optional(),
    }),
    (o) => new FormatJudge(o),
  ),
  verdict: judge(
    z.strictObject({
      ...common,
      ...scores,
      score: z.enum(['verdict', 'working']).optional(),
      weights: z.record(z.string(), z.number().positive()).optional(),
    }),
    (o) => new VerdictJudge(o),
  ),
  peer: judge(
    z.strictObject({
      ...common,
      invalid: z.number().optional(),
      aggregate: z.enum(['mean', 'majority', 'probability']).optional(),
    }),
    (o) => new PeerJudge(o),
  ),
  majority: judge(
    z.strictObject({
      ...common,
      minShare: z.number().min(0).max(1).optional(),
      maxShare: z.number().min(0).max(1).optional(),
    }),
    (o, deps) => new MajorityJudge(o, deps?.verify),
  ),
  learnability: judge(
    z.strictObject({ ...common, solver: roles.optional(), p, invalid: z.number().optional() }),
    (o, deps) => new LearnabilityJudge(deps?.verify, o),
  ),
  uncertainty: judge(
    z.strictObject({
      ...common,
      solver: roles.optional(),
      p,
      repetition: z.number().optional(),
      threshold: z.number().optional(),
      invalid: z.number().optional(),
    }),
    (o, deps) => new UncertaintyJudge(deps?.verify, o),
  ),
  grounded: judge(
    z.strictObject({
      ...common,
      solver: z.string().min(1).optional(),
      probe: z.string().min(1, 'a JSONL file of labeled target tasks'),
      invalid: z.number().optional(),
    }),
    (o, deps) => {
      const probe = o.probe as string;
      if (!existsSync(probe)) throw new Error(`judge 'grounded': option 'probe': ${probe} does not exist`);
      if (!deps?.verify || !deps.live || !deps.family)
        throw new Error("judge 'grounded': needs the task family's verifier and the loop's live models");
      return new GroundedJudge(deps.verify, readTasksJsonl(probe, deps.family), deps.live, o as never);
    },
  ),
  coverage: judge(
    z.strictObject({ ...common, solver: roles.optional() }),
    (o, deps) => new CoverageJudge(deps?.measure!, o),
  ),
  'self-certainty': judge(
    z.strictObject({
      ...common,
      normalize: z.enum(['none', 'group']).optional(),
      invalidReward: z.number().optional(),
    }),
    (o) => new SelfCertaintyJudge(o),
  ),
});

/**
 * Builds the judge of kind `name` (a key of {@link JUDGE_KINDS}) from `options` (default {},
 * parsed at the path `where`) and `deps` (default {}). Throws `unknown judge 'x'; known:
 * majority, self-certainty, verifier` (known kinds sorted) for an unknown kind.
 */
export function makeJudge(
  name: string,
  options: Record<string, unknown> = {},
  deps: JudgeDeps = {},
  where = `${name}.options`,
): Judge {
  // hasOwn, not `in`: 'toString' and friends are not judges
  if (!Object.hasOwn(JUDGE_KINDS, name)) {
    throw new Error(`unknown judge '${name}'; known: ${Object.keys(JUDGE_KINDS).sort().join(', ')}`);
  }
  const k = JUDGE_KINDS[name];
  return k.make(parseOptions(k.options, options, where), deps);
}

// ---------------------------------------------------------------------------------------------
// evaluators (`evaluators.<i>.kind`, `evaluators.<i>.options`)

/**
 * Evaluator kinds, each `evaluatorKind(schema, make)` (src/engine/evaluators/types.ts); `make`
 * checks the plan has what it measures (a game, a judge arena) and throws naming the path.
 * Those that play one arena live beside it (verdicts, critic, memory-qa); the rest in
 * src/engine/evaluators. `check` vets each task of a data file (it fits the model).
 */
export function evaluatorKinds(check: (where: string) => TaskCheck): Registry<EvaluatorKind> {
  return new Registry('evaluator', {
    accuracy: accuracyKind(check),
    proposals: proposalsKind,
    exploitability: exploitabilityKind,
    elo: eloKind,
    minimax: minimaxKind,
    verdicts: verdictsKind(check),
    critic: criticKind(check),
    'memory-qa': memoryQaKind,
    spy: spyEvalKind,
    flow: flowKind(check),
    observer: observerKind(check),
    bank: bankKind(check),
  });
}

// ---------------------------------------------------------------------------------------------
// role corpora (the `judge:`, `critic:`, `memory:`, `game:` and `flow:` sections of a pretrain config)

/**
 * The role corpora of `coevolve pretrain`: each teaches one role's format, in place of (judge:
 * beside) the solver corpus, by playing that role's arena, beside which it lives. `schema`
 * validates the config's section (src/pretrain/schema.ts); the rest make its examples from the
 * training tasks and measure a base on held-out showings (src/pretrain/corpora/role.ts).
 */
export const ROLE_CORPORA = Object.freeze({
  judge: { schema: JudgeCorpusSchema, examples: judgeExamples },
  critic: { schema: CriticCorpusSchema, examples: criticExamples, showings, accuracy: criticAccuracy },
  memory: {
    schema: MemoryCorpusSchema,
    examples: memoryExamples,
    showings: memoryShowings,
    validRates: memoryValidRates,
  },
  game: { schema: GameCorpusSchema, examples: gameExamples, evaluate: gameEvaluation },
  spy: { schema: SpyCorpusSchema, examples: spyExamples },
  flow: { schema: FlowCorpusSchema, examples: flowExamples, showings: flowShowings, validRate: flowValidRate },
  observer: { schema: ObserverCorpusSchema, examples: observerExamples, copies: observerCopies },
  bank: { schema: BankCorpusSchema, examples: bankExamples, showings: bankShowings, accuracy: bankAccuracy },
});
export type { Showing as CriticShowing } from '../arenas/critic/corpus.js';
export type { MemoryRates, MemoryShowing } from '../arenas/memory-corpus.js';
export type { FlowShowing } from '../arenas/flow-corpus.js';
export type { GameCorpus } from '../arenas/game-corpus.js';
export type { ObserverCorpus, ObserverCopies } from '../arenas/observer/corpus.js';
export type { BankCorpus, BankShowing } from '../arenas/five-roles/corpus.js';

// ---------------------------------------------------------------------------------------------
// the container

export const TOKENS = {
  arenas: Symbol.for('coevolve.arenas'),
  judges: Symbol.for('coevolve.judges'),
  roles: Symbol.for('coevolve.roles'),
  tasks: Symbol.for('coevolve.tasks'),
  models: Symbol.for('coevolve.models'),
  evaluators: Symbol.for('coevolve.evaluators'),
  definitions: Symbol.for('coevolve.definitions'),
} as const;

/**
 * The container with every built-in kind and what `definitions` (loaded plugins) add; a
 * name taken twice throws here, before any work, naming the plugin. Bound by factories, not
 * decorators: the package runs through tsx under whatever tsconfig its user has, and
 * parameter decorators compile only with experimentalDecorators.
 */
export function createContainer(definitions: readonly PluginDefinition[] = []): Container {
  const c = new Container();
  c.bind(TOKENS.arenas).toConstantValue(new Registry('arena', ARENA_KINDS).addAll(definitions));
  c.bind(TOKENS.judges).toConstantValue(new Registry('judge', JUDGE_KINDS).addAll(definitions));
  c.bind(TOKENS.roles).toConstantValue(new Registry('role', ROLE_KINDS).addAll(definitions));
  c.bind(TOKENS.tasks).toConstantValue(new Registry('task family', TASK_FAMILIES).addAll(definitions));
  c.bind(TOKENS.models).toConstantValue(new Registry<string>('model kind', MODEL_KINDS));
  c.bind(TOKENS.evaluators).toConstantValue((check: (where: string) => TaskCheck) =>
    evaluatorKinds(check).addAll(definitions),
  );
  c.bind(TOKENS.definitions).toConstantValue(definitions);
  c.bind(Resolver).toDynamicValue(
    (ctx) =>
      new Resolver(
        ctx.get(TOKENS.arenas),
        ctx.get(TOKENS.judges),
        ctx.get(TOKENS.roles),
        ctx.get(TOKENS.tasks),
        ctx.get(TOKENS.models),
        ctx.get(TOKENS.definitions),
      ),
  );
  return c;
}

/** The evaluator kinds a run may name: the built-in ones and its plugins' (`definitions`), as the container binds them. */
export function evaluatorRegistry(
  definitions: readonly PluginDefinition[],
  check: (where: string) => TaskCheck,
): Registry<EvaluatorKind> {
  return createContainer(definitions).get<(check: (where: string) => TaskCheck) => Registry<EvaluatorKind>>(
    TOKENS.evaluators,
  )(check);
}

/** The task family `name`, built in or from one of `plugins` (for commands that need a family and nothing else, such as pretrain). */
export async function resolveTaskFamily(
  name: string,
  plugins: readonly string[],
  path = 'task.family',
): Promise<TaskFamily<unknown>> {
  return new Registry<TaskFamily<unknown>>('task family', TASK_FAMILIES)
    .addAll(await loadPlugins(plugins))
    .resolve(name, path);
}

/** Loads the config's plugins, adds `extra` definitions (a script's own), and resolves every name in the config: the plan, before any work. */
export async function planExperiment(c: ExperimentConfig, extra: readonly Definition[] = []): Promise<Plan> {
  const definitions = [
    ...(await loadPlugins(c.plugins)),
    ...extra.map((d) => ({ ...d, source: 'the definitions given to runExperiment' })),
  ];
  return createContainer(definitions).get(Resolver).plan(c);
}
