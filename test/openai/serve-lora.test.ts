import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { Rng } from '../../src/util/rng.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { startServe } from './serve-process.js';

type Completion = {
  choices: { text: string; finish_reason: string; logprobs: { tokens: string[]; token_logprobs: number[] } }[];
  usage: { prompt_tokens: number };
};

// vLLM's runtime LoRA routes and token-id extensions on `coevolve serve --enable-lora`.
describe('coevolve serve --enable-lora', function () {
  this.timeout(60000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-servelora-'));
  const dir = writeTinyHf(join(root, 'tiny'));
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill('SIGTERM');
  });
  const post = async (url: string, path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };

  /** An adapter whose B is not zero, so it changes the base's outputs. */
  function writeAdapter(to: string): LoraAdapter {
    const base = HfCausalLM.load(dir, { frozen: true });
    const adapter = new LoraAdapter(base.config, { r: 2, alpha: 4, targetModules: 'all-linear' }, 1);
    const rng = new Rng(5);
    for (const v of Object.values(adapter.b))
      v.assign(
        tf.tensor(
          Float32Array.from({ length: v.size }, () => 0.5 * rng.normal()),
          v.shape,
        ),
      );
    adapter.save(to, dir);
    return adapter;
  }

  it('loads a PEFT directory under a name, answers it as `model` with token ids and its log-probs, and unloads it', async () => {
    const adapterDir = join(root, 'adapter');
    const adapter = writeAdapter(adapterDir);
    const { url, child, log } = await startServe(['--enable-lora'], dir);
    children.push(child);
    expect((await post(url, '/load_lora_adapter', { lora_name: 'a1', lora_path: adapterDir })).status).to.equal(200);
    expect((await post(url, '/load_lora_adapter', { lora_name: 'a1', lora_path: adapterDir })).text).to.match(
      /already been loaded/,
    );
    const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string; parent?: string }[] };
    expect(models.data.map((m) => m.id)).to.deep.equal(['tiny', 'a1']);
    const prompt = [72, 105, 33, 257];
    const ask = (model: string) =>
      post(url, '/completions', {
        model,
        prompt: [prompt],
        max_tokens: 5,
        temperature: 1,
        logprobs: 0,
        return_tokens_as_token_ids: true,
      });
    const r = JSON.parse((await ask('a1')).text) as Completion;
    expect(r.usage.prompt_tokens).to.equal(prompt.length);
    const lp = r.choices[0].logprobs;
    const ids = lp.tokens.map((t) => Number(/^token_id:(\d+)$/.exec(t)![1]));
    // the log-probs are the adapted model's: scored here with the same adapter, they agree
    const local = new HfPolicy(HfCausalLM.load(dir, { frozen: true }), adapter);
    const scored = tf.tidy(() => local.score([{ prompt, completion: ids }], 1).logProbs.arraySync() as number[][])[0];
    for (const [t, x] of lp.token_logprobs.entries()) expect(x).to.be.closeTo(scored[t], 1e-4);
    const base = new HfPolicy(HfCausalLM.load(dir, { frozen: true }));
    const plain = tf.tidy(() => base.score([{ prompt, completion: ids }], 1).logProbs.arraySync() as number[][])[0];
    expect(Math.max(...plain.map((x, t) => Math.abs(x - scored[t]))), 'the adapter changes the model').to.be.above(
      1e-3,
    );
    expect((await post(url, '/unload_lora_adapter', { lora_name: 'a1' })).status).to.equal(200);
    expect((await ask('a1')).status).to.equal(404);
    expect((await post(url, '/unload_lora_adapter', { lora_name: 'a1' })).status).to.equal(404);
    expect(log()).to.match(/loaded adapter 'a1'[\s\S]*unloaded adapter 'a1'/);
  });

  it('returns the end token it stopped on with the ids, and its text without it', async () => {
    const { url, child } = await startServe(['--enable-lora'], dir);
    children.push(child);
    // a stop id every token matches: the first token sampled ends the completion
    const all = Array.from({ length: 259 }, (_, i) => i);
    const r = JSON.parse(
      (
        await post(url, '/completions', {
          model: 'tiny',
          prompt: [72, 105],
          max_tokens: 4,
          logprobs: 0,
          return_tokens_as_token_ids: true,
          stop_token_ids: all,
        })
      ).text,
    ) as Completion;
    expect(r.choices[0].finish_reason).to.equal('stop');
    expect(r.choices[0].logprobs.tokens).to.have.length(1);
    expect(r.choices[0].text).to.equal('');
  });

  it('is a 404 without --enable-lora, as vLLM without runtime updating', async () => {
    const { url, child } = await startServe([], dir);
    children.push(child);
    const r = await post(url, '/load_lora_adapter', { lora_name: 'a', lora_path: root });
    expect(r.status).to.equal(404);
    expect(r.text).to.match(/--enable-lora/);
  });

  it('renders chats with chat_template_kwargs', async () => {
    const kw = join(root, 'kw');
    writeTinyHf(kw);
    const cfgPath = join(kw, 'tokenizer_config.json');
    const cfg = JSON.parse(readFileSync(cfgPath, 'utf8')) as { chat_template: string };
    // Qwen3's switch: with enable_thinking false, an empty think block follows the generation prompt
    cfg.chat_template +=
      "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}";
    writeFileSync(cfgPath, JSON.stringify(cfg));
    const { url, child } = await startServe([], kw);
    children.push(child);
    const chat = async (extra: Record<string, unknown>) =>
      (
        JSON.parse(
          (
            await post(url, '/chat/completions', {
              model: 'kw',
              messages: [{ role: 'user', content: '1+2=' }],
              max_tokens: 1,
              ...extra,
            })
          ).text,
        ) as Completion
      ).usage.prompt_tokens;
    const plain = await chat({});
    expect(await chat({ chat_template_kwargs: { enable_thinking: false } })).to.equal(plain + 19);
    expect(await chat({ chat_template_kwargs: { enable_thinking: true } })).to.equal(plain);
    expect(
      (
        await post(url, '/chat/completions', {
          model: 'kw',
          messages: [{ role: 'user', content: 'x' }],
          chat_template_kwargs: 3,
        })
      ).status,
    ).to.equal(400);
  });
});
