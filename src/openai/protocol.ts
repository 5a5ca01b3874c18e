/**
 * The OpenAI request fields `coevolve serve` reads, checked before any work: a wrong type,
 * a value out of range or a field it cannot honour is a 400 naming the field.
 */
import { badRequest } from './errors.js';

/** A request as the server runs it, whichever endpoint it came by. */
export interface Request {
  model: string;
  /** the prompts, as text or token ids, one choice set each (completions) */
  prompts: Array<string | number[]>;
  /** the conversation (chat completions), rendered by the served model */
  messages?: Array<{ role: string; content: string }>;
  maxTokens: number;
  temperature: number;
  topP: number;
  n: number;
  stream: boolean;
  /** top alternatives per token to return; undefined returns no logprobs */
  logprobs?: number;
  stop: string[];
  /** vLLM's extensions: top_k (0 or -1: off), stop_token_ids, return_tokens_as_token_ids (logprobs' tokens as "token_id:<id>") */
  topK: number;
  stopIds: number[];
  tokenIds: boolean;
  /** vLLM's chat_template_kwargs: extra variables for the chat template (e.g. enable_thinking) */
  chatKwargs?: Record<string, unknown>;
}

type Body = Record<string, unknown>;

// Fields a client may send that change nothing here (user is metadata; seed: sampling is seeded per server)
const IGNORED = new Set(['user', 'seed', 'stream_options', 'metadata', 'store', 'service_tier']);

function num(body: Body, key: string, dflt: number, ok: (v: number) => boolean, range: string): number {
  const v = body[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v))
    throw badRequest(key, `'${key}' must be ${range}, got ${JSON.stringify(v)}`);
  return v;
}

function stops(body: Body): string[] {
  const s = body.stop;
  if (s === undefined || s === null) return [];
  const list = typeof s === 'string' ? [s] : s;
  if (!Array.isArray(list) || list.length > 4 || !list.every((x) => typeof x === 'string' && x !== ''))
    throw badRequest('stop', "'stop' must be a non-empty string or a list of up to 4");
  return list as string[];
}

/** vLLM's sampling extensions, accepted on both endpoints. */
const EXTENSIONS = ['top_k', 'stop_token_ids', 'return_tokens_as_token_ids'];

function stopIds(body: Body): number[] {
  const s = body.stop_token_ids;
  if (s === undefined || s === null) return [];
  if (!Array.isArray(s) || !s.every((x) => Number.isInteger(x) && x >= 0))
    throw badRequest('stop_token_ids', "'stop_token_ids' must be a list of token ids");
  return s as number[];
}

function common(body: Body, own: readonly string[], maxTokensKey: string): Omit<Request, 'prompts' | 'logprobs'> {
  const known = [...own, ...EXTENSIONS];
  for (const k of Object.keys(body))
    if (!known.includes(k) && !IGNORED.has(k))
      throw badRequest(k, `'${k}' is not supported by coevolve serve; supported: ${known.join(', ')}`);
  if (typeof body.model !== 'string' || body.model === '')
    throw badRequest('model', "'model' is required: a string (see /v1/models)");
  if (body.stream !== undefined && typeof body.stream !== 'boolean')
    throw badRequest('stream', "'stream' must be a boolean");
  return {
    model: body.model,
    maxTokens: num(body, maxTokensKey, 16, (v) => Number.isInteger(v) && v >= 1, 'a positive integer'),
    temperature: num(body, 'temperature', 1, (v) => v >= 0 && v <= 2, 'a number from 0 to 2'),
    topP: num(body, 'top_p', 1, (v) => v > 0 && v <= 1, 'a number in (0, 1]'),
    n: num(body, 'n', 1, (v) => Number.isInteger(v) && v >= 1 && v <= 16, 'an integer from 1 to 16'),
    stream: body.stream === true,
    stop: stops(body),
    topK: num(body, 'top_k', 0, (v) => Number.isInteger(v) && v >= -1, 'an integer, -1 or 0 for none'),
    stopIds: stopIds(body),
    tokenIds: flag(body, 'return_tokens_as_token_ids'),
  };
}

function flag(body: Body, key: string): boolean {
  const v = body[key];
  if (v !== undefined && v !== null && typeof v !== 'boolean') throw badRequest(key, `'${key}' must be a boolean`);
  return v === true;
}

/** `POST /v1/completions`: prompt (a string, a list of token ids, or a list of either, as OpenAI's API takes), logprobs (top alternatives, 0 to 5). */
export function completionRequest(body: Body): Request {
  const c = common(
    body,
    ['model', 'prompt', 'max_tokens', 'temperature', 'top_p', 'n', 'stream', 'logprobs', 'stop', 'echo', 'best_of'],
    'max_tokens',
  );
  if (body.echo === true) throw badRequest('echo', "'echo' is not supported by coevolve serve");
  if (body.best_of !== undefined && body.best_of !== null && body.best_of !== 1)
    throw badRequest('best_of', "'best_of' other than 1 is not supported by coevolve serve");
  const p = body.prompt;
  const isIds = (x: unknown) => Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t) && t >= 0);
  const prompts = typeof p === 'string' || isIds(p) ? [p] : p;
  if (
    !Array.isArray(prompts) ||
    prompts.length === 0 ||
    prompts.length > 64 ||
    !prompts.every((x) => (typeof x === 'string' && x !== '') || isIds(x))
  ) {
    throw badRequest(
      'prompt',
      "'prompt' must be a non-empty string, a list of token ids, or a list of 1 to 64 of either",
    );
  }
  const logprobs =
    body.logprobs === undefined || body.logprobs === null
      ? undefined
      : num(body, 'logprobs', 0, (v) => Number.isInteger(v) && v >= 0 && v <= 5, 'an integer from 0 to 5');
  return { ...c, prompts: prompts as Array<string | number[]>, logprobs };
}

/**
 * `POST /v1/chat/completions`: the messages, rendered by the model's chat template with
 * chat_template_kwargs as extra variables, as vLLM does (a TinyLM's prompt is the last user
 * message); logprobs and top_logprobs (0 to 20).
 */
export function chatRequest(body: Body): Request {
  const c = common(
    body,
    [
      'model',
      'messages',
      'max_tokens',
      'max_completion_tokens',
      'temperature',
      'top_p',
      'n',
      'stream',
      'logprobs',
      'top_logprobs',
      'stop',
      'chat_template_kwargs',
    ],
    body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens',
  );
  const m = body.messages;
  if (!Array.isArray(m) || m.length === 0)
    throw badRequest('messages', "'messages' must be a non-empty list of {role, content}");
  for (const [i, x] of m.entries()) {
    const ok =
      typeof x === 'object' &&
      x !== null &&
      typeof (x as Body).role === 'string' &&
      typeof (x as Body).content === 'string';
    if (!ok) throw badRequest(`messages[${i}]`, `'messages[${i}]' must be {role, content} with string content`);
  }
  const user = [...(m as Array<{ role: string; content: string }>)].reverse().find((x) => x.role === 'user');
  if (!user || user.content === '')
    throw badRequest('messages', "'messages' needs a user message with content: it is the prompt");
  if (body.logprobs !== undefined && body.logprobs !== null && typeof body.logprobs !== 'boolean')
    throw badRequest('logprobs', "'logprobs' must be a boolean");
  const top = num(body, 'top_logprobs', 0, (v) => Number.isInteger(v) && v >= 0 && v <= 20, 'an integer from 0 to 20');
  if (body.top_logprobs !== undefined && body.logprobs !== true)
    throw badRequest('top_logprobs', "'top_logprobs' needs 'logprobs': true");
  const kw = body.chat_template_kwargs;
  if (kw !== undefined && kw !== null && (typeof kw !== 'object' || Array.isArray(kw)))
    throw badRequest('chat_template_kwargs', "'chat_template_kwargs' must be an object of template variables");
  return {
    ...c,
    prompts: [],
    ...(kw ? { chatKwargs: kw as Record<string, unknown> } : {}),
    messages: m as Array<{ role: string; content: string }>,
    logprobs: body.logprobs === true ? top : undefined,
  };
}
