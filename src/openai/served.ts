/**
 * What `coevolve serve` needs of a model, whichever kind it is: its prompts (text or token
 * ids; a chat through the model's chat template, or for a TinyLM the last user message in the
 * role it was trained in), its end ids, its text, and the full next-token distribution at each
 * completion position (for top logprobs).
 */
import * as tf from '@tensorflow/tfjs';
import type { LanguageModel } from '../models/generate.js';
import { layoutBatch } from '../models/score-batch.js';
import { LoraAdapter } from '../models/hf/lora.js';
import { HfPolicy } from '../models/hf/policy.js';
import type { HfTokenizer } from '../models/hf/tokenizer.js';
import type { TinyLM } from '../models/tinylm.js';
import type { CharTokenizer } from '../tokenizer/index.js';
import { tokenPieces, type TokenPieces } from '../tokenizer/pieces.js';

export interface ChatTurn {
  role: string;
  content: string;
}

export interface ServedModel {
  model: LanguageModel;
  context: number;
  /** a completion prompt's ids, from text or as given */
  prompt(p: string | readonly number[]): number[];
  /** a chat's ids, ready for the assistant's turn; `kwargs` go to the chat template (vLLM's chat_template_kwargs) */
  chat(messages: readonly ChatTurn[], kwargs?: Record<string, unknown>): number[];
  decode(ids: readonly number[]): string;
  /** one token's text, special tokens included */
  tokenText(id: number): string;
  eos: number;
  stops: number[];
  /** each token's text, for stop strings (undefined without a tokenizer: token ids only) */
  pieces(): TokenPieces | undefined;
  /** log-softmax of the next-token logits at each completion position, [Tc, V] */
  positionLogProbs(prompt: readonly number[], completion: readonly number[]): tf.Tensor2D;
  /** this model's base with the PEFT adapter in `dir` applied (Hugging Face models; runtime LoRA loading) */
  withAdapter?(dir: string): ServedModel;
  /** frees what withAdapter made (the adapter; the base stays) */
  dispose?(): void;
}

const vocabularies = new WeakMap<HfTokenizer, Parameters<typeof tokenPieces>[0]>();
/** The pieces of a Hugging Face tokenizer's vocabulary as decoded text holds them (special tokens skipped). */
function hfPieces(tk: HfTokenizer): TokenPieces {
  let v = vocabularies.get(tk);
  if (!v) {
    v = {
      size: tk.vocabSize,
      decode: (ids) => tk.decode(ids, { skipSpecialTokens: true }),
      bytes: (id) => tk.tokenBytes(id),
    };
    vocabularies.set(tk, v);
  }
  return tokenPieces(v);
}

/** A token id list as given, checked against the vocabulary. */
function ids(p: readonly number[], vocab: number): number[] {
  const bad = p.find((x) => !Number.isInteger(x) || x < 0 || x >= vocab);
  if (bad !== undefined) throw new Error(`token id ${bad} is outside the vocabulary of ${vocab}`);
  return [...p];
}

/** A TinyLM and its character tokenizer, prompts in `role`'s token. */
export function servedTinyLM(model: TinyLM, tokenizer: CharTokenizer, role: string): ServedModel {
  tokenizer.roleToken(role); // an unknown role fails here, before the server starts
  return {
    model,
    context: model.config.context,
    eos: tokenizer.eos,
    stops: [],
    prompt: (p) => (typeof p === 'string' ? tokenizer.prompt(p, role) : ids(p, model.config.vocabSize)),
    chat: (messages) => tokenizer.prompt([...messages].reverse().find((m) => m.role === 'user')!.content, role),
    decode: (t) => tokenizer.decode(t),
    tokenText: (id) => tokenizer.decode([id], true),
    pieces: () => tokenPieces(tokenizer),
    positionLogProbs: (prompt, completion) =>
      tf.logSoftmax(model.completionLogits([{ prompt, completion }]).logits.squeeze([0]) as tf.Tensor2D),
  };
}

/** A Hugging Face policy and its tokenizer (undefined for a directory without one: token ids only). */
export function servedHf(policy: HfPolicy, tokenizer: HfTokenizer | undefined, where: string): ServedModel {
  const need = (): HfTokenizer => {
    if (!tokenizer) throw new Error(`${where} has no tokenizer.json: give the prompt as token ids`);
    return tokenizer;
  };
  const ends = tokenizer?.endOfTurnIds.length ? tokenizer.endOfTurnIds : policy.config.eosIds;
  return {
    model: policy,
    context: policy.maxSequence,
    eos: ends[0] ?? -1,
    stops: ends.slice(1),
    prompt: (p) => (typeof p === 'string' ? need().encode(p) : ids(p, policy.config.vocabSize)),
    chat: (messages, kwargs = {}) => {
      const tk = need();
      if (!tk.hasChatTemplate)
        throw new Error(`${where} has no chat template (tokenizer_config.json chat_template): use /v1/completions`);
      return tk.chatIds(messages, { ...kwargs, addGenerationPrompt: true });
    },
    decode: (t) => (tokenizer ? tokenizer.decode(t, { skipSpecialTokens: true }) : ''),
    tokenText: (id) => (tokenizer ? tokenizer.decode([id]) : `<${id}>`),
    pieces: () => (tokenizer ? hfPieces(tokenizer) : undefined),
    positionLogProbs: (prompt, completion) => {
      const { B, P, Tc, L, tokens, positions, leftPad } = layoutBatch([{ prompt, completion }]);
      const keyMask = new Float32Array(B * L).fill(1).fill(0, 0, leftPad[0]);
      const { hidden } = policy.forward(tf.tensor2d(tokens, [B, L], 'int32'), positions, keyMask);
      return tf.logSoftmax(
        policy.logits(hidden.slice([0, P - 1, 0], [-1, Tc, -1]) as tf.Tensor3D).squeeze([0]) as tf.Tensor2D,
      );
    },
    withAdapter: (dir) => {
      const adapted = new HfPolicy(policy.base, LoraAdapter.load(dir, policy.base.config));
      return { ...servedHf(adapted, tokenizer, where), dispose: () => adapted.dispose() };
    },
  };
}
