import { generate } from './generate.js';
import type { TinyLM } from './tinylm.js';
import type { CharTokenizer } from '../tokenizer/index.js';

/** The greedy completion of each prompt as text (end of sequence dropped), generated 256 prompts at a time. */
export function greedyTexts(
  model: TinyLM,
  tokenizer: CharTokenizer,
  prompts: readonly number[][],
  maxNewTokens: number,
  seed = 1,
): string[] {
  const out: string[] = [];
  for (let k = 0; k < prompts.length; k += 256) {
    for (const g of generate(model, prompts.slice(k, k + 256), {
      maxNewTokens,
      temperature: 0,
      seed,
      eos: tokenizer.eos,
    }))
      out.push(tokenizer.decode(g.tokens.filter((x) => x !== tokenizer.eos)));
  }
  return out;
}
