import { generate, type LanguageModel } from './generate.js';
import type { Tokenizer } from '../tokenizer/types.js';

/**
 * The greedy completion of each prompt as text (its end id dropped), generated 256 prompts at a
 * time. A row ends at the tokenizer's eos or any of its other end ids (a chat template's end of
 * turn), as a role's turn does, so a TinyLM and a Hugging Face model are read alike.
 */
export function greedyTexts(
  model: LanguageModel,
  tokenizer: Tokenizer,
  prompts: readonly number[][],
  maxNewTokens: number,
  seed = 1,
): string[] {
  const ends = new Set([tokenizer.eos, ...tokenizer.stops]);
  const out: string[] = [];
  for (let k = 0; k < prompts.length; k += 256) {
    for (const g of generate(model, prompts.slice(k, k + 256), {
      maxNewTokens,
      temperature: 0,
      seed,
      eos: tokenizer.eos,
      stop: tokenizer.stops,
    }))
      out.push(tokenizer.decode(g.tokens.filter((x) => !ends.has(x))));
  }
  return out;
}
