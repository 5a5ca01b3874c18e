import type { Tokenizer } from '../src/tokenizer/types.js';
import type { Role } from './types.js';

/**
 * The ids a model sees for `text`, what `role` was rendered to see: with a chat template, the
 * role's system message (`system`, else its instructions) and `text` as the user message,
 * ending where the assistant's answer begins; without one, the role's token and the text.
 * Every place that makes a role's prompt (agents, pretraining corpora, probes, evaluators,
 * preflight) goes through here, so a model is trained on the prompts it is later asked.
 */
export function rolePrompt(tokenizer: Tokenizer, role: Pick<Role, 'kind' | 'token' | 'instructions'>, text: string, system?: string): number[] {
  if (tokenizer.chat) return tokenizer.chat(system ?? role.instructions ?? `You are the ${role.kind}.`, text);
  return tokenizer.prompt(text, role.token ?? role.kind);
}
