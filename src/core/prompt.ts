import type { Tokenizer } from '../tokenizer/types.js';
import type { Role } from './role.js';
import type { Task } from './types.js';

/** A role's system message: the config's `system`, else the role's instructions, else its kind named. */
export function systemMessage(role: Pick<Role, 'kind' | 'instructions'>, system?: string): string {
  return system ?? role.instructions ?? `You are the ${role.kind}.`;
}

/**
 * The system message configured for a role showing `task`: the role's config `system`, else,
 * for a role that answers tasks, the one the task's dataset gave it (a chat prompt's system
 * turn), else none (the role's instructions, through {@link systemMessage}). The config wins
 * so that a run can replace a dataset's system prompt without rewriting the data.
 */
export function configuredSystem(
  role: Pick<Role, 'answersTasks'>,
  system: string | undefined,
  task: Task | undefined,
): string | undefined {
  return system ?? (role.answersTasks ? task?.system : undefined);
}

/**
 * The ids a model sees for `text`, what `role` was rendered to see: with a chat template, the
 * role's system message (`system`, else its instructions) and `text` as the user message,
 * ending where the assistant's answer begins; without one, the role's token and the text.
 * Every place that makes a role's prompt (agents, pretraining corpora, probes, evaluators,
 * preflight) goes through here, so a model is trained on the prompts it is later asked.
 */
export function rolePrompt(
  tokenizer: Tokenizer,
  role: Pick<Role, 'kind' | 'token' | 'instructions'>,
  text: string,
  system?: string,
): number[] {
  if (tokenizer.chat) return tokenizer.chat(systemMessage(role, system), text);
  return tokenizer.prompt(text, role.token ?? role.kind);
}
