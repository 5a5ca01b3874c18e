/**
 * A model on an OpenAI-compatible endpoint (`coevolve serve`, vLLM, SGLang, llama.cpp, Ollama)
 * as the batching server an inference-only role asks: the prompt goes as text (BOS and the
 * role token dropped: serve the endpoint with that role, e.g. `coevolve serve --role judge`),
 * the completion comes back as text and is encoded with the run's tokenizer. Requests go
 * through the official `openai` client, with its timeout and its retries with exponential
 * backoff (connection errors, timeouts, 429 and 5xx); when those run out, the request fails
 * with a RemoteModelError, which the loop counts as a failed episode instead of stopping.
 */
import OpenAI from 'openai';
import type { GenerateOptions, Generation } from '../models/generate.js';
import type { CharTokenizer } from '../tokenizer/index.js';

/** The endpoint is down or keeps failing: transient, so an episode that meets it is dropped and counted, not fatal. */
export class RemoteModelError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RemoteModelError';
  }
}

export interface RemoteSpec {
  url: string;
  model: string;
  apiKeyEnv?: string;
  timeoutMs: number;
  retries: number;
}

export class RemoteServer {
  private readonly client: OpenAI;

  constructor(
    readonly id: string,
    private readonly spec: RemoteSpec,
    private readonly tokenizer: CharTokenizer,
  ) {
    const apiKey = spec.apiKeyEnv ? process.env[spec.apiKeyEnv] : 'none';
    if (apiKey === undefined) throw new Error(`models.${id}.remote.apiKeyEnv: ${spec.apiKeyEnv} is not set`);
    this.client = new OpenAI({ baseURL: spec.url, apiKey, timeout: spec.timeoutMs, maxRetries: spec.retries });
  }

  /** Checks the endpoint answers and serves the model, before any work; a clear error otherwise. */
  async check(): Promise<void> {
    let ids: string[];
    try {
      ids = (await this.client.models.list()).data.map((m) => m.id);
    } catch (e) {
      throw new Error(`models.${this.id}: the endpoint ${this.spec.url} does not answer: ${(e as Error).message}`, {
        cause: e,
      });
    }
    if (!ids.includes(this.spec.model))
      throw new Error(
        `models.${this.id}.remote.model: ${this.spec.url} serves ${ids.join(', ') || 'no model'}, not '${this.spec.model}'`,
      );
  }

  async generate(prompt: number[], options: GenerateOptions): Promise<Generation> {
    // stop tokens as their characters, and the stop strings: the endpoint cuts the text before either
    const stop = [...(options.stop ?? []).map((t) => this.tokenizer.decode([t])), ...(options.stopStrings ?? [])];
    let r: OpenAI.Completion;
    try {
      r = await this.client.completions.create({
        model: this.spec.model,
        prompt: this.tokenizer.decode(prompt),
        max_tokens: options.maxNewTokens,
        temperature: options.temperature ?? 1,
        top_p: options.topP ?? 1,
        logprobs: 0,
        ...(stop.length ? { stop } : {}),
      });
    } catch (e) {
      // a 4xx other than 408/409/429 is this request's fault (the config's): not transient
      const status = (e as { status?: number }).status;
      if (status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status))
        throw new Error(`models.${this.id}: ${this.spec.url} refused the request: ${(e as Error).message}`, {
          cause: e,
        });
      throw new RemoteModelError(
        `models.${this.id}: ${this.spec.url} failed after ${this.spec.retries} retries: ${(e as Error).message}`,
        { cause: e },
      );
    }
    const c = r.choices[0];
    // characters the run's tokenizer lacks become '?': the text stays data for the role to parse
    const tokens = this.tokenizer.encode([...c.text].map((ch) => (this.tokenizer.knows(ch) ? ch : '?')).join(''));
    // the endpoint leaves out the stop it met and does not say which: EOS stands for it (the role's text is the same)
    const stopped = c.finish_reason === 'stop';
    if (stopped) tokens.push(this.tokenizer.eos);
    const given = c.logprobs?.token_logprobs;
    // the endpoint's tokens are ours only when it is a coevolve model; otherwise log-probs are unknown (0)
    const logProbs =
      given && given.length === tokens.length - (stopped ? 1 : 0)
        ? [...given.map((x) => x ?? 0), ...(stopped ? [0] : [])]
        : tokens.map(() => 0);
    const zeros = tokens.map(() => 0);
    return { tokens, logProbs, entropy: zeros, selfCertainty: zeros, stopped };
  }
}

/** A RemoteServer for each remote model of a config. */
export function remoteServers(
  c: { models: Record<string, { kind: string; remote?: RemoteSpec }> },
  tokenizer: CharTokenizer,
): Record<string, RemoteServer> {
  return Object.fromEntries(
    Object.entries(c.models)
      .filter(([, m]) => m.kind === 'remote')
      .map(([id, m]) => [id, new RemoteServer(id, m.remote!, tokenizer)]),
  );
}
