import { rolePrompt, systemMessage } from '../roles/prompt.js';
import type { RoleId, Turn } from '../src/core/types.js';
import type { Role, Observation } from '../roles/types.js';
import type { GenerateOptions, GenerateServer } from '../src/serving/server.js';
import type { Tokenizer } from '../src/tokenizer/types.js';
import type { ActOptions, ArenaContext } from './types.js';

export interface AgentBinding {
  role: Role;
  /** model id, as named in the config */
  model: string;
  server: GenerateServer;
  /** this role's longest completion, when not the sampling's (a one-token verdict beside long working) */
  maxNewTokens?: number;
  /** this role's sampling temperature, when not the sampling's (a greedy judge of sampled answers) */
  temperature?: number;
  /** the tokenizer of this role's model, when not the shared one (each Hugging Face model has its own) */
  tokenizer?: Tokenizer;
  /** this role's system message when its model speaks through a chat template, in place of the role's own instructions */
  system?: string;
}

/** The answer in an assistant's text: a leading (empty or not) `<think>` block is the model's, not the answer. */
export const assistantAnswer = (text: string) => text.replace(/^\s*<think>[\s\S]*?<\/think>\s*/, '');

/**
 * Binds role ids to roles and model servers: renders the observation, prefixes BOS and
 * the role's token (or, for a model with a chat template, makes it the user message after
 * the role's system message), asks the model's server, decodes and parses. Tensor work happens only
 * in the server; what comes back is a plain Turn.
 */
export class Agents implements ArenaContext {
  constructor(
    private readonly bindings: Readonly<Record<RoleId, AgentBinding>>,
    private readonly tokenizer: Tokenizer,
    private readonly sampling: GenerateOptions,
    private readonly recent?: (prompt: string) => boolean,
  ) {}

  isRecent(prompt: string): boolean {
    return this.recent?.(prompt) ?? false;
  }

  async act(roleId: RoleId, observation: Observation, options: ActOptions = {}): Promise<Turn> {
    const b = this.bindings[roleId];
    if (!b)
      throw new Error(`arena asked role '${roleId}' to act; bound roles: ${Object.keys(this.bindings).join(', ')}`);
    const tokenizer = b.tokenizer ?? this.tokenizer;
    const text = b.role.render(observation);
    const prompt = rolePrompt(tokenizer, b.role, text, b.system);
    const turn =
      options.given === undefined
        ? await this.sample(roleId, b, prompt, observation)
        : await this.give(roleId, b, prompt, observation, options.given);
    if (tokenizer.chat) turn.chat = { system: systemMessage(b.role, b.system), user: text };
    if (options.compare) turn.compare = options.compare;
    if (options.task) turn.task = options.task;
    return turn;
  }

  /** A turn whose completion the role's model samples. */
  private async sample(roleId: RoleId, b: AgentBinding, prompt: number[], observation: Observation): Promise<Turn> {
    const most = b.maxNewTokens ?? this.sampling.maxNewTokens;
    const maxNewTokens = Math.min(most, b.role.maxNewTokens?.(observation) ?? most);
    const tokenizer = b.tokenizer ?? this.tokenizer;
    const stop = [
      ...(b.role.stops?.(observation) ?? []).map((ch) => this.stopToken(tokenizer, ch, b.role.kind)),
      ...tokenizer.stops,
    ];
    const g = await b.server.generate(prompt, {
      ...this.sampling,
      maxNewTokens,
      temperature: b.temperature ?? this.sampling.temperature,
      eos: tokenizer.eos,
      ...(stop.length ? { stop } : {}),
    });
    const body = g.stopped ? g.tokens.slice(0, -1) : g.tokens;
    const text = tokenizer.decode(body);
    const answer = tokenizer.chat ? assistantAnswer(text) : text;
    const action = g.stopped
      ? b.role.parse(answer, observation)
      : { valid: false, value: null, error: `no end of sequence within ${g.tokens.length} tokens` };
    return {
      index: 0,
      role: roleId,
      model: b.model,
      prompt,
      completion: g.tokens,
      logProbs: g.logProbs,
      entropy: g.entropy,
      selfCertainty: g.selfCertainty,
      text,
      action,
    };
  }

  /** A turn whose completion is `text` and the end of sequence, scored under the role's model. */
  private async give(
    roleId: RoleId,
    b: AgentBinding,
    prompt: number[],
    observation: Observation,
    text: string,
  ): Promise<Turn> {
    if (!b.server.logProbs)
      throw new Error(
        `role '${roleId}': a given completion is scored by its model, and model '${b.model}' cannot score (a remote model)`,
      );
    const tokenizer = b.tokenizer ?? this.tokenizer;
    const completion = [...tokenizer.encode(text), tokenizer.eos];
    const logProbs = await b.server.logProbs({ prompt, completion }, b.temperature ?? this.sampling.temperature ?? 1);
    const zeros = completion.map(() => 0);
    return {
      index: 0,
      role: roleId,
      model: b.model,
      prompt,
      completion,
      logProbs,
      entropy: zeros,
      selfCertainty: zeros,
      text,
      action: b.role.parse(text, observation),
      given: true,
    };
  }

  /** A stop is one token, so one character of the vocabulary. */
  private stopToken(tokenizer: Tokenizer, ch: string, kind: string): number {
    const ids = tokenizer.encode(ch);
    if (ids.length !== 1) throw new Error(`role '${kind}': a stop is one character, got ${JSON.stringify(ch)}`);
    return ids[0];
  }
}
