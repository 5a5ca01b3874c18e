import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { LoraAdapter, targetModules } from '../../src/models/hf/lora.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { readSafetensors, writeSafetensors, type StoredTensor } from '../../src/models/hf/safetensors.js';
import { TEST_BACKEND } from '../needs.js';
import { FIXTURES, fixture, maxDiff } from './hf-fixtures.js';

/** The fixture's rows as scoring inputs: each row's first token is the prompt, the rest its completion. */
function inputsOf(ids: StoredTensor) {
  const [B, T] = ids.shape;
  const all = Array.from(ids.data);
  return Array.from({ length: B }, (_, b) => ({
    prompt: all.slice(b * T, b * T + 1),
    completion: all.slice(b * T + 1, (b + 1) * T),
  }));
}

const meanLoss = (m: HfCausalLM, inputs: ReturnType<typeof inputsOf>, a?: LoraAdapter) => {
  const s = m.score(inputs, 1, a);
  return s.logProbs.sum().neg().div(s.mask.sum()) as tf.Scalar;
};

// PEFT wrote each adapter and what the model computes with it (test/fixtures/hf/README.md).
describe('LoRA adapters against PEFT', function () {
  this.timeout(60000);
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  for (const name of FIXTURES)
    for (const host of [false, true]) {
      it(`${name}: PEFT's logits, loss and LoRA gradients; the base frozen${host ? ', its matrices outside the heap' : ''}`, () => {
        const model = HfCausalLM.load(fixture(name), { frozen: host, host });
        expect(model.frozen).to.equal(host);
        const ref = readSafetensors(`${fixture(name)}/reference.safetensors`).tensors;
        const adapter = LoraAdapter.load(`${fixture(name)}/lora`, model.config);
        const [B, T] = ref.ids.shape;
        const logits = tf.tidy(() =>
          model
            .logits(
              model.forward(
                tf.tensor2d(Int32Array.from(ref.ids.data), [B, T], 'int32'),
                new Int32Array(B * T).map((_, i) => i % T),
                new Float32Array(B * T).fill(1),
                undefined,
                adapter,
              ).hidden,
            )
            .dataSync(),
        );
        expect(maxDiff(logits, ref.lora_logits.data)).to.be.below(1e-4);
        const policy = new HfPolicy(model, adapter);
        expect(policy.variables()).to.have.length(2 * Object.keys(adapter.a).length);
        const { value, grads } = tf.variableGrads(
          () => meanLoss(model, inputsOf(ref.ids), adapter),
          policy.variables(),
        );
        expect(value.dataSync()[0]).to.be.closeTo(ref.lora_loss.data[0], 1e-5);
        for (const [module, v] of [
          ...Object.entries(adapter.a).map(([m, v]) => [`${m}.lora_A`, v] as const),
          ...Object.entries(adapter.b).map(([m, v]) => [`${m}.lora_B`, v] as const),
        ]) {
          const theirs = ref[`lora_grad.base_model.model.${module}.default.weight`].data;
          const mine = grads[v.name].transpose().dataSync();
          let diff = 0,
            norm = 0;
          for (let i = 0; i < theirs.length; i++) {
            diff += (mine[i] - theirs[i]) ** 2;
            norm += theirs[i] ** 2;
          }
          expect(Math.sqrt(diff / norm), module).to.be.below(1e-4);
        }
        tf.dispose([value, ...Object.values(grads)]);
        adapter.dispose();
        model.dispose();
      });
    }

  for (const name of FIXTURES) {
    it(`${name}: an adapter saved here has the layout and config fields PEFT wrote`, () => {
      const model = HfCausalLM.load(fixture(name));
      const adapter = LoraAdapter.load(`${fixture(name)}/lora`, model.config);
      const dir = join(mkdtempSync(join(tmpdir(), 'coevolve-peft-')), 'adapter');
      adapter.save(dir, name);
      const layout = (path: string) =>
        Object.fromEntries(Object.entries(readSafetensors(path).tensors).map(([k, t]) => [k, [t.dtype, t.shape]]));
      expect(layout(join(dir, 'adapter_model.safetensors'))).to.deep.equal(
        layout(`${fixture(name)}/lora/adapter_model.safetensors`),
      );
      const mine = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
      const peft = JSON.parse(readFileSync(`${fixture(name)}/lora/adapter_config.json`, 'utf8'));
      for (const k of [
        'peft_type',
        'task_type',
        'r',
        'lora_alpha',
        'lora_dropout',
        'bias',
        'fan_in_fan_out',
        'use_rslora',
        'use_dora',
        'modules_to_save',
        'base_model_name_or_path',
      ])
        expect(mine[k], k).to.deep.equal(peft[k]);
      expect([...mine.target_modules].sort()).to.deep.equal([...peft.target_modules].sort());
      // and the saved values are the ones loaded: A and B bit for bit
      const a = readSafetensors(join(dir, 'adapter_model.safetensors')).tensors,
        b = readSafetensors(`${fixture(name)}/lora/adapter_model.safetensors`).tensors;
      for (const k of Object.keys(b)) expect(maxDiff(a[k].data, b[k].data), k).to.equal(0);
      adapter.dispose();
      model.dispose();
    });
  }

  it('a new adapter changes nothing (B is zero); saved as PEFT saves it, it loads back the same', () => {
    const model = HfCausalLM.load(fixture('qwen3'));
    const inputs = inputsOf(readSafetensors(`${fixture('qwen3')}/reference.safetensors`).tensors.ids);
    const fresh = new LoraAdapter(model.config, { r: 2, alpha: 4, targetModules: 'all-linear' }, 7);
    expect(Object.keys(fresh.a)).to.have.length(14); // q, k, v, o, gate, up, down in two layers; never the head
    expect(tf.tidy(() => meanLoss(model, inputs, fresh).dataSync()[0])).to.equal(
      tf.tidy(() => meanLoss(model, inputs).dataSync()[0]),
    );
    // give B values, save, load: the same loss, and PEFT's file layout
    for (const b of Object.values(fresh.b)) b.assign(tf.randomNormal(b.shape, 0, 0.1, 'float32', 3));
    const dir = join(mkdtempSync(join(tmpdir(), 'coevolve-lora-')), 'adapter');
    fresh.save(dir, 'qwen3');
    const config = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
    expect(config).to.include({ peft_type: 'LORA', r: 2, lora_alpha: 4, bias: 'none', use_rslora: false });
    const keys = Object.keys(readSafetensors(join(dir, 'adapter_model.safetensors')).tensors);
    expect(keys).to.include('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    const back = LoraAdapter.load(dir, model.config);
    expect(tf.tidy(() => meanLoss(model, inputs, back).dataSync()[0])).to.equal(
      tf.tidy(() => meanLoss(model, inputs, fresh).dataSync()[0]),
    );
    expect(back.scaling).to.equal(2);
    tf.dispose([fresh.variables(), back.variables()]);
    model.dispose();
  });

  it('targets as PEFT matches them: suffixes, a whole-name regex, all-linear; rsLoRA scales by alpha / sqrt(r)', () => {
    const config = HfCausalLM.load(fixture('llama-tied'));
    const names = (t: string[] | string) => targetModules(config.config, t).map((m) => m.name);
    expect(names(['q_proj', 'v_proj'])).to.deep.equal([
      'model.layers.0.self_attn.q_proj',
      'model.layers.0.self_attn.v_proj',
      'model.layers.1.self_attn.q_proj',
      'model.layers.1.self_attn.v_proj',
    ]);
    expect(names('.*\\.1\\.mlp\\..*')).to.deep.equal([
      'model.layers.1.mlp.gate_proj',
      'model.layers.1.mlp.up_proj',
      'model.layers.1.mlp.down_proj',
    ]);
    expect(names('all-linear')).to.not.include('lm_head');
    expect(() => names(['qkv'])).to.throw(/target_modules: 'qkv' matches no projection of this LlamaForCausalLM/);
    const rs = new LoraAdapter(config.config, { r: 4, alpha: 8, rslora: true, targetModules: ['q_proj'] });
    expect(rs.scaling).to.equal(4);
    rs.dispose();
    config.dispose();
  });

  describe("an adapter's header against adapter_config.json and the base, before its data is read", () => {
    const made: string[] = [];
    /** qwen2's adapter, copied with adapter_config.json changed by `edit`, its tensors by `keep`, and the data cut off after the header. */
    function adapterCopy(edit: (c: Record<string, unknown>) => void, keep: (key: string) => boolean = () => true) {
      const dir = mkdtempSync(join(tmpdir(), 'coevolve-lora-bad-'));
      made.push(dir);
      const from = `${fixture('qwen2')}/lora`;
      const config = JSON.parse(readFileSync(join(from, 'adapter_config.json'), 'utf8'));
      edit(config);
      writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify(config));
      const tensors = readSafetensors(join(from, 'adapter_model.safetensors'), keep).tensors;
      const path = join(dir, 'adapter_model.safetensors');
      writeSafetensors(path, tensors as Record<string, { shape: number[]; data: Float32Array }>);
      const bytes = readFileSync(path);
      writeFileSync(path, bytes.subarray(0, 8 + Number(bytes.readBigUInt64LE(0))));
      return dir;
    }
    const load = (dir: string, base: string) => {
      const model = HfCausalLM.load(fixture(base));
      const before = tf.memory().numTensors;
      try {
        LoraAdapter.load(dir, model.config);
      } finally {
        expect(tf.memory().numTensors).to.equal(before);
        model.dispose();
      }
    };
    after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

    it('refuses another r, naming adapter_config.json, r and the tensor', () => {
      const dir = adapterCopy((c) => {
        c.r = 8;
      });
      expect(() => load(dir, 'qwen2')).to.throw(
        /adapter_config\.json: r is 8 but adapter_model\.safetensors holds base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight as \[4,64\]$/,
      );
    });

    it('refuses a targeted module the file lacks', () => {
      const dir = adapterCopy(
        () => {},
        (key) => !key.includes('layers.1.mlp.down_proj.lora_B'),
      );
      expect(() => load(dir, 'qwen2')).to.throw(
        /adapter_config\.json: target_modules names model\.layers\.1\.mlp\.down_proj, but adapter_model\.safetensors holds no lora_B for it$/,
      );
    });

    it("refuses an adapter made for another base (qwen2's on llama-tied, whose MLP is narrower)", () => {
      const dir = adapterCopy(() => {});
      expect(() => load(dir, 'llama-tied')).to.throw(
        new RegExp(
          'adapter_model\\.safetensors: base_model\\.model\\.model\\.layers\\.0\\.mlp\\.gate_proj\\.lora_B\\.weight is \\[176,4\\], ' +
            "but the base's model\\.layers\\.0\\.mlp\\.gate_proj \\(64 in, 160 out\\) implies \\[160,4\\]$",
        ),
      );
    });
  });
});
