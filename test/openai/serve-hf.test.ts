import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { readSafetensors } from '../../src/models/hf/safetensors.js';
import { HfTokenizer } from '../../src/models/hf/tokenizer.js';
import { fixture, rows } from '../models/hf-fixtures.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { startServe } from './serve-process.js';

// A Hugging Face directory behind OpenAI's API: prompts as token ids (a fixture has no
// tokenizer) give transformers' greedy ids; a chat goes through the chat template.
describe('coevolve serve of Hugging Face directories', function () {
  this.timeout(60000);
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill('SIGTERM');
  });

  it("answers a prompt of token ids with transformers' greedy ids and their log-probs", async () => {
    const { url, child } = await startServe([], fixture('qwen2'));
    children.push(child);
    const ref = readSafetensors(`${fixture('qwen2')}/reference.safetensors`).tensors;
    const prompt = rows(ref.gen_prompt_ids)[0];
    const res = await fetch(`${url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'qwen2', prompt, max_tokens: 12, temperature: 0, logprobs: 2 }),
    });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as {
      choices: { logprobs: { tokens: string[]; token_logprobs: number[]; top_logprobs: Record<string, number>[] } }[];
    };
    const lp = body.choices[0].logprobs;
    expect(lp.tokens.map((t) => Number(t.slice(1, -1)))).to.deep.equal(rows(ref.gen_ids)[0].slice(prompt.length)); // no tokenizer: tokens shown as <id>
    expect(lp.token_logprobs.every((x) => x <= 0)).to.equal(true);
    expect(Object.keys(lp.top_logprobs[0])).to.have.length(2);
    const text = await fetch(`${url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'qwen2', prompt: 'hi', max_tokens: 2 }),
    });
    expect(text.status).to.equal(400);
    expect(((await text.json()) as { error: { message: string } }).error.message).to.match(
      /has no tokenizer\.json: give the prompt as token ids/,
    );
  });

  it('renders chats through the chat template', async () => {
    const dir = writeTinyHf(join(mkdtempSync(join(tmpdir(), 'coevolve-servehf-')), 'tiny'));
    const { url, child } = await startServe([], dir);
    children.push(child);
    const client = new OpenAI({ baseURL: url, apiKey: 'none', maxRetries: 0 });
    const r = await client.chat.completions.create({
      model: 'tiny',
      messages: [
        { role: 'system', content: 'Add.' },
        { role: 'user', content: '1+2=' },
      ],
      max_tokens: 6,
      temperature: 0,
    });
    const prompt = HfTokenizer.fromDirectory(dir).chatIds(
      [
        { role: 'system', content: 'Add.' },
        { role: 'user', content: '1+2=' },
      ],
      { addGenerationPrompt: true },
    );
    expect(r.usage!.prompt_tokens).to.equal(prompt.length); // the template's ids, system message included
    expect(typeof r.choices[0].message.content).to.equal('string');
  });
});
