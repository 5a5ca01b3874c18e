/**
 * The contract every task family meets: a validated difficulty knob, a seeded generator,
 * a strict answer parser and a verifier. Families are plain objects so a registry can list
 * them and a config file can name one.
 */
import type { z } from 'zod';
import type { Action, Task } from './types.js';
import type { Rng } from '../util/rng.js';

/** What {@link TaskFamily.parseAnswer} makes of a completion; the same shape as a role's Action. */
export type ParsedAnswer = Action;

/** What {@link TaskFamily.parseProposal} makes of a proposer's text: a task, or why not. */
export type ParsedProposal = { task: Task } | { error: string };

/**
 * A family of generated, verifiable tasks.
 * @typeParam D the difficulty record (the curriculum's knob)
 */
export interface TaskFamily<D> {
  /** registry name; also the `family` of every task it makes and the prefix of their ids */
  name: string;
  /**
   * the arenas its tasks are made for, when not every arena that shows a role the prompt
   * (a dialogue's prompt is the whole dialogue, which only the memory arena takes apart)
   */
  arenas?: readonly string[];
  /** the difficulty used when a field is not given */
  defaults: D;
  /** the difficulty's zod schema (defaults included), when the family has one: what `validate` parses with */
  difficulty?: z.ZodType<D>;
  /**
   * Checks a difficulty from config or code. Missing fields take {@link defaults}; a wrong
   * or unknown field throws an error naming its path: `where` is the difficulty's own
   * (`tasks.difficulty`, `arena.options.limits`).
   */
  validate(d: unknown, where?: string): D;
  /** One task drawn from `rng`; `index` only names it (`${name}-${index}`). */
  generate(rng: Rng, d: D, index: number): Task;
  /**
   * Reads a raw completion (the model stops at EOS, so it is all answer), trimmed. Never
   * evaluates the text: anything outside the family's answer format is invalid, with why.
   */
  parseAnswer(output: string): ParsedAnswer;
  /**
   * True when the completion parses and equals `task.answer`. Throws when the task has no
   * answer or belongs to another family: both are caller bugs, not wrong answers.
   */
  verify(task: Task, output: string): boolean;
  /**
   * Reads a task a proposer model wrote (self-play), in the family's prompt grammar and
   * inside `limits` (a difficulty read as bounds, not as a distribution). The answer comes
   * from the family's own evaluator, never from evaluating the text. Model text is data:
   * every problem is `{ error }`, never a throw. The task is named 'proposed' (callers
   * rename it) and has no target.
   */
  parseProposal?(text: string, limits: D): ParsedProposal;
  /**
   * The family's own difficulty measure of a task (say operands and digits), so curricula
   * and logs can place a proposed task without knowing the grammar. Throws on a task the
   * family cannot read: tasks of the family always can.
   */
  measure?(task: Task): Record<string, number>;
}
