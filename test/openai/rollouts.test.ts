import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExperimentInput } from '../../src/config/schema.js';
import { parseConfig } from '../../src/config/load.js';
import { runExperiment } from '../../src/engine/experiment.js';
import { loadHfPolicy } from '../../src/models/hf/checkpoint.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { hfSolverConfig } from '../engine/fixtures.js';
import { startServe } from './serve-process.js';

function config(root: string, base: string, url: string, over: Partial<ExperimentInput> = {}): ExperimentInput {
  return hfSolverConfig(root, base, {
    name: 'oa',
    iterations: 3,
    checkpointEvery: 3,
    trainer: { lr: 1e-2, entropyCoef: 0.1 }, // the entropy bonus moves the adapter whatever the rewards (a random base earns none)
    eval: { every: 3, samples: 1 },
    rollout: { engine: 'openai', url },
    ...over,
  });
}

/** A server that claims the OpenAI routes and answers completions with `choice` (a misconfigured or other server). */
async function fakeServer(
  choice: (prompt: number[], body: Record<string, unknown>) => unknown,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const send = (x: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(x));
      if (req.url === '/v1/models') return send({ object: 'list', data: [{ id: 'base' }] });
      if (req.url?.endsWith('_lora_adapter')) return res.writeHead(200).end('Success');
      const r = JSON.parse(body) as { prompt: number[][] };
      send({ choices: r.prompt.map((p, index) => ({ index, ...(choice(p, r) as object) })) });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

describe('rollout engine openai', function () {
  this.timeout(180000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-oaengine-'));
  const base = writeTinyHf(join(root, 'base'));
  const children: ChildProcess[] = [];
  const servers: Server[] = [];
  after(() => {
    for (const c of children) c.kill('SIGTERM');
    for (const s of servers) s.close();
  });

  it('trains an adapter against a real coevolve serve: each version loaded, the one before unloaded, log-probs recomputed', async () => {
    const { url, child, log } = await startServe(['--enable-lora'], base);
    children.push(child);
    const out = join(root, 'run');
    // an adapter a crashed run of this directory's name left loaded: unloaded before the first version
    const left = join(root, 'left');
    new LoraAdapter(HfCausalLM.load(base, { frozen: true }).config, {
      r: 2,
      alpha: 4,
      targetModules: 'all-linear',
    }).save(left, base);
    const loaded = await fetch(`${url}/load_lora_adapter`, {
      method: 'POST',
      body: JSON.stringify({ lora_name: 'run-main-v9', lora_path: left }),
    });
    expect(loaded.status).to.equal(200);
    const { metrics } = await runExperiment(config(root, base, url), { out, log: () => {} });
    // the server saw v0 (the start) to v3 loaded in order, each replaced one unloaded after its successor loaded, the last at the end
    const events = [...log().matchAll(/(loaded|unloaded) adapter '(run-main-v\d)'/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(events).to.deep.equal([
      'loaded run-main-v9',
      'unloaded run-main-v9',
      'loaded run-main-v0',
      'loaded run-main-v1',
      'unloaded run-main-v0',
      'loaded run-main-v2',
      'unloaded run-main-v1',
      'loaded run-main-v3',
      'unloaded run-main-v2',
      'unloaded run-main-v3',
    ]);
    expect(readdirSync(join(out, 'served-adapters')), 'unloaded adapters are removed').to.deep.equal([]);
    for (const it of [1, 2, 3]) {
      const m = metrics.find((r) => r.iteration === it)!;
      expect(m['turns/solver']).to.equal(16);
      expect(m['time/adapter_publish_s']).to.be.above(0);
      expect(m['time/rollout_tokens_per_s'], "the server's tokens count as this run's").to.be.above(0);
      // every token was corrected; the server runs the learner's kernels, so the two log-probs nearly agree
      expect(m['rollout_is/tokens']).to.be.above(0);
      expect(m['rollout_is/logprob_gap']).to.be.below(1e-3);
      expect(m['rollout_is/mean']).to.be.closeTo(1, 1e-3);
    }
    const { policy } = await loadHfPolicy(join(out, 'checkpoints', 'iter-000003', 'main'));
    const b = Object.values(policy.adapter!.b).map((v) => Math.max(...(v.dataSync() as Float32Array).map(Math.abs)));
    expect(Math.max(...b), 'the adapter trained (B starts at zero)').to.be.above(0);
    policy.dispose();
  });

  it('refuses a server that cannot load adapters, naming the route and the flags', async () => {
    const { url, child } = await startServe([], base);
    children.push(child);
    await expectFailure(
      url,
      /POST .*\/load_lora_adapter answered 404: this server cannot load LoRA adapters.*--enable-lora/,
    );
  });

  it('refuses a server that returns no token ids', async () => {
    const { url, server } = await fakeServer(() => ({
      text: 'AB',
      finish_reason: 'length',
      logprobs: { tokens: ['A', 'B'], token_logprobs: [-1, -1] },
    }));
    servers.push(server);
    await expectFailure(url, /POST .*\/completions returned no token ids.*return_tokens_as_token_ids/);
  });

  it('refuses a server whose token ids do not round-trip (another tokenizer)', async () => {
    const { url, server } = await fakeServer(() => ({
      text: 'xy',
      finish_reason: 'length',
      logprobs: { tokens: ['token_id:65', 'token_id:66'], token_logprobs: [-1, -1] },
    }));
    servers.push(server);
    await expectFailure(url, /POST .*\/completions returned token ids that do not round-trip.*decode to "AB".*"xy"/);
  });

  it("takes a server that leaves out the end token it stopped on: the eos stands for it, its log-prob the learner's", async () => {
    const { url, server } = await fakeServer(() => ({
      text: 'A',
      finish_reason: 'stop',
      logprobs: { tokens: ['token_id:65'], token_logprobs: [-1] },
    }));
    servers.push(server);
    const out = join(root, 'cut');
    const { metrics } = await runExperiment(config(root, base, url, { iterations: 1, checkpointEvery: 1 }), {
      out,
      log: () => {},
    });
    const m = metrics.find((r) => r.iteration === 1)!;
    expect(m['turns/solver']).to.equal(16);
    expect(m['rollout_is/tokens']).to.equal(32); // 'A' and the eos, each turn
  });

  it("sends the arena's stop strings and trains on vLLM's token ids through the one that completed the stop string", async () => {
    const asked: unknown[] = [];
    const { url, server } = await fakeServer((_, body) => {
      asked.push(body.stop);
      // vLLM's answer: the text cut before the stop string, the token ids ('A', 'B') whole, stop_reason the string
      return {
        text: 'A',
        finish_reason: 'stop',
        stop_reason: 'B',
        logprobs: { tokens: ['token_id:65', 'token_id:66'], token_logprobs: [-1, -1] },
      };
    });
    servers.push(server);
    const c = config(root, base, url, { iterations: 1, checkpointEvery: 1 });
    const { metrics } = await runExperiment(
      { ...c, arena: { ...c.arena, stop: ['B'] } },
      {
        out: join(root, 'stop'),
        log: () => {},
      },
    );
    expect(asked.length).to.be.above(0);
    expect(asked.every((s) => JSON.stringify(s) === '["B"]')).to.equal(true);
    const m = metrics.find((r) => r.iteration === 1)!;
    expect(m['turns/solver']).to.equal(16);
    expect(m['rollout_is/tokens']).to.equal(32); // 'A' and 'B' each turn, no eos put in for the stop
  });

  it('refuses, at the config check, full fine-tuning and models the server cannot serve', () => {
    const c = config(root, base, 'http://127.0.0.1:1/v1');
    expect(() => parseConfig({ ...c, models: { main: { kind: 'hf', path: base } } })).to.throw(
      /models\.main\.lora.*fully fine-tuned: train an adapter/,
    );
    expect(() => parseConfig({ ...c, models: { main: { kind: 'tinylm' } } })).to.throw(
      /models\.main\.kind.*engine openai serves a Hugging Face base with adapters/,
    );
    expect(() => parseConfig({ ...c, rollout: { engine: 'openai' } })).to.throw(
      /rollout\.url.*required for engine 'openai'/,
    );
    // roles with adapters of their own on a base without lora: fine
    expect(() =>
      parseConfig({
        ...c,
        models: { main: { kind: 'hf', path: base } },
        roles: { solver: { kind: 'solver', model: 'main', adapter: 'solver' } },
      }),
    ).not.to.throw();
  });

  async function expectFailure(url: string, pattern: RegExp): Promise<void> {
    const out = join(root, `fail-${Math.random().toString(36).slice(2)}`);
    let error: Error | undefined;
    await runExperiment(config(root, base, url, { rollout: { engine: 'openai', url, retries: 0 } } as never), {
      out,
      log: () => {},
    }).catch((e: Error) => (error = e));
    expect(error, 'the run fails').to.be.instanceOf(Error);
    expect(error!.message).to.match(pattern);
    expect(existsSync(join(out, 'checkpoints', 'iter-000001')), 'at the first request, before any update').to.equal(
      false,
    );
  }
});
