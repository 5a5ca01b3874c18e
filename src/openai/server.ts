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
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:8000/v1 */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** One generated choice, cut at a stop string. */
interface Choice {
  tokens: number[];
  text: string;
  logProbs: number[];
  finish: 'stop' | 'length';
  top?: Array<Array<{ token: string; logprob: number }>>;
}

export async function serve(o: ServeOptions): Promise<RunningServer> {
  const m = o.served;
  const batching = new BatchingServer(o.name, m.model, o.seed ?? 0);
  const created = Math.floor(Date.now() / 1000);
  const maxBody = o.maxBodyBytes ?? 1 << 20;
  let counter = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (o.apiKey !== undefined && !keyMatches(bearerToken(req.headers.authorization), o.apiKey))
      throw new ApiError(401, 'Incorrect API key provided: send Authorization: Bearer <key>', null, 'invalid_api_key');
    const path = (req.url ?? '').split('?')[0];
    if (path === '/v1/models') {
      if (req.method !== 'GET') throw new ApiError(405, `${req.method} is not allowed on ${path}; use GET`);
      return json(res, 200, { object: 'list', data: [{ id: o.name, object: 'model', created, owned_by: 'coevolve' }] });
    }
    const chat = path === '/v1/chat/completions';
    if (!chat && path !== '/v1/completions')
      throw new ApiError(
        404,
        `no route ${path}; this server has /v1/models, /v1/completions, /v1/chat/completions`,
        null,
        'not_found',
      );
    if (req.method !== 'POST') throw new ApiError(405, `${req.method} is not allowed on ${path}; use POST`);
    const body = await readBody(req, maxBody);
    const r = chat ? chatRequest(body) : completionRequest(body);
    if (r.model !== o.name)
      throw new ApiError(
        404,
        `The model '${r.model}' does not exist; this server serves '${o.name}'`,
        'model',
        'model_not_found',
      );
    const prompts = r.messages ? [encode(r.messages, 0)] : r.prompts.map((p, i) => encode(p, i));
    const choices = await generate(prompts, r);
    const id = `${chat ? 'chatcmpl' : 'cmpl'}-${created}-${++counter}`;
    const usage = {
      prompt_tokens: prompts.reduce((a, p) => a + p.length, 0) * r.n,
      completion_tokens: choices.reduce((a, c) => a + c.tokens.length, 0),
    };
    if (r.stream) return streamChoices(res, id, r, choices, chat);
    const body200 = chat
      ? {
          id,
          object: 'chat.completion',
          created: now(),
          model: o.name,
          choices: choices.map((c, i) => ({
            index: i,
            message: { role: 'assistant', content: c.text },
            logprobs: r.logprobs === undefined ? null : { content: chatLogprobs(c) },
            finish_reason: c.finish,
          })),
        }
      : {
          id,
          object: 'text_completion',
          created: now(),
          model: o.name,
          choices: choices.map((c, i) => ({
            index: i,
            text: c.text,
            logprobs: r.logprobs === undefined ? null : completionLogprobs(c),
            finish_reason: c.finish,
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
            : m.chat(p as Array<{ role: string; content: string }>);
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

  async function generate(prompts: number[][], r: Request): Promise<Choice[]> {
    const options = {
      maxNewTokens: r.maxTokens,
      temperature: r.temperature,
      topP: r.topP,
      eos: m.eos,
      ...(m.stops.length ? { stop: m.stops } : {}),
    };
    const runs = prompts.flatMap((p) =>
      Array.from({ length: r.n }, () => ({ prompt: p, gen: batching.generate(p, options) })),
    );
    const gens = await Promise.all(runs.map((x) => x.gen));
    return gens.map((g, i) => choice(runs[i].prompt, g, r));
  }

  function choice(prompt: number[], g: Generation, r: Request): Choice {
    let tokens = g.stopped ? g.tokens.slice(0, -1) : g.tokens;
    let finish: Choice['finish'] = g.stopped ? 'stop' : 'length';
    // cut at the first stop string, as OpenAI does (the stop string itself is not returned)
    let text = m.decode(tokens);
    const cut = Math.min(...r.stop.map((s) => text.indexOf(s)).filter((k) => k >= 0));
    if (Number.isFinite(cut)) {
      // the tokens wholly before the stop string, and the text up to it (a token may hold several characters)
      let k = 0;
      while (k < tokens.length && m.decode(tokens.slice(0, k + 1)).length <= cut) k++;
      tokens = tokens.slice(0, k);
      text = text.slice(0, cut);
      finish = 'stop';
    }
    const c: Choice = { tokens, text, logProbs: g.logProbs.slice(0, tokens.length), finish };
    if (r.logprobs) c.top = topAlternatives(prompt, tokens, r.logprobs);
    return c;
  }

  /** The k likeliest tokens at each completion position (temperature 1), from one scoring pass. */
  function topAlternatives(
    prompt: number[],
    completion: number[],
    k: number,
  ): Array<Array<{ token: string; logprob: number }>> {
    if (completion.length === 0) return [];
    const { values, indices } = tf.tidy(() => {
      const top = tf.topk(m.positionLogProbs(prompt, completion), k);
      return { values: top.values.arraySync() as number[][], indices: top.indices.arraySync() as number[][] };
    });
    return values.map((row, t) => row.map((logprob, j) => ({ token: m.tokenText(indices[t][j]), logprob })));
  }

  function tokenText(id: number): string {
    return m.tokenText(id);
  }

  function completionLogprobs(c: Choice) {
    const text_offset: number[] = [];
    let offset = 0;
    for (const t of c.tokens) {
      text_offset.push(offset);
      offset += tokenText(t).length;
    }
    return {
      tokens: c.tokens.map(tokenText),
      token_logprobs: c.logProbs,
      top_logprobs: c.top ? c.top.map((alts) => Object.fromEntries(alts.map((a) => [a.token, a.logprob]))) : null,
      text_offset,
    };
  }

  function chatLogprobs(c: Choice) {
    const bytes = (s: string) => [...Buffer.from(s, 'utf8')];
    return c.tokens.map((t, i) => ({
      token: tokenText(t),
      logprob: c.logProbs[i],
      bytes: bytes(tokenText(t)),
      top_logprobs: (c.top?.[i] ?? []).map((a) => ({ ...a, bytes: bytes(a.token) })),
    }));
  }

  /** Server-sent events: one chunk per token of each choice, then its finish, then [DONE]. Tokens are sent as each choice's batch ends (batched generation has no per-token hook yet). */
  function streamChoices(res: ServerResponse, id: string, r: Request, choices: Choice[], chat: boolean): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (choice: Record<string, unknown>) =>
      res.write(
        `data: ${JSON.stringify({ id, object: chat ? 'chat.completion.chunk' : 'text_completion', created: now(), model: o.name, choices: [choice] })}\n\n`,
      );
    choices.forEach((c, index) => {
      if (chat) send({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null });
      c.tokens.forEach((t, i) => {
        const one: Choice = { ...c, tokens: [t], logProbs: [c.logProbs[i]], top: c.top && [c.top[i]] };
        if (chat)
          send({
            index,
            delta: { content: tokenText(t) },
            logprobs: r.logprobs === undefined ? null : { content: chatLogprobs(one) },
            finish_reason: null,
          });
        else
          send({
            index,
            text: tokenText(t),
            logprobs: r.logprobs === undefined ? null : completionLogprobs(one),
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
