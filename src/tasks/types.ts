/**
 * The contract every task family meets: a validated difficulty knob, a seeded generator,
 * a strict answer parser and a verifier. Families are plain objects so a registry can list
 * them and a config file can name one.
 */
import type { Action, Task } from '../core/types.js';
import type { Rng } from '../util/rng.js';

/** What {@link TaskFamily.parseAnswer} makes of a completion; the same shape as a role's Action. */
export type ParsedAnswer = Action;

/**
 * A family of generated, verifiable tasks.
 * @typeParam D the difficulty record (the curriculum's knob)
 */
export interface TaskFamily<D> {
  /** registry name; also the `family` of every task it makes and the prefix of their ids */
  name: string;
  /** the difficulty used when a field is not given */
  defaults: D;
  /**
   * Checks a difficulty from config or code. Missing fields take {@link defaults}; a wrong
   * or unknown field throws an error naming it.
   */
  validate(d: unknown): D;
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
}
