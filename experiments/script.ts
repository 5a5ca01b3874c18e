/** What the experiment scripts share: their `--name value` arguments, loading a language model with its tokenizer, and greedy answers. */
import { loadModel } from '../src/models/store.js';
import type { TinyLM } from '../src/models/tinylm.js';
import type { CharTokenizer } from '../src/tokenizer/index.js';

/** The value after `--name` on the command line, else `fallback`; without a fallback it is required. */
export function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0) return process.argv[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
}

/** Whether the bare switch `--name` is on the command line. */
export function flag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}

/** A checkpoint that must be a language model with a tokenizer (a base to train or sample from). */
export async function loadLanguageModel(dir: string): Promise<{ model: TinyLM; tokenizer: CharTokenizer }> {
  const loaded = await loadModel(dir);
  if (loaded.kind !== 'tinylm' || !loaded.tokenizer) throw new Error(`${dir} is not a language model with a tokenizer`);
  return { model: loaded.model as TinyLM, tokenizer: loaded.tokenizer };
}

export { greedyTexts } from '../src/models/greedy.js';
