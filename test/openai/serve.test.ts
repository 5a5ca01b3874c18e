import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { startServe } from './serve-process.js';
import OpenAI from 'openai';
import { initBackend } from '../../src/backend/index.js';
import { loadModel } from '../../src/models/store.js';
import { BatchingServer } from '../../src/serving/server.js';
import { RemoteServer } from '../../src/openai/remote.js';
import type { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';

describe('coevolve serve (OpenAI API)', function () {
  this.timeout(60000);
  let url: string;
  let child: ChildProcess;
  let client: OpenAI;
  let greedy: string;
  let tokenizer: CharTokenizer;

  before(async () => {
    ({ url, child } = await startServe(['--api-key', 'secret-key']));
    client = new OpenAI({ baseURL: url, apiKey: 'secret-key', maxRetries: 0 });
    // what the model itself answers greedily, through the same prompt encoding a solver gets
    await initBackend(TEST_BACKEND);
    const loaded = await loadModel('checkpoints/base-add2');
    if (loaded.kind !== 'tinylm' || !loaded.tokenizer) throw new Error('base-add2 is a tinylm with a tokenizer');
    const g = await new BatchingServer('ref', loaded.model).generate(loaded.tokenizer.prompt('12+34=', 'solver'), {
      maxNewTokens: 4,
      temperature: 0,
      eos: loaded.tokenizer.eos,
    });
    greedy = loaded.tokenizer.decode(g.stopped ? g.tokens.slice(0, -1) : g.tokens);
    tokenizer = loaded.tokenizer;
  });
  after(() => child?.kill('SIGTERM'));

  it("a remote role's stop tokens reach the endpoint as stop strings: its answer ends before them", async () => {
    // guards against: a role that stops at ',' on a local model running on past it on a remote one
    process.env.COEVOLVE_TEST_KEY = 'secret-key';
    const remote = new RemoteServer(
      'solver',
      { url, model: 'base-add2', apiKeyEnv: 'COEVOLVE_TEST_KEY', timeoutMs: 5000, retries: 0 },
      tokenizer,
    );
    expect(greedy.length, `greedy answer ${greedy}`).to.be.at.least(2);
    const g = await remote.generate(tokenizer.prompt('12+34=', 'solver'), {
      maxNewTokens: 4,
      temperature: 0,
      stop: tokenizer.encode(greedy[1]),
    });
    expect(g.stopped).to.equal(true);
    expect(tokenizer.decode(g.tokens)).to.equal(greedy.slice(0, greedy.indexOf(greedy[1])));
  });

  it("a stop string ends the choice at the token that completes it: the text before it, the token ids through it, vLLM's stop_reason", async () => {
    const stop = greedy[1];
    const r = (await client.completions.create({
      model: 'base-add2',
      prompt: '12+34=',
      max_tokens: 8,
      temperature: 0,
      stop: [stop],
      logprobs: 0,
      return_tokens_as_token_ids: true,
    } as OpenAI.CompletionCreateParamsNonStreaming)) as OpenAI.Completion;
    const c = r.choices[0] as OpenAI.CompletionChoice & { stop_reason?: unknown };
    expect(c.text).to.equal(greedy.slice(0, greedy.indexOf(stop)));
    expect(c.finish_reason).to.equal('stop');
    expect(c.stop_reason).to.equal(stop);
    const ids = (c.logprobs?.tokens ?? []).map((t) => Number(/^token_id:(\d+)$/.exec(t)![1]));
    expect(tokenizer.decode(ids)).to.equal(greedy.slice(0, greedy.indexOf(stop) + 1));
    expect(c.logprobs?.token_logprobs).to.have.length(ids.length);
    expect(r.usage?.completion_tokens).to.equal(ids.length); // generation ended there, not at max_tokens
  });

  it('lists its model', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).to.deep.equal(['base-add2']);
  });

  it("answers the openai client's completions with logprobs, as the model answers greedily", async () => {
    const r = await client.completions.create({
      model: 'base-add2',
      prompt: '12+34=',
      max_tokens: 4,
      temperature: 0,
      logprobs: 3,
    });
    const c = r.choices[0];
    expect(c.text).to.equal(greedy);
    expect(['stop', 'length']).to.include(c.finish_reason);
    expect(c.logprobs!.tokens!.join('')).to.equal(c.text);
    expect(c.logprobs!.token_logprobs).to.have.length(c.logprobs!.tokens!.length);
    for (const [i, alts] of c.logprobs!.top_logprobs!.entries()) {
      expect(Object.keys(alts)).to.have.length(3);
      // greedy: the chosen token is the likeliest, and its log-prob is the top one
      expect(alts[c.logprobs!.tokens![i]]).to.be.closeTo(Math.max(...Object.values(alts)), 1e-4);
      expect(c.logprobs!.token_logprobs![i]).to.be.closeTo(alts[c.logprobs!.tokens![i]], 1e-3);
    }
    expect(r.usage!.completion_tokens).to.equal(c.logprobs!.tokens!.length);
  });

  it('answers chat calls from the last user message, and streams the same text', async () => {
    const r = await client.chat.completions.create({
      model: 'base-add2',
      messages: [
        { role: 'system', content: 'ignored' },
        { role: 'user', content: '12+34=' },
      ],
      max_tokens: 4,
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
    });
    expect(r.choices[0].message.content).to.equal(greedy);
    expect(r.choices[0].logprobs!.content!.map((t) => t.token).join('')).to.equal(greedy);
    expect(r.choices[0].logprobs!.content![0].top_logprobs).to.have.length(2);
    const stream = await client.chat.completions.create({
      model: 'base-add2',
      messages: [{ role: 'user', content: '12+34=' }],
      max_tokens: 4,
      temperature: 0,
      stream: true,
    });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).to.equal(greedy);
    expect(finish).to.equal(r.choices[0].finish_reason);
    const sampled = await client.completions.create({
      model: 'base-add2',
      prompt: ['1+2=', '3+4='],
      max_tokens: 3,
      n: 3,
    });
    expect(sampled.choices).to.have.length(6);
  });

  it('refuses malformed and oversized requests with OpenAI-style 400s and 413s, before any work', async () => {
    const bad = async (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: InstanceType<typeof OpenAI.APIError>) => e,
      );
    const tooLong = await bad(client.completions.create({ model: 'base-add2', prompt: '12+34=', max_tokens: 10000 }));
    expect(tooLong?.status).to.equal(400);
    expect(tooLong?.param).to.equal('max_tokens');
    expect(tooLong?.message).to.match(/context is 32 tokens; prompt 0 takes 8, so max_tokens may be at most 24/);
    const hot = await bad(client.completions.create({ model: 'base-add2', prompt: '1+1=', temperature: 5 }));
    expect([hot?.status, hot?.param]).to.deep.equal([400, 'temperature']);
    const alien = await bad(client.completions.create({ model: 'base-add2', prompt: 'é' }));
    expect([alien?.status, alien?.param]).to.deep.equal([400, 'prompt']);
    const other = await bad(client.completions.create({ model: 'gpt-4', prompt: '1+1=' }));
    expect([other?.status, other?.code]).to.deep.equal([404, 'model_not_found']);
    const headers = { authorization: 'Bearer secret-key', 'content-type': 'application/json' };
    const notJson = await fetch(`${url}/completions`, { method: 'POST', headers, body: '{"model": ' });
    expect(notJson.status).to.equal(400);
    expect((await notJson.json()).error).to.include({ type: 'invalid_request_error', code: 'invalid_json' });
    const huge = await fetch(`${url}/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'base-add2', prompt: 'x'.repeat(2 << 20) }),
    });
    expect(huge.status).to.equal(413);
    expect((await huge.json()).error.code).to.equal('request_too_large');
  });

  it('requires the API key: without it, or with another, a 401', async () => {
    const none = await fetch(`${url}/models`);
    expect(none.status).to.equal(401);
    expect((await none.json()).error.code).to.equal('invalid_api_key');
    const wrong = await new OpenAI({ baseURL: url, apiKey: 'not-it', maxRetries: 0 }).models.list().then(
      () => null,
      (e: InstanceType<typeof OpenAI.APIError>) => e,
    );
    expect(wrong?.status).to.equal(401);
  });
});
