/**
 * A Hugging Face model's tokenizer as roles use one (src/tokenizer/types.ts): a prompt is the
 * role's text as transformers' `tokenizer(text)` encodes it (with the special tokens its
 * post-processor adds, a Llama's BOS say), or, when the directory has a chat template, the
 * role's instructions and text as a system and a user message; a completion
 * ends at an eos id or the chat template's end of turn. Without any end id a role could never
 * finish a turn, so such a directory is refused.
 */
import type { Tokenizer } from '../../tokenizer/types.js';
import { CHAT_KWARGS } from './chat-defaults.js';
import { HfTokenizer } from './tokenizer.js';

/** The tokenizer of `dir` for roles. */
export function loadHfTokenizer(dir: string): Tokenizer {
  return roleTokenizer(HfTokenizer.fromDirectory(dir), dir);
}

/** `tk` as roles use it; `where` names it in errors. */
export function roleTokenizer(tk: HfTokenizer, where: string): Tokenizer {
  const ends = [...new Set([...tk.eosIds, ...tk.endOfTurnIds])];
  if (!ends.length)
    throw new Error(
      `${where}: no end-of-sequence id (generation_config.json or config.json eos_token_id, or tokenizer_config.json eos_token): a role's turn could never end`,
    );
  return {
    size: tk.vocabSize,
    eos: ends[0],
    stops: ends.slice(1),
    prompt: (text) => tk.encode(text),
    // thinking off (Qwen3's templates read enable_thinking; others ignore it): a role answers at once; saved models keep it as the default (chat-defaults.ts)
    ...(tk.hasChatTemplate
      ? {
          chat: memo((system: string, user: string) =>
            tk.chatIds(
              [
                { role: 'system', content: system },
                { role: 'user', content: user },
              ],
              { ...CHAT_KWARGS, addGenerationPrompt: true },
            ),
          ),
        }
      : {}),
    encode: (text) => tk.encode(text, { addSpecialTokens: false }),
    decode: (ids) => tk.decode(ids, { skipSpecialTokens: true }),
    bytes: (id) => tk.tokenBytes(id),
  };
}

/** How many distinct chat prompts a role tokenizer remembers (memo). */
export const CHAT_MEMO = 1024;

/**
 * `chat` remembering its last CHAT_MEMO answers: a group's episodes ask for the same prompt
 * (groupSize of them per task), and rendering the template and encoding it, about a
 * millisecond a prompt, ran serially on the learner's thread while replicas waited. Each
 * call gets its own copy, so a caller that edits its ids cannot change another's.
 */
function memo(chat: (system: string, user: string) => number[]): (system: string, user: string) => number[] {
  const known = new Map<string, number[]>();
  return (system, user) => {
    const key = JSON.stringify([system, user]);
    let ids = known.get(key);
    if (ids)
      known.delete(key); // re-inserted below: the map's order is the order of last use
    else ids = chat(system, user);
    known.set(key, ids);
    if (known.size > CHAT_MEMO) known.delete(known.keys().next().value!);
    return [...ids];
  };
}
