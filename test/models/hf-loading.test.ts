import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { baseSha256 } from '../../src/models/hf/checkpoint.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { readHeader, readSafetensors, writeSafetensors } from '../../src/models/hf/safetensors.js';
import { TEST_BACKEND } from '../needs.js';
import { fixture } from './hf-fixtures.js';

interface Raw {
  dtype: string;
  shape: number[];
  bytes: Uint8Array;
}

/** A safetensors file of raw tensors, laid out as the format says (header length, JSON header, data). */
function writeRaw(path: string, tensors: Record<string, Raw>): void {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    offset += t.bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(path, Buffer.concat([len, json, ...Object.values(tensors).map((t) => Buffer.from(t.bytes))]));
}

/** The upper half of each float32 (bfloat16 by truncation), and the float32 values that half stands for exactly. */
function bf16(data: Float32Array): { bytes: Uint8Array; exact: Float32Array } {
  const bits = new Uint32Array(Float32Array.from(data).buffer);
  const halves = new Uint16Array(bits.length);
  const exact = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    halves[i] = bits[i] >>> 16;
    exact[i] = (bits[i] >>> 16) << 16;
  }
  return { bytes: new Uint8Array(halves.buffer), exact: new Float32Array(exact.buffer) };
}

const f32 = (data: Float32Array) => new Uint8Array(Float32Array.from(data).buffer);

/** A copy of fixture `name` in a new folder, with config.json changed by `edit`. */
function copyFixture(name: string, edit: (c: Record<string, unknown>) => void = () => {}): string {
  const dir = mkdtempSync(join(tmpdir(), `coevolve-hf-${name}-`));
  const config = JSON.parse(readFileSync(join(fixture(name), 'config.json'), 'utf8')) as Record<string, unknown>;
  edit(config);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  copyFileSync(join(fixture(name), 'model.safetensors'), join(dir, 'model.safetensors'));
  return dir;
}

function logitsOf(model: HfCausalLM): Float32Array {
  const ids = [
    [3, 17, 42, 9, 100, 7],
    [5, 6, 7, 8, 9, 10],
  ];
  return tf.tidy(
    () =>
      model
        .logits(
          model.forward(
            tf.tensor2d(ids.flat(), [2, 6], 'int32'),
            new Int32Array(12).map((_, i) => i % 6),
            new Float32Array(12).fill(1),
          ).hidden,
        )
        .dataSync() as Float32Array,
  );
}

describe('Hugging Face weights: dtypes, shards and what is refused', function () {
  this.timeout(60000);
  const made: string[] = [];
  before(async () => {
    await initBackend(TEST_BACKEND);
  });
  after(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  it('reads F16 and BF16 values exactly, subnormals and signs included', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coevolve-dtypes-'));
    made.push(dir);
    // half: 1, -2, 65504 (the largest), 2^-24 (the smallest subnormal), 0x3555 = 0.333251953125
    const half = new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555]);
    // bfloat16: 1, -3, 2^-133 (a subnormal), 0x4049 = 3.140625
    const brain = new Uint16Array([0x3f80, 0xc040, 0x0001, 0x4049]);
    writeRaw(join(dir, 'x.safetensors'), {
      h: { dtype: 'F16', shape: [5], bytes: new Uint8Array(half.buffer) },
      b: { dtype: 'BF16', shape: [2, 2], bytes: new Uint8Array(brain.buffer) },
    });
    const t = readSafetensors(join(dir, 'x.safetensors')).tensors;
    expect(Array.from(t.h.data)).to.deep.equal([1, -2, 65504, 2 ** -24, 0.333251953125]);
    expect(Array.from(t.b.data)).to.deep.equal([1, -3, Math.fround(2 ** -133), 3.140625]);
    expect(t.b.shape).to.deep.equal([2, 2]);
  });

  it('loads a BF16 checkpoint split over two shards with an index as the same values in one F32 file', () => {
    const stored = readSafetensors(join(fixture('qwen3'), 'model.safetensors')).tensors;
    const names = Object.keys(stored);
    const sharded = copyFixture('qwen3'),
      plain = copyFixture('qwen3');
    made.push(sharded, plain);
    rmSync(join(sharded, 'model.safetensors'));
    const half = Math.ceil(names.length / 2);
    const shards = [names.slice(0, half), names.slice(half)];
    const weightMap: Record<string, string> = {};
    const exact: Record<string, { shape: number[]; data: Float32Array }> = {};
    shards.forEach((part, i) => {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      const raw: Record<string, Raw> = {};
      for (const n of part) {
        const b = bf16(stored[n].data as Float32Array);
        raw[n] = { dtype: 'BF16', shape: stored[n].shape, bytes: b.bytes };
        exact[n] = { shape: stored[n].shape, data: b.exact };
        weightMap[n] = file;
      }
      writeRaw(join(sharded, file), raw);
    });
    writeFileSync(
      join(sharded, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: {}, weight_map: weightMap }),
    );
    writeSafetensors(join(plain, 'model.safetensors'), exact);
    const a = HfCausalLM.load(sharded),
      b = HfCausalLM.load(plain),
      original = HfCausalLM.load(fixture('qwen3'));
    const la = logitsOf(a),
      lb = logitsOf(b),
      lo = logitsOf(original);
    expect(Array.from(la)).to.deep.equal(Array.from(lb));
    // and the rounding to bfloat16 did change them: the check compares something
    expect(Array.from(la)).to.not.deep.equal(Array.from(lo));
    [a, b, original].forEach((m) => m.dispose());
  });

  it('refuses an integer (quantized) weight, naming the weight and its dtype', () => {
    const dir = copyFixture('qwen2');
    made.push(dir);
    const stored = readSafetensors(join(fixture('qwen2'), 'model.safetensors')).tensors;
    const raw: Record<string, Raw> = Object.fromEntries(
      Object.entries(stored).map(([n, t]) => [n, { dtype: 'F32', shape: t.shape, bytes: f32(t.data as Float32Array) }]),
    );
    const name = 'model.layers.0.mlp.down_proj.weight';
    raw[name] = { dtype: 'I8', shape: stored[name].shape, bytes: new Uint8Array(stored[name].data.length) };
    writeRaw(join(dir, 'model.safetensors'), raw);
    expect(() => HfCausalLM.load(dir)).to.throw(
      new RegExp(`${name} is I8: integer \\(quantized\\) weights are not supported`),
    );
  });

  const refusals: [string, (c: Record<string, unknown>) => void, RegExp][] = [
    [
      'a sliding window',
      (c) => {
        c.use_sliding_window = true;
        c.sliding_window = 32;
      },
      /config\.json: use_sliding_window: a sliding window is not supported/,
    ],
    [
      'a layer that is not full attention',
      (c) => {
        c.layer_types = ['full_attention', 'sliding_attention'];
      },
      /config\.json: layer_types: only full_attention/,
    ],
    [
      'a quantization config',
      (c) => {
        c.quantization_config = { quant_method: 'gptq', bits: 4 };
      },
      /config\.json: quantization_config: quantized weights are not supported/,
    ],
    [
      'yarn rope scaling',
      (c) => {
        c.rope_scaling = { rope_type: 'yarn', factor: 4 };
      },
      /config\.json: rope_scaling\.rope_type: 'yarn' is not supported; supported: default, linear, llama3/,
    ],
    [
      'another architecture',
      (c) => {
        c.architectures = ['MistralForCausalLM'];
      },
      /config\.json: architectures: \["MistralForCausalLM"\] is not supported/,
    ],
    [
      'another activation',
      (c) => {
        c.hidden_act = 'gelu';
      },
      /config\.json: hidden_act: 'gelu' is not supported \(silu\)/,
    ],
    [
      'heads that do not group',
      (c) => {
        c.num_key_value_heads = 3;
      },
      /config\.json: num_key_value_heads: 3 does not divide num_attention_heads 4/,
    ],
  ];
  for (const [what, edit, message] of refusals) {
    it(`refuses ${what} before any weight is read, naming config.json and the field`, () => {
      const dir = copyFixture('qwen2', edit);
      made.push(dir);
      rmSync(join(dir, 'model.safetensors')); // refused from config.json alone: the weights are never reached
      expect(() => HfCausalLM.load(dir)).to.throw(message);
    });
  }

  // config.json against the weights' headers: refused with the tensor data cut off, so none was read
  const mismatches: [string, string, (c: Record<string, unknown>) => void, RegExp][] = [
    [
      'a layer count of 10^9 beside 2 layers',
      'qwen2',
      (c) => {
        c.num_hidden_layers = 1e9;
      },
      /config\.json: num_hidden_layers is 1000000000 but model\.safetensors holds layers 0\.\.1$/,
    ],
    [
      'fewer layers than the weights hold',
      'qwen2',
      (c) => {
        c.num_hidden_layers = 1;
      },
      /config\.json: num_hidden_layers is 1 but model\.safetensors holds layers 0\.\.1$/,
    ],
    [
      "GPT-2's n_layer past the weights",
      'gpt2',
      (c) => {
        c.n_layer = 3;
      },
      /config\.json: n_layer is 3 but model\.safetensors holds layers 0\.\.1$/,
    ],
    [
      'another hidden size',
      'qwen2',
      (c) => {
        c.hidden_size = 80;
      },
      /config\.json: hidden_size is 80 but model\.safetensors holds model\.embed_tokens\.weight as \[384,64\]$/,
    ],
    [
      "GPT-2's n_embd",
      'gpt2',
      (c) => {
        c.n_embd = 80;
      },
      /config\.json: n_embd is 80 but model\.safetensors holds transformer\.wte\.weight as \[384,64\]$/,
    ],
    [
      'another vocabulary',
      'qwen2',
      (c) => {
        c.vocab_size = 500;
      },
      /config\.json: vocab_size is 500 but model\.safetensors holds model\.embed_tokens\.weight as \[384,64\]$/,
    ],
    [
      'another intermediate size',
      'qwen2',
      (c) => {
        c.intermediate_size = 160;
      },
      /config\.json: intermediate_size is 160 but model\.safetensors holds model\.layers\.0\.mlp\.gate_proj\.weight as \[176,64\]$/,
    ],
    [
      'other key and value heads',
      'qwen2',
      (c) => {
        c.num_key_value_heads = 4;
      },
      /config\.json: num_key_value_heads \* head_dim is 64 but model\.safetensors holds model\.layers\.0\.self_attn\.k_proj\.weight as \[32,64\]$/,
    ],
    [
      'an untied head the weights lack',
      'qwen2',
      (c) => {
        c.tie_word_embeddings = false;
      },
      /config\.json: model\.safetensors holds no lm_head\.weight, which tie_word_embeddings: false implies$/,
    ],
    [
      'a size past 2^31 - 1',
      'qwen2',
      (c) => {
        c.num_hidden_layers = 2 ** 31;
      },
      /config\.json: num_hidden_layers: a positive integer up to 2\^31 - 1, got 2147483648$/,
    ],
  ];
  for (const [what, name, edit, message] of mismatches) {
    it(`refuses ${what} from the headers alone, naming config.json, the field and the file`, () => {
      const dir = copyFixture(name, edit);
      made.push(dir);
      const path = join(dir, 'model.safetensors');
      const bytes = readFileSync(path);
      writeFileSync(path, bytes.subarray(0, 8 + Number(bytes.readBigUInt64LE(0))));
      const before = tf.memory().numTensors;
      expect(() => HfCausalLM.load(dir)).to.throw(message);
      expect(tf.memory().numTensors).to.equal(before);
    });
  }

  it('refuses weights whose shapes do not match leaving no variables behind, and a directory without weights or with a missing shard', () => {
    const wrong = copyFixture('qwen2', (c) => {
      c.intermediate_size = 160;
    });
    made.push(wrong);
    const before = tf.memory().numTensors;
    expect(() => HfCausalLM.load(wrong)).to.throw(/intermediate_size is 160/);
    // the constructor, given tensors in memory, checks them all before making any
    const { tensors } = readSafetensors(join(fixture('qwen2'), 'model.safetensors'));
    const right = HfCausalLM.load(fixture('qwen2'));
    const config = { ...right.config, intermediate: 160 };
    right.dispose();
    expect(() => new HfCausalLM(config, tensors)).to.throw(
      /weight model\.layers\.0\.mlp\.gate_proj\.weight has shape \[176,64\], config\.json implies \[160,64\]/,
    );
    expect(tf.memory().numTensors).to.equal(before);
    const empty = copyFixture('qwen2');
    made.push(empty);
    rmSync(join(empty, 'model.safetensors'));
    expect(() => HfCausalLM.load(empty)).to.throw(/no model\.safetensors and no model\.safetensors\.index\.json/);
    writeFileSync(
      join(empty, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: { 'model.norm.weight': 'model-00001-of-00002.safetensors' } }),
    );
    expect(() => HfCausalLM.load(empty)).to.throw(
      /weight_map names model-00001-of-00002\.safetensors, which is missing/,
    );
  });

  describe('shard names from the index', () => {
    /** A folder holding `model/` (qwen2's config.json and an index mapping every weight to `shard`) and, beside it, the weights as `x.safetensors`. */
    function sharded(shard: (outer: string) => string): { model: string; outer: string } {
      const outer = mkdtempSync(join(tmpdir(), 'coevolve-shards-'));
      made.push(outer);
      const model = join(outer, 'model');
      mkdirSync(model);
      copyFileSync(join(fixture('qwen2'), 'config.json'), join(model, 'config.json'));
      copyFileSync(join(fixture('qwen2'), 'model.safetensors'), join(outer, 'x.safetensors'));
      const names = Object.keys(readHeader(join(outer, 'x.safetensors')).entries);
      const weightMap = Object.fromEntries(names.map((n) => [n, shard(outer)]));
      writeFileSync(join(model, 'model.safetensors.index.json'), JSON.stringify({ weight_map: weightMap }));
      return { model, outer };
    }

    // each of these names a real, valid weights file: only the check stops it being read
    it('refuses a name that climbs out of the model directory, when loading and when hashing the base', () => {
      const { model } = sharded(() => '../x.safetensors');
      const message =
        /model\.safetensors\.index\.json: weight_map names \.\.\/x\.safetensors, which leaves the model's directory$/;
      expect(() => HfCausalLM.load(model)).to.throw(message);
      expect(() => baseSha256(model)).to.throw(message);
    });

    it('refuses an absolute name', () => {
      const { model, outer } = sharded((o) => join(o, 'x.safetensors'));
      expect(() => HfCausalLM.load(model)).to.throw(
        `model.safetensors.index.json: weight_map names ${join(outer, 'x.safetensors')}, an absolute path`,
      );
    });

    it('refuses a link inside the directory that leads out of it', () => {
      const { model, outer } = sharded(() => 'model-00001-of-00001.safetensors');
      symlinkSync(join(outer, 'x.safetensors'), join(model, 'model-00001-of-00001.safetensors'));
      expect(() => HfCausalLM.load(model)).to.throw(
        /weight_map names model-00001-of-00001\.safetensors, which is a link to .*x\.safetensors, outside the model's directory$/,
      );
    });

    it("loads the hub cache's layout, a snapshot whose shards link to ../../blobs, and a shard in a subfolder", () => {
      const cache = mkdtempSync(join(tmpdir(), 'coevolve-hub-'));
      made.push(cache);
      const snapshot = join(cache, 'snapshots', 'abc123');
      mkdirSync(snapshot, { recursive: true });
      mkdirSync(join(cache, 'blobs'));
      copyFileSync(join(fixture('qwen2'), 'model.safetensors'), join(cache, 'blobs', 'f00d'));
      symlinkSync('../../blobs/f00d', join(snapshot, 'model-00001-of-00001.safetensors'));
      copyFileSync(join(fixture('qwen2'), 'config.json'), join(snapshot, 'config.json'));
      const names = Object.keys(readHeader(join(cache, 'blobs', 'f00d')).entries);
      const index = (shard: string) =>
        writeFileSync(
          join(snapshot, 'model.safetensors.index.json'),
          JSON.stringify({ weight_map: Object.fromEntries(names.map((n) => [n, shard])) }),
        );
      index('model-00001-of-00001.safetensors');
      HfCausalLM.load(snapshot).dispose();
      mkdirSync(join(snapshot, 'shards'));
      copyFileSync(join(fixture('qwen2'), 'model.safetensors'), join(snapshot, 'shards', 'a.safetensors'));
      index('shards/a.safetensors');
      HfCausalLM.load(snapshot).dispose();
    });
  });
});
