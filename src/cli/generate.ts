/**
 * `coevolve generate MODEL`: one completion from the command line, for a Hugging Face
 * directory (with `--adapter`, a PEFT adapter on it), a run checkpoint of one, or a TinyLM
 * checkpoint. With `--json` it prints `{"ids", "logprobs", "text"}` on one line: the new token
 * ids, each one's log-probability (at temperature 1 when greedy, as transformers'
 * `compute_transition_scores` gives for greedy search), and their text. This is also how a
 * model is checked from outside against transformers, greedy ids against greedy ids.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeBackend, initBackend, type BackendChoice } from '../backend/index.js';
import { generate, type LanguageModel } from '../models/generate.js';
import { loadHfPolicy } from '../models/hf/checkpoint.js';
import { LoraAdapter } from '../models/hf/lora.js';
import { HfCausalLM } from '../models/hf/model.js';
import { HfPolicy } from '../models/hf/policy.js';
import { HfTokenizer } from '../models/hf/tokenizer.js';
import { loadModel } from '../models/store.js';
import { CharTokenizer } from '../tokenizer/index.js';

export interface GenerateCommandOptions {
  adapter?: string;
  prompt?: string;
  promptIds?: string;
  /** render the prompt as a user message through the model's chat template */
  chat?: boolean;
  maxNewTokens: number;
  temperature: number;
  seed: number;
  json?: boolean;
  backend: string;
}

interface Loaded { model: LanguageModel; encode(text: string, chat: boolean): number[]; decode(ids: number[]): string | null; ends: number[] }

/** Loads `path` (see the file's comment); refuses what it cannot read, naming it. */
async function load(path: string, adapter?: string): Promise<Loaded> {
  if (!existsSync(path)) throw new Error(`generate: ${path} does not exist`);
  const isCheckpoint = existsSync(join(path, 'model.json'));
  const kind = isCheckpoint ? (JSON.parse(readFileSync(join(path, 'model.json'), 'utf8')) as { modelTopology?: { kind?: string } }).modelTopology?.kind : 'hf';
  if (kind === 'hf') {
    const policy = isCheckpoint ? (await loadHfPolicy(path)).policy : new HfPolicy(HfCausalLM.load(path));
    const model = adapter ? new HfPolicy(policy.base, LoraAdapter.load(adapter, policy.base.config)) : policy;
    // a directory without tokenizer.json still generates from --prompt-ids; its text is then null
    const dir = existsSync(join(path, 'tokenizer.json')) ? path : policy.base.dir!;
    const tk = existsSync(join(dir, 'tokenizer.json')) ? HfTokenizer.fromDirectory(dir) : undefined;
    const noTokenizer = (): never => { throw new Error(`generate: ${path} has no tokenizer.json; give --prompt-ids`); };
    return {
      model,
      encode: (text, chat) => (!tk ? noTokenizer() : chat ? tk.chatIds([{ role: 'user', content: text }], { addGenerationPrompt: true }) : tk.encode(text)),
      decode: (ids) => (tk ? tk.decode(ids, { skipSpecialTokens: true }) : null),
      ends: tk?.endOfTurnIds ?? policy.base.config.eosIds,
    };
  }
  if (adapter) throw new Error(`generate: --adapter applies to Hugging Face models; ${path} holds a ${kind}`);
  const loaded = await loadModel(path);
  if (loaded.kind !== 'tinylm') throw new Error(`generate: ${path} holds a ${loaded.kind}, not a language model`);
  const tk = loaded.tokenizer ?? new CharTokenizer();
  return {
    model: loaded.model,
    encode: (text, chat) => {
      if (chat) throw new Error('generate: --chat needs a model with a chat template (a Hugging Face directory)');
      return tk.prompt(text, 'solver');
    },
    decode: (ids) => tk.decode(ids),
    ends: [tk.eos],
  };
}

/** Runs the command; returns what it prints. */
export async function generateCommand(path: string, o: GenerateCommandOptions): Promise<string> {
  if ((o.prompt === undefined) === (o.promptIds === undefined)) throw new Error('generate: give --prompt TEXT or --prompt-ids 1,2,3 (one of them)');
  const ids = o.promptIds?.split(',').map((s) => Number(s.trim()));
  if (ids && (ids.length === 0 || ids.some((n) => !Number.isInteger(n) || n < 0))) throw new Error(`generate: --prompt-ids takes token ids separated by commas, got '${o.promptIds}'`);
  const info = await initBackend(o.backend as BackendChoice);
  if (!o.json) console.error(describeBackend(info));
  const m = await load(path, o.adapter);
  const prompt = ids ?? m.encode(o.prompt!, Boolean(o.chat));
  const [g] = generate(m.model, [prompt], { maxNewTokens: o.maxNewTokens, temperature: o.temperature, seed: o.seed, eos: m.ends[0], stop: m.ends.slice(1) });
  const text = m.decode(g.tokens);
  return o.json ? JSON.stringify({ ids: g.tokens, logprobs: g.logProbs, text }) : (text ?? g.tokens.join(','));
}
