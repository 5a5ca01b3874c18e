/**
 * What a plugin exports: definitions, each a new kind of one concept under a name configs
 * use. The loader registers every definition a plugin module exports (named exports, the
 * default export, or lists of them), so a plugin is just a module of `define*` calls.
 */
import type { z } from 'zod';
import type { Arena, ArenaFactory, ArenaKind } from '../core/arena.js';
import { ANY_OPTIONS } from '../config/kind.js';
import { roleSet } from '../core/judge-common.js';
import type { Judge, JudgeDeps, JudgeFactory, JudgeKind, RoleOption } from '../core/judge.js';
import type { AnswerParser, Observation, Role, RoleFactory } from '../core/role.js';
import type { Action, BatchRewards, Episode, RoleId, Turn } from '../core/types.js';
import type { EvaluatorFactory, EvaluatorKind } from '../engine/evaluators/types.js';
import type { TaskFamily } from '../core/task-family.js';
import { DEFINITION, type Concept, type Definition } from '../plugins/definition.js';

export { DEFINITION, isDefinition, type Concept, type Definition } from '../plugins/definition.js';

export type { RoleFactory } from '../core/role.js';

// Names end up in config files, metric names and error messages: keep them plain.
const NAME = /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/;

function define<C extends Concept, T>(concept: C, name: string, value: T): Definition<C, T> {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new Error(
      `define ${concept}: name ${JSON.stringify(name)} must be lower-case letters and digits, words joined by '-' or '_' (e.g. 'my-judge')`,
    );
  }
  return Object.freeze({ [DEFINITION]: true as const, concept, name, value });
}

/** A kind's option schema: a zod object (give `z.strictObject`, so a misspelt option is an error naming the known ones). */
export type OptionsSchema = z.ZodType<Record<string, unknown>>;

/**
 * A new arena kind: `make(options, family)` builds it from the config's `arena.options`,
 * parsed by `options` (a zod schema; without one, `make` gets them unchecked and should check
 * them itself), and the task family. Its `kind` must be `name`.
 * @example export const duel = defineArena('duel', (options, family) => new DuelArena(options), z.strictObject({ rounds: z.number().int().default(3) }));
 */
export function defineArena(
  name: string,
  make: ArenaFactory,
  options: OptionsSchema = ANY_OPTIONS,
): Definition<'arena', ArenaKind> {
  if (typeof make !== 'function') throw new Error(`defineArena('${name}'): give a function (options, family) => Arena`);
  const checked: ArenaFactory = (options, family) => {
    const arena: Arena = make(options, family);
    if (arena?.kind !== name || typeof arena.play !== 'function' || typeof arena.roles !== 'object') {
      throw new Error(
        `arena '${name}': its factory must return an Arena whose kind is '${name}' (got kind ${JSON.stringify(arena?.kind)})`,
      );
    }
    return arena;
  };
  return define('arena', name, { options, make: checked });
}

/** What a reward function is given besides the turn and its episode. */
export interface RewardContext {
  /** the judge's config options (`judges[i].options`), `role` and `name` included */
  options: Record<string, unknown>;
  /** the task family's verifier: true when `output` answers `task` */
  verify?: JudgeDeps['verify'];
}

/** A judge written as one reward per turn: `reward` is called for each turn of `roles`. */
export interface RewardJudge {
  /** the roles it rewards unless the config's `role` option says otherwise (default ['solver']) */
  roles?: readonly RoleId[];
  /** a finite reward for the turn, or null to abstain; the turn's text is data, never code */
  reward(turn: Turn, episode: Episode, context: RewardContext): number | null;
}

/**
 * A new judge kind, either as a reward function per turn (TRL's reward functions) or as a
 * factory of a full {@link Judge} that sees the whole batch (group statistics, votes).
 * The per-turn form takes the options `role` (the roles rewarded) and `name` (its metric
 * name) and passes every option to `reward`; a non-finite reward is an error naming the judge.
 * @example export const short = defineJudge('short', { reward: (turn) => (turn.action.valid ? 1 / turn.text.length : 0) });
 */
export function defineJudge(
  name: string,
  judge: RewardJudge | JudgeFactory,
  options: OptionsSchema = ANY_OPTIONS,
): Definition<'judge', JudgeKind> {
  if (typeof judge === 'function') return define('judge', name, { options, make: judge });
  if (typeof judge?.reward !== 'function')
    throw new Error(
      `defineJudge('${name}'): give { reward(turn, episode, context) } or a factory (options, deps) => Judge`,
    );
  return define('judge', name, {
    options,
    make: (o: Record<string, unknown>, deps: JudgeDeps) => rewardJudge(name, judge, o, deps),
  });
}

function rewardJudge(kind: string, spec: RewardJudge, options: Record<string, unknown>, deps: JudgeDeps): Judge {
  const set = roleSet((options.role ?? spec.roles) as RoleOption | undefined, kind);
  const name = options.name ?? kind;
  if (typeof name !== 'string' || name === '')
    throw new Error(`judge '${kind}': option 'name' must be a non-empty string`);
  const context: RewardContext = { options, verify: deps.verify };
  return {
    name,
    roles: set,
    score(batch: readonly Episode[]): BatchRewards {
      return batch.map((e) =>
        e.turns.map((t) => {
          if (!set.has(t.role)) return null;
          const r = spec.reward(t, e, context);
          if (r !== null && (typeof r !== 'number' || !Number.isFinite(r)))
            throw new Error(
              `judge '${kind}': reward must be a finite number or null, got ${String(r)} for a ${t.role} turn of episode ${e.id}`,
            );
          return r;
        }),
      );
    },
  };
}

/** A role written as a plain object: how it shows an observation and reads the model's output. */
export interface RoleSpec {
  /**
   * the role token its prompts start with (default its name); a model's tokenizer knows the
   * tokens it was made with (`proposer`, `solver`, `critic`, `judge`, `memory`, `player`), so
   * a new role on an existing checkpoint reuses one
   */
  token?: string;
  /** true when its action answers the task (the family verifies it): the run measures its accuracy (`accuracy/train`) */
  answersTasks?: boolean;
  render(observation: Observation): string;
  /** never throws: bad output is `{ valid: false, value: null, error }` */
  parse(output: string, observation: Observation): Action;
  /** the most new tokens an answer to this observation needs, when fewer than the role's */
  maxNewTokens?(observation: Observation): number | undefined;
  /** characters that end an answer as the end of sequence does, left out of the parsed text */
  stops?(observation: Observation): readonly string[] | undefined;
}

/**
 * A new role kind: a {@link RoleSpec}, or a factory that gets the task family's answer
 * parser (for a role that answers tasks as a solver does).
 * @example export const guesser = defineRole('guesser', { token: 'solver', render: (o) => o.task.prompt, parse: (out) => ({ valid: true, value: out }) });
 */
export function defineRole(name: string, role: RoleSpec | RoleFactory): Definition<'role', RoleFactory> {
  if (typeof role === 'function') return define('role', name, role);
  if (typeof role?.render !== 'function' || typeof role.parse !== 'function')
    throw new Error(
      `defineRole('${name}'): give { render(observation), parse(output, observation) } or a factory (parseAnswer) => Role`,
    );
  const { token, answersTasks, render, parse, maxNewTokens, stops } = role;
  return define('role', name, () => ({
    kind: name,
    ...(token ? { token } : {}),
    ...(answersTasks ? { answersTasks } : {}),
    render,
    parse,
    ...(maxNewTokens ? { maxNewTokens } : {}),
    ...(stops ? { stops } : {}),
  }));
}

/**
 * A new task family: a seeded generator, a strict answer parser and a verifier, under the
 * family's own `name` (`tasks.family` in configs).
 */
export function defineTaskFamily<D>(family: TaskFamily<D>): Definition<'task family', TaskFamily<unknown>> {
  const missing = (['validate', 'generate', 'parseAnswer', 'verify'] as const).filter(
    (k) => typeof family?.[k] !== 'function',
  );
  if (missing.length || typeof family.defaults !== 'object') {
    throw new Error(
      `defineTaskFamily(${JSON.stringify(family?.name)}): a task family needs name, defaults and the functions ` +
        `validate, generate, parseAnswer, verify${missing.length ? `; missing: ${missing.join(', ')}` : ''}`,
    );
  }
  return define('task family', family.name, family as TaskFamily<unknown>);
}

/** A new evaluator kind (`evaluators[i].kind`): its factory reads the config entry (its `options` parsed by `options`, a zod schema) and the resolved plan. */
export function defineEvaluator(
  name: string,
  make: EvaluatorFactory,
  options: OptionsSchema = ANY_OPTIONS,
): Definition<'evaluator', EvaluatorKind> {
  if (typeof make !== 'function')
    throw new Error(`defineEvaluator('${name}'): give a function (spec, config, plan, where) => Evaluator`);
  return define('evaluator', name, { options, make });
}
