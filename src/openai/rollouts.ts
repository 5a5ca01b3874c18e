/**
 * Rollouts on an OpenAI-compatible inference server (`rollout: { engine: openai }`): vLLM,
 * SGLang or `coevolve serve --enable-lora` serves the run's frozen base, and after each update
 * the learner writes every model's LoRA adapter (PEFT files) under `adapterDir`, loads it under
 * a versioned name through the runtime LoRA route (`POST /load_lora_adapter` with
 * `{lora_name, lora_path}`, vLLM's and SGLang's) and unloads the version before. A role's
 * requests name its model's current adapter as `model`.
 *
 * Nothing is re-tokenized: prompts go to `/completions` as token ids, and the completion comes
 * back as token ids with their log-probs (`logprobs: 0`, `return_tokens_as_token_ids`, tokens as
 * "token_id:<id>"). The server's sampler is not the learner's kernels, so the learner
 * recomputes every turn's log-probs and weighs the difference with truncated importance
 * sampling (src/rl/stale.ts, verl's rollout_is). A server that cannot load adapters, returns
 * no token ids or has another tokenizer is refused at the first request, naming the route and
 * what was missing.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Generation } from '../models/generate.js';
import { completionText } from '../models/stop-strings.js';
import type { HfPolicy } from '../models/hf/policy.js';
import type { GenerateOptions, GenerateServer } from '../serving/server.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { groupBy } from '../util/group.js';
import { RemoteModelError } from './remote.js';

export interface InferenceSpec {
  url: string;
  apiKeyEnv?: string;
  /** where adapters are written; the server must read the same path */
  adapterDir: string;
  timeoutMs: number;
  retries: number;
}

/** coevolve serve's and OpenAI's limit on prompts in one completions request. */
const PROMPTS_PER_REQUEST = 64;

interface Pending {
  prompt: number[];
  options: GenerateOptions;
  resolve: (g: Generation) => void;
  reject: (e: unknown) => void;
}

interface CompletionChoice {
  index: number;
  text: string;
  finish_reason: string | null;
  /** vLLM's: the stop string (or stop token id) that ended the choice, null for EOS and length */
  stop_reason?: string | number | null;
  logprobs?: { tokens?: unknown[]; token_logprobs?: Array<number | null> } | null;
}

export class InferenceRollouts {
  /** model id -> the adapter name the server has loaded for it */
  private readonly loaded = new Map<string, string>();
  private readonly key: string | undefined;
  private readonly url: string;
  /** the first answer of each model is checked whole (token ids, tokenizer) */
  private readonly checked = new Set<string>();
  /** where the LoRA routes are: beside /completions (vLLM), or at the server's root (SGLang), found at the first load */
  private loraBase: string | undefined;
  /** the model ids the server listed at the start: adapters a crashed run of this name left loaded are among them */
  private listed: string[] = [];
  /** tokens the server generated since the last takeTokens() */
  private generated = 0;

  private constructor(
    private readonly spec: InferenceSpec,
    /** prefixes the adapter names, so runs sharing a server do not collide */
    private readonly run: string,
    private readonly tokenizers: Readonly<Record<string, Tokenizer>>,
  ) {
    this.url = spec.url.replace(/\/+$/, '');
    this.key = spec.apiKeyEnv ? process.env[spec.apiKeyEnv] : undefined;
    if (spec.apiKeyEnv && this.key === undefined) throw new Error(`rollout.apiKeyEnv: ${spec.apiKeyEnv} is not set`);
  }

  /** Checks the server answers `GET /models` before any work. */
  static async connect(
    spec: InferenceSpec,
    run: string,
    tokenizers: Readonly<Record<string, Tokenizer>>,
  ): Promise<InferenceRollouts> {
    const r = new InferenceRollouts(spec, run, tokenizers);
    const res = await r.request('GET', '/models').catch((e: Error) => {
      throw new Error(`rollout.url: GET ${r.url}/models: the inference server does not answer: ${e.message}`, {
        cause: e,
      });
    });
    if (res.status !== 200)
      throw new Error(`rollout.url: GET ${r.url}/models answered ${res.status}: ${res.text.slice(0, 200)}`);
    try {
      r.listed = ((JSON.parse(res.text) as { data?: { id?: unknown }[] }).data ?? []).map((m) => String(m.id));
    } catch {
      throw new Error(`rollout.url: GET ${r.url}/models did not answer a JSON model list: ${res.text.slice(0, 200)}`);
    }
    return r;
  }

  /**
   * Writes each model's adapter as version `version`, loads it, and unloads the version it
   * replaces (its files removed). Returns the seconds it took, from the first write to the
   * last answer: how long an update takes to reach the server.
   */
  async publish(models: Readonly<Record<string, { kind: string }>>, version: number): Promise<number> {
    const t0 = performance.now();
    for (const [id, model] of Object.entries(models)) {
      const policy = model as HfPolicy;
      if (model.kind !== 'hf' || !policy.adapter)
        throw new Error(`rollout: model ${id} has no adapter to load into the server (config check missed it)`);
      const name = `${this.run}-${id}-v${version}`;
      // a resumed run: the versions its first life loaded and never unloaded go first
      if (!this.loaded.has(id))
        for (const left of this.listed.filter((m) => m.startsWith(`${this.run}-${id}-v`) && /-v\d+$/.test(m)))
          await this.lora('unload', { lora_name: left });
      const dir = resolve(join(this.spec.adapterDir, name));
      mkdirSync(dir, { recursive: true });
      policy.adapter.save(dir, policy.base.dir ?? '');
      const res = await this.lora('load', { lora_name: name, lora_path: dir });
      if (res.status === 404)
        throw new Error(
          `rollout.url: POST ${this.url}/load_lora_adapter answered 404: this server cannot load LoRA adapters at run time. ` +
            'Start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, SGLang with --enable-lora, or coevolve serve with --enable-lora',
        );
      if (res.status !== 200)
        throw new Error(
          `rollout.url: POST ${this.loraBase}/load_lora_adapter (${name} from ${dir}) answered ${res.status}: ${res.text.slice(0, 300)}`,
        );
      const old = this.loaded.get(id);
      this.loaded.set(id, name);
      if (old !== undefined && old !== name) await this.unload(old);
    }
    return (performance.now() - t0) / 1000;
  }

  /** What agents of model `id` call to generate: requests made in one turn of the event loop go as one. */
  server(id: string): GenerateServer {
    let queue: Pending[] = [];
    return {
      generate: (prompt, options) =>
        new Promise<Generation>((resolve, reject) => {
          queue.push({ prompt, options, resolve, reject });
          if (queue.length > 1) return;
          setImmediate(() => {
            const batch = queue;
            queue = [];
            for (const group of groupBy(batch, (p) => JSON.stringify(p.options)).values())
              for (let i = 0; i < group.length; i += PROMPTS_PER_REQUEST)
                void this.complete(id, group.slice(i, i + PROMPTS_PER_REQUEST));
          });
        }),
    };
  }

  /** The tokens the server generated since the last call (the rollout throughput's numerator). */
  takeTokens(): number {
    const n = this.generated;
    this.generated = 0;
    return n;
  }

  /** Unloads every adapter this run loaded and removes their files. */
  async close(): Promise<void> {
    for (const name of this.loaded.values()) await this.unload(name).catch(() => undefined);
    this.loaded.clear();
  }

  private async unload(name: string): Promise<void> {
    const res = await this.lora('unload', { lora_name: name });
    if (res.status !== 200)
      throw new Error(
        `rollout.url: POST ${this.loraBase}/unload_lora_adapter (${name}) answered ${res.status}: ${res.text.slice(0, 300)}`,
      );
    rmSync(join(this.spec.adapterDir, name), { recursive: true, force: true });
  }

  private async complete(id: string, batch: Pending[]): Promise<void> {
    try {
      const gens = await this.completions(id, batch);
      batch.forEach((p, i) => p.resolve(gens[i]));
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  }

  private async completions(id: string, batch: Pending[]): Promise<Generation[]> {
    const model = this.loaded.get(id);
    if (model === undefined) throw new Error(`rollout: model ${id} has no adapter loaded into the server yet`);
    const tk = this.tokenizers[id];
    const o = batch[0].options;
    const ends = [...new Set([...(o.eos !== undefined ? [o.eos] : []), ...(o.stop ?? [])])];
    const route = `POST ${this.url}/completions`;
    const res = await this.post('/completions', {
      model,
      prompt: batch.map((p) => p.prompt),
      max_tokens: o.maxNewTokens,
      temperature: o.temperature ?? 1,
      top_p: o.topP ?? 1,
      ...(o.topK ? { top_k: o.topK } : {}),
      n: 1,
      logprobs: 0,
      return_tokens_as_token_ids: true,
      ...(ends.length ? { stop_token_ids: ends } : {}),
      // the text comes back cut before the stop string, the token ids whole (vLLM's default)
      ...(o.stopStrings?.length ? { stop: o.stopStrings } : {}),
    });
    if (res.status >= 500 || res.status === 429)
      throw new RemoteModelError(`rollout: ${route} answered ${res.status}: ${res.text.slice(0, 200)}`);
    if (res.status !== 200)
      throw new Error(`rollout: ${route} refused the request (${res.status}): ${res.text.slice(0, 300)}`);
    const body = JSON.parse(res.text) as { choices: CompletionChoice[]; usage?: { prompt_tokens?: number } };
    const first = !this.checked.has(id);
    const sent = batch.reduce((a, p) => a + p.prompt.length, 0);
    if (first && body.usage?.prompt_tokens !== undefined && body.usage.prompt_tokens !== sent)
      throw new Error(
        `rollout: ${route} counted ${body.usage.prompt_tokens} prompt tokens for the ${sent} token ids sent: it did not take the prompt as token ids`,
      );
    const choices = [...body.choices].sort((a, b) => a.index - b.index);
    if (choices.length !== batch.length)
      throw new Error(`rollout: ${route} answered ${choices.length} choices for ${batch.length} prompts`);
    const gens = choices.map((c) => this.generation(c, ends, o, route, tk, first));
    this.checked.add(id);
    this.generated += gens.reduce((a, g) => a + g.tokens.length, 0);
    return gens;
  }

  /** One choice as a Generation; `check` (the first answer) also checks its ids decode to its text. */
  private generation(
    c: CompletionChoice,
    ends: readonly number[],
    o: GenerateOptions,
    route: string,
    tk: Tokenizer,
    first: boolean,
  ): Generation {
    const given = c.logprobs?.tokens;
    const logProbs = c.logprobs?.token_logprobs;
    if (!given || !logProbs)
      throw new Error(
        `rollout: ${route} returned no logprobs: the server must honour logprobs (the sampled tokens' log-probs)`,
      );
    const tokens = given.map((t) => (typeof t === 'number' ? t : /^token_id:(\d+)$/.exec(String(t))?.[1]));
    if (tokens.some((t) => t === undefined))
      throw new Error(
        `rollout: ${route} returned no token ids (tokens such as ${JSON.stringify(given[0])}, not "token_id:<id>"): the server must honour return_tokens_as_token_ids (vLLM does)`,
      );
    const ids = tokens.map(Number);
    const lps = logProbs.map((x) => (typeof x === 'number' ? x : NaN));
    const stopped = c.finish_reason === 'stop';
    const stopString = stopped ? this.stopString(c, ids, ends, o, tk) : undefined;
    // a server that leaves out the end token it stopped on: the eos stands for it, its log-prob unknown (the learner's is used)
    if (stopped && stopString === undefined && !ends.includes(ids[ids.length - 1]) && o.eos !== undefined) {
      ids.push(o.eos);
      lps.push(NaN);
    }
    if (ids.length > o.maxNewTokens)
      throw new Error(`rollout: ${route} returned ${ids.length} tokens for max_tokens ${o.maxNewTokens}`);
    const g: Generation = { tokens: ids, logProbs: lps, entropy: [], selfCertainty: [], stopped };
    if (stopString !== undefined) g.stopString = stopString;
    if (first) {
      const check = tk;
      const outside = ids.find((t) => t >= check.size);
      const decoded = outside === undefined ? completionText((x) => check.decode(x), g) : undefined;
      // text cut inside a character decodes to U+FFFD on either side: only whole text is compared
      if (outside !== undefined || (decoded !== c.text && !c.text.includes('\uFFFD')))
        throw new Error(
          `rollout: ${route} returned token ids that do not round-trip through this run's tokenizer ` +
            (outside !== undefined
              ? `(id ${outside} is outside its ${check.size} ids)`
              : `(they decode to ${JSON.stringify(decoded)}, the server's text is ${JSON.stringify(c.text)})`) +
            ": the server has another tokenizer; serve the run's base",
        );
    }
    g.entropy = ids.map(() => 0);
    g.selfCertainty = ids.map(() => 0);
    return g;
  }

  /**
   * The stop string that ended a choice: vLLM's stop_reason, or, from a server that does not
   * say, the first of the request's stop strings in the text of a choice that did not end on an
   * end token.
   */
  private stopString(
    c: CompletionChoice,
    ids: readonly number[],
    ends: readonly number[],
    o: GenerateOptions,
    tk: Tokenizer,
  ): string | undefined {
    if (!o.stopStrings?.length) return undefined;
    if (typeof c.stop_reason === 'string') return c.stop_reason;
    if (ids.length === 0 || ends.includes(ids[ids.length - 1])) return undefined;
    const text = tk.decode(ids);
    const at = o.stopStrings.map((s) => ({ s, at: text.indexOf(s) })).filter((x) => x.at >= 0);
    return at.sort((a, b) => a.at - b.at)[0]?.s;
  }

  private post(path: string, body: unknown) {
    return this.request('POST', path, body);
  }

  /** A LoRA route: beside /completions as vLLM has it, else (a 404 there, the URL ending in /v1) at the root as SGLang has it. */
  private async lora(action: 'load' | 'unload', body: unknown): Promise<{ status: number; text: string }> {
    const route = `/${action}_lora_adapter`;
    if (this.loraBase !== undefined) return this.request('POST', route, body, this.loraBase);
    const res = await this.request('POST', route, body, this.url);
    const root = this.url.replace(/\/v1$/, '');
    if (res.status !== 404 || root === this.url) {
      this.loraBase = this.url;
      return res;
    }
    const there = await this.request('POST', route, body, root);
    if (there.status !== 404) this.loraBase = root;
    return there.status === 404 ? res : there;
  }

  /** One request with retries (connection errors, timeouts, 5xx, 429) and exponential backoff; the last failure in transit is a RemoteModelError. */
  private async request(
    method: string,
    path: string,
    body?: unknown,
    at = this.url,
  ): Promise<{ status: number; text: string }> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${at}${path}`, {
          method,
          headers: {
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(this.key ? { authorization: `Bearer ${this.key}` } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.spec.timeoutMs),
        });
        const text = await res.text();
        if ((res.status >= 500 || res.status === 429) && attempt < this.spec.retries) {
          await sleep(500 * 2 ** attempt);
          continue;
        }
        return { status: res.status, text };
      } catch (e) {
        if (attempt >= this.spec.retries)
          throw new RemoteModelError(
            `rollout: ${method} ${at}${path} failed after ${this.spec.retries} retries: ${(e as Error).message}`,
            { cause: e },
          );
        await sleep(500 * 2 ** attempt);
      }
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
