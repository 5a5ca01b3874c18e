/**
 * `coevolve serve CHECKPOINT`: a trained model behind OpenAI's HTTP API (`/v1/models`,
 * `/v1/completions`, `/v1/chat/completions`, with logprobs and streaming), every request's
 * generations batched through the model's batching server. Bound to 127.0.0.1 unless told
 * otherwise; with an API key, a request without `Authorization: Bearer <key>` gets a 401, as
 * vLLM's server does. Bad requests get OpenAI-style error bodies with 4xx codes, and oversized
 * ones (body, prompt, max_tokens) are refused before any work.
 */
import * as tf from '@tensorflow/tfjs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Generation } from '../models/generate.js';
import { completionText } from '../models/stop-strings.js';
import { BatchingServer } from '../serving/server.js';
import type { ServedModel } from './served.js';
import { bearerToken, keyMatches } from '../util/api-key.js';
import { ApiError, badRequest } from './errors.js';
import { chatRequest, completionRequest, type Request } from './protocol.js';

export interface ServeOptions {
  /** the model and how its prompts and text are made (served.ts) */
  served: ServedModel;
  /** the model id clients name (`/v1/models`) */
  name: string;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  /** require `Authorization: Bearer <apiKey>` */
  apiKey?: string;
  /** largest request body in bytes (default 1 MiB): larger ones get a 413 before they are read whole */
  maxBodyBytes?: number;
  seed?: number;
  /**
   * `POST /v1/load_lora_adapter` and `/v1/unload_lora_adapter` (vLLM's runtime LoRA routes,
   * on with VLLM_ALLOW_RUNTIME_LORA_UPDATING): PEFT directories on this machine applied to the
   * served base under a name clients give as `model`. Off, the routes are 404s, as vLLM's are.
   */
  runtimeLora?: boolean;
  /** where adapter loads and unloads are reported (default: nowhere) */
  log?: (line: string) => void;
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:8000/v1 */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** One generated choice, cut at a stop string. */
interface Choice {
  /** the sampled ids; with return_tokens_as_token_ids, the end token it stopped on too (as vLLM's token_ids) */
  tokens: number[];
  /** how many of `tokens` the text shows (the end token is not text) */
  shown: number;
  text: string;
  logProbs: number[];
  finish: 'stop' | 'length';
  /** vLLM's stop_reason */
  reason: string | number | null;
  top?: Array<Array<{ id: number; logprob: number }>>;
}

/** A model clients may name: the served one, or an adapter loaded on its base at run time. */
interface Named {
  served: ServedModel;
  batching: BatchingServer;
  /** the adapter's directory (a loaded adapter) */
  path?: string;
  /** requests generating on it now: an unloaded adapter is freed when the last ends */
  busy: number;
  unloaded?: boolean;
}

export async function serve(o: ServeOptions): Promise<RunningServer> {
  const named = new Map<string, Named>([
    [o.name, { served: o.served, batching: new BatchingServer(o.name, o.served.model, o.seed ?? 0), busy: 0 }],
  ]);
  const created = Math.floor(Date.now() / 1000);
  const maxBody = o.maxBodyBytes ?? 1 << 20;
  const routes = o.runtimeLora
    ? ', /v1/load_lora_adapter, /v1/unload_lora_adapter'
    : ' (start it with --enable-lora for /v1/load_lora_adapter)';
  let counter = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (o.apiKey !== undefined && !keyMatches(bearerToken(req.headers.authorization), o.apiKey))
      throw new ApiError(401, 'Incorrect API key provided: send Authorization: Bearer <key>', null, 'invalid_api_key');
    const path = (req.url ?? '').split('?')[0];
    if (path === '/v1/models') {
      if (req.method !== 'GET') throw new ApiError(405, `${req.method} is not allowed on ${path}; use GET`);
      return json(res, 200, {
        object: 'list',
        data: [...named].map(([id, n]) => ({
          id,
          object: 'model',
          created,
          owned_by: 'coevolve',
          ...(n.path ? { root: n.path, parent: o.name } : {}),
        })),
      });
    }
    const lora = o.runtimeLora && (path === '/v1/load_lora_adapter' || path === '/v1/unload_lora_adapter');
    const chat = path === '/v1/chat/completions';
    if (!lora && !chat && path !== '/v1/completions')
      throw new ApiError(
        404,
        `no route ${path}; this server has /v1/models, /v1/completions, /v1/chat/completions${routes}`,
        null,
        'not_found',
      );
    if (req.method !== 'POST') throw new ApiError(405, `${req.method} is not allowed on ${path}; use POST`);
    const body = await readBody(req, maxBody);
    if (lora) return adapterRoute(res, path === '/v1/load_lora_adapter', body);
    const r = chat ? chatRequest(body) : completionRequest(body);
    const n = named.get(r.model);
    if (!n)
      throw new ApiError(
        404,
        `The model '${r.model}' does not exist; this server serves ${[...named.keys()].map((k) => `'${k}'`).join(', ')}`,
        'model',
        'model_not_found',
      );
    const m = n.served;
    const prompts = r.messages ? [encode(r.messages, 0)] : r.prompts.map((p, i) => encode(p, i));
    n.busy++;
    let choices: Choice[];
    try {
      choices = await generate(n, prompts, r);
    } finally {
      if (--n.busy === 0 && n.unloaded) n.served.dispose?.();
    }
    const id = `${chat ? 'chatcmpl' : 'cmpl'}-${created}-${++counter}`;
    const usage = {
      prompt_tokens: prompts.reduce((a, p) => a + p.length, 0) * r.n,
      completion_tokens: choices.reduce((a, c) => a + c.tokens.length, 0),
    };
    if (r.stream) return streamChoices(res, id, m, r, choices, chat);
    const body200 = chat
      ? {
          id,
          object: 'chat.completion',
          created: now(),
          model: r.model,
          choices: choices.map((c, i) => ({
            index: i,
            message: { role: 'assistant', content: c.text },
            logprobs: r.logprobs === undefined ? null : { content: chatLogprobs(m, r, c) },
            finish_reason: c.finish,
            stop_reason: c.reason,
          })),
        }
      : {
          id,
          object: 'text_completion',
          created: now(),
          model: r.model,
          choices: choices.map((c, i) => ({
            index: i,
            text: c.text,
            logprobs: r.logprobs === undefined ? null : completionLogprobs(m, r, c),
            finish_reason: c.finish,
            stop_reason: c.reason,
          })),
        };
    return json(res, 200, {
      ...body200,
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });

    /** A prompt's token ids; text the model cannot read, or a prompt with no room for max_tokens, is a 400. */
    function encode(p: string | number[] | Array<{ role: string; content: string }>, i: number): number[] {
      let ids: number[];
      try {
        ids =
          typeof p === 'string' || typeof p[0] === 'number'
            ? m.prompt(p as string | number[])
            : m.chat(p as Array<{ role: string; content: string }>, r.chatKwargs);
      } catch (e) {
        throw badRequest(chat ? 'messages' : 'prompt', `prompt ${i}: ${(e as Error).message}`);
      }
      const context = m.context;
      if (ids.length + r.maxTokens > context) {
        throw badRequest(
          'max_tokens',
          `This model's context is ${context} tokens; prompt ${i} takes ${ids.length}, so max_tokens may be at most ${context - ids.length}, got ${r.maxTokens}`,
        );
      }
      return ids;
    }
  };

  /**
   * vLLM's runtime LoRA routes: load `{lora_name, lora_path}` (a PEFT directory on this
   * machine, applied to the served base) or unload `{lora_name}`; answered in plain text as
   * vLLM answers. A name already loaded, or not loaded, is a 400 or a 404 as there.
   */
  function adapterRoute(res: ServerResponse, load: boolean, body: Record<string, unknown>): void {
    const name = body.lora_name;
    if (typeof name !== 'string' || name === '') throw badRequest('lora_name', "'lora_name' is required: a string");
    if (!load) {
      const n = named.get(name);
      if (!n?.path) throw new ApiError(404, `The lora adapter '${name}' cannot be found`, 'lora_name', 'not_found');
      named.delete(name);
      n.unloaded = true;
      if (n.busy === 0) n.served.dispose?.();
      o.log?.(`unloaded adapter '${name}'`);
      return text(res, 200, `Success: LoRA adapter '${name}' removed successfully.`);
    }
    const path = body.lora_path;
    if (typeof path !== 'string' || path === '') throw badRequest('lora_path', "'lora_path' is required: a directory");
    if (named.has(name)) throw badRequest('lora_name', `The lora adapter '${name}' has already been loaded`);
    const base = named.get(o.name)!.served;
    if (!base.withAdapter)
      throw badRequest('lora_path', 'adapters apply to Hugging Face models; this server serves a TinyLM');
    let served: ServedModel;
    try {
      served = base.withAdapter(path);
    } catch (e) {
      throw badRequest('lora_path', `could not load the adapter: ${(e as Error).message}`);
    }
    named.set(name, { served, path, batching: new BatchingServer(name, served.model, o.seed ?? 0), busy: 0 });
    o.log?.(`loaded adapter '${name}' from ${path}`);
    return text(res, 200, `Success: LoRA adapter '${name}' added successfully.`);
  }

  async function generate(n: Named, prompts: number[][], r: Request): Promise<Choice[]> {
    const m = n.served;
    const stop = [...new Set([...m.stops, ...r.stopIds])];
    const pieces = r.stop.length ? m.pieces() : undefined;
    if (r.stop.length && !pieces) throw badRequest('stop', "'stop' needs the model's tokenizer to read the text");
    const options = {
      maxNewTokens: r.maxTokens,
      temperature: r.temperature,
      topP: r.topP,
      ...(r.topK > 0 ? { topK: r.topK } : {}),
      eos: m.eos,
      ...(stop.length ? { stop } : {}),
      // a choice ends once its text holds a stop string, rather than being cut after max_tokens
      ...(r.stop.length ? { stopStrings: r.stop, pieces } : {}),
    };
    const runs = prompts.flatMap((p) =>
      Array.from({ length: r.n }, () => ({ prompt: p, gen: n.batching.generate(p, options) })),
    );
    const gens = await Promise.all(runs.map((x) => x.gen));
    return gens.map((g, i) => choice(m, runs[i].prompt, g, r));
  }

  /**
   * A generation as a choice: its text without the end token and cut before a stop string
   * (OpenAI's and vLLM's default); with return_tokens_as_token_ids, every sampled token, the end
   * token or the one that completed the stop string included (as vLLM's token ids have them),
   * else the tokens the text shows (those wholly before a stop string).
   */
  function choice(m: ServedModel, prompt: number[], g: Generation, r: Request): Choice {
    const text = completionText((ids) => m.decode(ids), g);
    let shown = g.stopped && g.stopString === undefined ? g.tokens.length - 1 : g.tokens.length;
    if (g.stopString !== undefined) {
      // the tokens wholly before the stop string (a token may hold several characters)
      shown = 0;
      while (shown < g.tokens.length && m.decode(g.tokens.slice(0, shown + 1)).length <= text.length) shown++;
    }
    const tokens = r.tokenIds ? g.tokens : g.tokens.slice(0, shown);
    const last = g.tokens.at(-1)!;
    // vLLM's stop_reason: the stop string or stop_token_ids id that ended the choice; none for EOS and length
    const reason = g.stopString ?? (g.stopped && r.stopIds.includes(last) ? last : null);
    const c: Choice = {
      tokens,
      shown,
      text,
      logProbs: g.logProbs.slice(0, tokens.length),
      finish: g.stopped ? 'stop' : 'length',
      reason,
    };
    if (r.logprobs) c.top = topAlternatives(m, prompt, tokens, r.logprobs);
    return c;
  }

  /** The k likeliest tokens at each completion position (temperature 1), from one scoring pass. */
  function topAlternatives(
    m: ServedModel,
    prompt: number[],
    completion: number[],
    k: number,
  ): Array<Array<{ id: number; logprob: number }>> {
    if (completion.length === 0) return [];
    const { values, indices } = tf.tidy(() => {
      const top = tf.topk(m.positionLogProbs(prompt, completion), k);
      return { values: top.values.arraySync() as number[][], indices: top.indices.arraySync() as number[][] };
    });
    return values.map((row, t) => row.map((logprob, j) => ({ id: indices[t][j], logprob })));
  }

  /** A token as logprobs show it: its text, or with return_tokens_as_token_ids "token_id:<id>" (vLLM's form). */
  function label(m: ServedModel, r: Request, id: number): string {
    return r.tokenIds ? `token_id:${id}` : m.tokenText(id);
  }

  function completionLogprobs(m: ServedModel, r: Request, c: Choice) {
    const text_offset: number[] = [];
    let offset = 0;
    for (const [i, t] of c.tokens.entries()) {
      text_offset.push(offset);
      if (i < c.shown) offset += m.tokenText(t).length;
    }
    return {
      tokens: c.tokens.map((t) => label(m, r, t)),
      token_logprobs: c.logProbs,
      top_logprobs: c.top
        ? c.top.map((alts) => Object.fromEntries(alts.map((a) => [label(m, r, a.id), a.logprob])))
        : null,
      text_offset,
    };
  }

  function chatLogprobs(m: ServedModel, r: Request, c: Choice) {
    const bytes = (s: string) => [...Buffer.from(s, 'utf8')];
    return c.tokens.map((t, i) => ({
      token: label(m, r, t),
      logprob: c.logProbs[i],
      bytes: bytes(m.tokenText(t)),
      top_logprobs: (c.top?.[i] ?? []).map((a) => ({
        token: label(m, r, a.id),
        logprob: a.logprob,
        bytes: bytes(m.tokenText(a.id)),
      })),
    }));
  }

  /** Server-sent events: one chunk per token of each choice, then its finish, then [DONE]. Tokens are sent as each choice's batch ends (batched generation has no per-token hook yet). */
  function streamChoices(
    res: ServerResponse,
    id: string,
    m: ServedModel,
    r: Request,
    choices: Choice[],
    chat: boolean,
  ): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (choice: Record<string, unknown>) =>
      res.write(
        `data: ${JSON.stringify({ id, object: chat ? 'chat.completion.chunk' : 'text_completion', created: now(), model: r.model, choices: [choice] })}\n\n`,
      );
    choices.forEach((c, index) => {
      if (chat) send({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null });
      c.tokens.forEach((t, i) => {
        const one: Choice = {
          ...c,
          tokens: [t],
          shown: i < c.shown ? 1 : 0,
          logProbs: [c.logProbs[i]],
          top: c.top && [c.top[i]],
        };
        const piece = i < c.shown ? m.tokenText(t) : '';
        if (chat)
          send({
            index,
            delta: { content: piece },
            logprobs: r.logprobs === undefined ? null : { content: chatLogprobs(m, r, one) },
            finish_reason: null,
          });
        else
          send({
            index,
            text: piece,
            logprobs: r.logprobs === undefined ? null : completionLogprobs(m, r, one),
            finish_reason: null,
          });
      });
      send(
        chat
          ? { index, delta: {}, logprobs: null, finish_reason: c.finish }
          : { index, text: '', logprobs: null, finish_reason: c.finish },
      );
    });
    res.end('data: [DONE]\n\n');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      const err = e instanceof ApiError ? e : new ApiError(500, `internal error: ${(e as Error).message}`);
      if (res.headersSent) res.end();
      else json(res, err.status, err.body());
      // drain what the client is still sending (up to a bound) so it reads the 413 rather than a reset connection
      if (err.status === 413) drain(req, 8 * maxBody);
    });
  });
  server.listen(o.port ?? 8000, o.host ?? '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/v1`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const now = () => Math.floor(Date.now() / 1000);

/** Reads and drops the rest of a refused request body, closing the connection past `bound` bytes. */
function drain(req: IncomingMessage, bound: number): void {
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > bound) req.destroy();
  });
  req.resume();
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The JSON body, refused with a 413 past `limit` bytes (declared or read) and a 400 when not a JSON object. */
async function readBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit)
    throw new ApiError(
      413,
      `request body of ${declared} bytes exceeds the limit of ${limit}`,
      null,
      'request_too_large',
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new ApiError(413, `request body exceeds the limit of ${limit} bytes`, null, 'request_too_large');
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ApiError(400, 'We could not parse the JSON body of your request', null, 'invalid_json');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError(400, 'the request body must be a JSON object', null, 'invalid_json');
  return body as Record<string, unknown>;
}
