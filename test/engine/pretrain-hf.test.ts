import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pretrain, PretrainSchema } from '../../src/engine/pretrain.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { readTasksJsonl } from '../../src/tasks/jsonl.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { TEST_BACKEND } from '../needs.js';

// `coevolve pretrain` with `architecture:` makes a real-architecture base with a real
// tokenizer's files (here the byte-level BPE of hf-tiny.ts, so the test stays small; the
// shipped config uses Qwen3's), written as a Hugging Face directory.
describe('pretraining a new Hugging Face model', function () {
  this.timeout(120000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-prehf-'));
  const tokenizer = writeTinyHf(join(root, 'tok'));

  it('learns (loss falls), and writes a directory transformers reads, with the tokenizer and the held-out set', async () => {
    const out = join(root, 'base');
    const config = PretrainSchema.parse({
      name: 'tiny-qwen3', seed: 1, backend: TEST_BACKEND, task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } },
      corpus: { train: 60, heldOut: 20 }, architecture: { kind: 'Qwen3ForCausalLM', hidden: 32, layers: 1, heads: 2, kvHeads: 1, intermediate: 64, maxPositions: 192, tokenizer },
      train: { steps: 60, batchSize: 16, lr: 0.01 }, evalEvery: 30, maxNewTokens: 3, out,
    });
    const losses: number[] = [];
    const r = await pretrain(config, { log: (l) => { const m = /loss=([\d.]+)/.exec(l); if (m) losses.push(Number(m[1])); } });
    expect(r.steps).to.equal(60);
    expect(losses).to.have.length(2);
    expect(losses[1]).to.be.below(losses[0]);
    for (const f of ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'heldout.jsonl']) expect(existsSync(join(out, f)), f).to.equal(true);
    const raw = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(raw).to.include({ model_type: 'qwen3', vocab_size: 259, hidden_size: 32, num_key_value_heads: 1, tie_word_embeddings: true });
    expect(raw.eos_token_id).to.deep.equal([258, 256]); // the tokenizer directory's generation_config.json eos ids
    const model = HfCausalLM.load(out);
    expect(model.config.layers).to.equal(1);
    model.dispose();
    expect(readTasksJsonl(join(out, 'heldout.jsonl'), 'arithmetic')).to.have.length(20);
  });

  it('refuses a config with both model and architecture, and an out folder of other files', async () => {
    const both = PretrainSchema.safeParse({ name: 'x', task: { family: 'arithmetic' }, corpus: { train: 1, heldOut: 1 }, model: { dModel: 8, nHeads: 1, nLayers: 1, context: 8 }, architecture: { kind: 'Qwen3ForCausalLM', hidden: 8, layers: 1, heads: 1, kvHeads: 1, intermediate: 8, tokenizer }, train: { steps: 1, batchSize: 1, lr: 1 }, out: 'x' });
    expect(both.success).to.equal(false);
    expect(JSON.stringify(both.error?.issues)).to.match(/give model \(a TinyLM\) or architecture/);
    const foreign = writeTinyHf(join(root, 'foreign'));
    const config = PretrainSchema.parse({ name: 'x', backend: TEST_BACKEND, task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } }, corpus: { train: 60, heldOut: 20 }, architecture: { kind: 'Qwen3ForCausalLM', hidden: 8, layers: 1, heads: 1, kvHeads: 1, intermediate: 8, tokenizer }, train: { steps: 1, batchSize: 1, lr: 1 }, out: foreign });
    const err = await pretrain(config, { log: () => {} }).then(() => null, (e: Error) => e);
    expect(err?.message).to.match(/holds files that are not a base pretrain wrote; pass --overwrite/);
  });
});
