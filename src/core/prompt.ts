import type { Tokenizer } from '../tokenizer/types.js';
import type { Role } from './role.js';

/** A role's system message: the config's `system`, else the role's instructions, else its kind named. */
export function systemMessage(role: Pick<Role, 'kind' | 'instructions'>, system?: string): string {
  return system ?? role.instructions ?? `You are the ${role.kind}.`;
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
