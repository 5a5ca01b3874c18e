import { configuredSystem, rolePrompt, systemMessage } from './prompt.js';
import type { RoleId, Turn } from './types.js';
import type { Role, Observation } from './role.js';
import type { GenerateOptions, GenerateServer } from '../serving/server.js';
import type { ActServer } from '../serving/act-server.js';
import type { Tokenizer } from '../tokenizer/types.js';
import type { ActOptions, ArenaContext } from './arena.js';
import { completionText } from '../models/stop-strings.js';
import { tokenPieces } from '../tokenizer/pieces.js';

export interface AgentBinding {
  role: Role;
  /** model id, as named in the config */
  model: string;
  server?: GenerateServer;
  /** the server of a policy that reads numbers (kind mlp) instead of text: it acts on the observation's `features` and `mask` */
  actor?: ActServer;
  /** this role's longest completion, when not the sampling's (a one-token verdict beside long working) */
  maxNewTokens?: number;
  /** this role's stop strings, in place of the sampling's (`[]`: none) */
  stopStrings?: readonly string[];
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

  /** The same agents with some roles bound elsewhere (one episode's opponents). */
  with(overrides: Readonly<Record<RoleId, AgentBinding>>): Agents {
    return new Agents({ ...this.bindings, ...overrides }, this.tokenizer, this.sampling, this.recent);
  }

  /** The role bindings, to derive others from. */
  get roles(): Readonly<Record<RoleId, AgentBinding>> {
    return this.bindings;
  }

  isRecent(prompt: string): boolean {
    return this.recent?.(prompt) ?? false;
  }

  async act(roleId: RoleId, observation: Observation, options: ActOptions = {}): Promise<Turn> {
    const b = this.bindings[roleId];
    if (!b)
      throw new Error(`arena asked role '${roleId}' to act; bound roles: ${Object.keys(this.bindings).join(', ')}`);
    if (b.actor) return this.move(roleId, b, b.actor, observation, options);
    const tokenizer = b.tokenizer ?? this.tokenizer;
    const text = b.role.render(observation);
    const system = configuredSystem(b.role, b.system, observation.task);
    const prompt = rolePrompt(tokenizer, b.role, text, system);
    const turn =
      options.given === undefined
        ? await this.sample(roleId, b, prompt, observation, options.temperature)
        : await this.give(roleId, b, prompt, observation, options.given);
    if (options.temperature !== undefined && options.given === undefined) turn.temperature = options.temperature;
    if (tokenizer.chat) turn.chat = { system: systemMessage(b.role, system), user: text };
    if (options.compare) turn.compare = options.compare;
    if (options.task) turn.task = options.task;
    // a game's observation names its decision point for text policies too (the 'infostate' baseline's key)
    const state = options.state ?? (observation as { state?: unknown }).state;
    if (typeof state === 'string') turn.state = state;
    return turn;
  }

  /**
   * A turn of a policy that reads numbers: the observation's feature vector is its prompt and
   * the action its completion; the move's code (its number) is its text, parsed by the role as
   * a language model's would be, so arenas and judges read both alike.
   */
  private async move(
    roleId: RoleId,
    b: AgentBinding,
    actor: ActServer,
    observation: Observation,
    options: ActOptions,
  ): Promise<Turn> {
    const { features, mask, state } = observation as { features?: unknown; mask?: unknown; state?: unknown };
    if (!Array.isArray(features) || !Array.isArray(mask))
      throw new Error(
        `role '${roleId}' plays on model '${b.model}', which reads feature vectors; this arena shows it text only`,
      );
    if (options.given !== undefined)
      throw new Error(`role '${roleId}': model '${b.model}' acts on numbers; a given text completion cannot be scored`);
    if (options.temperature !== undefined)
      throw new Error(`role '${roleId}': model '${b.model}' acts on numbers at its server's temperature, not a turn's`);
    const m = await actor.act(features as number[], mask as boolean[]);
    const text = String(m.action);
    const turn: Turn = {
      index: 0,
      role: roleId,
      model: b.model,
      prompt: features as number[],
      completion: [m.action],
      legal: mask as boolean[],
      logProbs: [m.logProb],
      entropy: [m.entropy],
      selfCertainty: [0],
      text,
      action: b.role.parse(text, observation),
    };
    if (typeof state === 'string') turn.state = state;
    if (options.compare) turn.compare = options.compare;
    if (options.task) turn.task = options.task;
    return turn;
  }

  /** A turn whose completion the role's model samples. */
  private async sample(
    roleId: RoleId,
    b: AgentBinding,
    prompt: number[],
    observation: Observation,
    temperature?: number,
  ): Promise<Turn> {
    if (!b.server) throw new Error(`role '${roleId}': model '${b.model}' has no server`);
    const most = b.maxNewTokens ?? this.sampling.maxNewTokens;
    const maxNewTokens = Math.min(most, b.role.maxNewTokens?.(observation) ?? most);
    const tokenizer = b.tokenizer ?? this.tokenizer;
    const stop = [
      ...(b.role.stops?.(observation) ?? []).map((ch) => this.stopToken(tokenizer, ch, b.role.kind)),
      ...tokenizer.stops,
    ];
    const { stopStrings: shared, pieces: _, ...sampling } = this.sampling;
    const strings = b.stopStrings ?? shared ?? [];
    const g = await b.server.generate(prompt, {
      ...sampling,
      maxNewTokens,
      temperature: temperature ?? b.temperature ?? this.sampling.temperature,
      eos: tokenizer.eos,
      ...(stop.length ? { stop } : {}),
      ...(strings.length ? { stopStrings: strings, pieces: tokenPieces(tokenizer) } : {}),
    });
    // what the role parses and the judges read: before the end token or the stop string (the completion keeps them)
    const text = completionText((ids) => tokenizer.decode(ids), g);
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
    if (!b.server?.logProbs)
      throw new Error(
        `role '${roleId}': a given completion is scored by its model, and model '${b.model}' cannot score (a remote model)`,
      );
    const tokenizer = b.tokenizer ?? this.tokenizer;
    const completion = [...tokenizer.encode(text), tokenizer.eos];
    const logProbs = await b.server!.logProbs!({ prompt, completion }, b.temperature ?? this.sampling.temperature ?? 1);
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
