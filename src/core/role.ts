import type { Action, Task } from './types.js';

/** What a role is shown: the task, plus whatever the arena adds (answers to judge, memory). */
export interface Observation {
  task: Task;
  [key: string]: unknown;
}

/**
 * A named part an agent plays. It renders what it sees into the prompt text (the role
 * token and BOS are added by the agent, so several roles can share one model) and parses
 * the model's output into an action. Parsing never throws: bad output is an invalid action.
 */
export interface Role {
  readonly kind: string;
  /**
   * the role token its prompts start with, when not its kind's: a role that writes what
   * another role writes (a sneaky generator writes a solver's working) reuses that role's
   * token, so a model and tokenizer made for the other role serve it unchanged
   */
  readonly token?: string;
  /**
   * what the role does, as the system message of a model that speaks through a chat template
   * (a Hugging Face model with one); `roles.<id>.system` in a config overrides it. A character
   * model never sees it.
   */
  readonly instructions?: string;
  /**
   * true when its action answers the episode's task (the family parses and verifies it): the
   * loop measures rollout accuracy, valid rate and answer diversity on these turns
   */
  readonly answersTasks?: boolean;
  render(observation: Observation): string;
  parse(output: string, observation: Observation): Action;
  /**
   * the most new tokens an answer to this observation can need, when fewer than the role's
   * (a one-digit verdict after a long prompt, from a role that also writes working): the
   * sampler stops there, and the prompt may fill the rest of the context
   */
  maxNewTokens?(observation: Observation): number | undefined;
  /**
   * characters that end an answer to this observation as the end of sequence does, left out
   * of the parsed text (a step's result written mid-working ends at its ',', where a model
   * that writes working goes on with the next step): the action is what comes before
   */
  stops?(observation: Observation): readonly string[] | undefined;
}

/** Answer parsing of a task family, which the solver role borrows. */
export type AnswerParser = (output: string) => Action;

/** An invalid action: output the role cannot read, with why (parsing never throws). */
export const invalid = (error: string): Action => ({ valid: false, value: null, error });
/** A valid action carrying the value the role read from the output. */
export const valid = (value: string): Action => ({ valid: true, value });

/** Builds a role from the task family's answer parser (a solver-like role parses answers with it). */
export type RoleFactory = (parseAnswer: AnswerParser) => Role;
