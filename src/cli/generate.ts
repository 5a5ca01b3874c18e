/**
 * `coevolve generate MODEL`: one completion from the command line, for a Hugging Face
 * directory (with `--adapter`, a PEFT adapter on it), a run checkpoint of one, or a TinyLM
 * checkpoint. With `--json` it prints `{"ids", "logprobs", "text"}` on one line: the new token
 * ids, each one's log-probability (at temperature 1 when greedy, as transformers'
 * `compute_transition_scores` gives for greedy search), and their text. This is also how a
 * model is checked from outside against transformers, greedy ids against greedy ids.
 */
import { describeBackend, initBackend, type BackendChoice } from '../backend/index.js';
import { generate, type LanguageModel } from '../models/generate.js';
import { openModel } from '../models/open.js';
import { completionText } from '../models/stop-strings.js';
import { tokenPieces, type TokenPieces } from '../tokenizer/pieces.js';

export interface GenerateCommandOptions {
  adapter?: string;
  prompt?: string;
  promptIds?: string;
  /** render the prompt as a user message through the model's chat template */
  chat?: boolean;
  maxNewTokens: number;
  /** stop strings: the text is cut before the first, the ids keep the token that completed it */
  stop?: string[];
  temperature: number;
  seed: number;
  json?: boolean;
  backend: string;
}

interface Loaded {
  model: LanguageModel;
  encode(text: string, chat: boolean): number[];
  decode(ids: number[]): string | null;
  ends: number[];
  /** each token's text, for stop strings (none without a tokenizer) */
  pieces(): TokenPieces | undefined;
}

/** Loads `path` (see src/models/open.ts) with what the command needs of it. */
async function load(path: string, adapter?: string): Promise<Loaded> {
  const opened = await openModel(path, adapter).catch((e: Error) => {
    throw new Error(`generate: ${e.message}`);
  });
  if (opened.kind === 'hf') {
    const tk = opened.tokenizer;
    // a directory without tokenizer.json still generates from --prompt-ids; its text is then null
    const noTokenizer = (): never => {
      throw new Error(`generate: ${path} has no tokenizer.json; give --prompt-ids`);
    };
    return {
      model: opened.policy,
      encode: (text, chat) =>
        !tk
          ? noTokenizer()
          : chat
            ? tk.chatIds([{ role: 'user', content: text }], { addGenerationPrompt: true })
            : tk.encode(text),
      decode: (ids) => (tk ? tk.decode(ids, { skipSpecialTokens: true }) : null),
      ends: tk?.endOfTurnIds.length ? tk.endOfTurnIds : opened.policy.config.eosIds,
      pieces: () =>
        tk &&
        tokenPieces({
          size: tk.vocabSize,
          decode: (ids) => tk.decode(ids, { skipSpecialTokens: true }),
          bytes: (id) => tk.tokenBytes(id),
        }),
    };
  }
  const tk = opened.tokenizer;
  return {
    model: opened.model,
    encode: (text, chat) => {
      if (chat) throw new Error('generate: --chat needs a model with a chat template (a Hugging Face directory)');
      return tk.prompt(text, 'solver');
    },
    decode: (ids) => tk.decode(ids),
    ends: [tk.eos],
    pieces: () => tokenPieces(tk),
  };
}

/** Runs the command; returns what it prints. */
export async function generateCommand(path: string, o: GenerateCommandOptions): Promise<string> {
  if ((o.prompt === undefined) === (o.promptIds === undefined))
    throw new Error('generate: give --prompt TEXT or --prompt-ids 1,2,3 (one of them)');
  const ids = o.promptIds?.split(',').map((s) => Number(s.trim()));
  if (ids && (ids.length === 0 || ids.some((n) => !Number.isInteger(n) || n < 0)))
    throw new Error(`generate: --prompt-ids takes token ids separated by commas, got '${o.promptIds}'`);
  const info = await initBackend(o.backend as BackendChoice);
  if (!o.json) console.error(describeBackend(info));
  const m = await load(path, o.adapter);
  const prompt = ids ?? m.encode(o.prompt!, Boolean(o.chat));
  const stopStrings = o.stop ?? [];
  const pieces = stopStrings.length ? m.pieces() : undefined;
  if (stopStrings.length && !pieces) throw new Error(`generate: --stop reads text, and ${path} has no tokenizer.json`);
  const [g] = generate(m.model, [prompt], {
    maxNewTokens: o.maxNewTokens,
    temperature: o.temperature,
    seed: o.seed,
    eos: m.ends[0],
    stop: m.ends.slice(1),
    ...(stopStrings.length ? { stopStrings, pieces } : {}),
  });
  // stopped on a stop string: the text before it (the ids keep the token that completed it)
  const text =
    g.stopString === undefined ? m.decode(g.tokens) : m.decode(g.tokens) && completionText((x) => m.decode([...x])!, g);
  return o.json ? JSON.stringify({ ids: g.tokens, logprobs: g.logProbs, text }) : (text ?? g.tokens.join(','));
}
