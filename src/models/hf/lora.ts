/**
 * LoRA adapters with PEFT's semantics: a targeted projection computes
 * `base(x) + dropout(x) A^T B^T * scaling`, with A [r, in] and B [out, r] as PEFT stores them
 * (held here as [in, r] and [r, out] for `x @ A @ B`), scaling `alpha / r` (rsLoRA:
 * `alpha / sqrt(r)`), A drawn as PEFT's default (Kaiming-uniform with a = sqrt(5), that is
 * U(-1/sqrt(in), 1/sqrt(in))) and B zero, so a new adapter changes nothing. Targets follow
 * PEFT's `target_modules`: a list matches a module named exactly so or ending in `.target`,
 * a string is a regular expression the whole name must match, and `all-linear` is every
 * projection but the output head. The base stays frozen: an adapter's variables are its own.
 */
import * as tf from '@tensorflow/tfjs';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../util/rng.js';
import { variablePrefix } from '../names.js';
import { MAX_SIZE, type HfConfig } from './config.js';
import { linearModules, type LinearModule } from './layout.js';
import { encodeSafetensors, readSafetensors } from './safetensors.js';
import { ADAPTER_KEY, checkAdapterHeader } from './validate.js';

export interface LoraConfig {
  r: number;
  alpha: number;
  /** scaling alpha / sqrt(r) instead of alpha / r */
  rslora?: boolean;
  /** dropout on the adapter's input, while training only (PEFT's lora_dropout) */
  dropout?: number;
  targetModules: string[] | string;
}

/** The modules of `c` that `targets` names (PEFT's check_target_module_exists), or an error naming the target that matched nothing. */
export function targetModules(c: HfConfig, targets: string[] | string): LinearModule[] {
  const all = linearModules(c);
  if (targets === 'all-linear') return all;
  if (typeof targets === 'string') {
    const re = new RegExp(`^(?:${targets})$`);
    const found = all.filter((m) => re.test(m.name));
    if (!found.length)
      throw new Error(`lora: target_modules '${targets}' matches no projection of this ${c.architecture}`);
    return found;
  }
  for (const t of targets)
    if (!all.some((m) => m.name === t || m.name.endsWith(`.${t}`)))
      throw new Error(
        `lora: target_modules: '${t}' matches no projection of this ${c.architecture} (e.g. ${all
          .slice(0, 3)
          .map((m) => m.name.split('.').pop())
          .join(', ')})`,
      );
  return all.filter((m) => targets.some((t) => m.name === t || m.name.endsWith(`.${t}`)));
}

export class LoraAdapter {
  readonly a: Record<string, tf.Variable> = {};
  readonly b: Record<string, tf.Variable> = {};
  readonly scaling: number;
  /** dropout applies only while this is set (PEFT's train mode) */
  training = false;
  private readonly rng: Rng;

  /** A new adapter on the model described by `model`; `weights` (PEFT's layout, by module) load a saved one. */
  constructor(
    readonly model: HfConfig,
    readonly config: LoraConfig,
    seed = 0,
    weights?: Record<string, { a: Float32Array; b: Float32Array }>,
  ) {
    if (!Number.isInteger(config.r) || config.r < 1)
      throw new Error(`lora: r must be a positive integer, got ${config.r}`);
    if (!(config.alpha > 0)) throw new Error(`lora: alpha must be positive, got ${config.alpha}`);
    const dropout = config.dropout ?? 0;
    if (!(dropout >= 0 && dropout < 1)) throw new Error(`lora: dropout must be in [0, 1), got ${dropout}`);
    this.scaling = config.rslora ? config.alpha / Math.sqrt(config.r) : config.alpha / config.r;
    this.rng = new Rng(seed);
    const prefix = variablePrefix('lora');
    const { r } = config;
    for (const m of targetModules(model, config.targetModules)) {
      const saved = weights?.[m.name];
      if (weights && (!saved || saved.a.length !== r * m.in || saved.b.length !== m.out * r))
        throw new Error(
          `lora: the adapter's weights for ${m.name} are missing or not [${r}, ${m.in}] and [${m.out}, ${r}]`,
        );
      const bound = 1 / Math.sqrt(m.in);
      const a = saved
        ? tf.tensor2d(saved.a, [r, m.in]).transpose()
        : tf.tensor2d(
            Float32Array.from({ length: m.in * r }, () => (2 * this.rng.next() - 1) * bound),
            [m.in, r],
          );
      const b = saved ? tf.tensor2d(saved.b, [m.out, r]).transpose() : tf.zeros([r, m.out]);
      this.a[m.name] = tf.variable(a, true, `${prefix}/${m.name}.lora_A`);
      this.b[m.name] = tf.variable(b, true, `${prefix}/${m.name}.lora_B`);
      tf.dispose([a, b]);
    }
  }

  /** A copy with the same settings and the current weights (a frozen KL reference, say). */
  clone(): LoraAdapter {
    return new LoraAdapter(this.model, this.config, 0, this.peftWeights());
  }

  /** The adapter's variables by name (`<module>.lora_A`, `<module>.lora_B`), as checkpoints and reference syncs name them. */
  named(): Record<string, tf.Variable> {
    return Object.fromEntries([
      ...Object.entries(this.a).map(([m, v]) => [`${m}.lora_A`, v]),
      ...Object.entries(this.b).map(([m, v]) => [`${m}.lora_B`, v]),
    ]);
  }

  variables(): tf.Variable[] {
    return [...Object.values(this.a), ...Object.values(this.b)];
  }

  /** whether dropout applies now (training with a dropout): the adapter's input then differs from the base's */
  get dropping(): boolean {
    return this.training && (this.config.dropout ?? 0) > 0;
  }

  /** The adapter's term for projection `module` of input `x` [..., in], or undefined when it does not adapt it. */
  delta(module: string, x: tf.Tensor): tf.Tensor | undefined {
    const a = this.a[module];
    if (!a) return undefined;
    const lead = x.shape.slice(0, -1);
    const [inDim] = a.shape as number[];
    const [, outDim] = this.b[module].shape as number[];
    let input = x.reshape([-1, inDim]) as tf.Tensor2D;
    const p = this.config.dropout ?? 0;
    if (this.training && p > 0)
      input = input.mul(
        tf.tensor(
          Float32Array.from({ length: input.size }, () => (this.rng.next() < p ? 0 : 1 / (1 - p))),
          input.shape,
        ),
      );
    // scaling B [r, out] rather than the product [rows, out]: a pass over far fewer values
    return tf
      .matMul(tf.matMul(input, a as tf.Tensor2D), this.b[module].mul(this.scaling) as tf.Tensor2D)
      .reshape([...lead, outDim]);
  }

  dispose(): void {
    tf.dispose(this.variables());
  }

  /** Writes the adapter as PEFT does: adapter_config.json and adapter_model.safetensors (A [r, in], B [out, r]). */
  save(dir: string, baseModel = ''): void {
    mkdirSync(dir, { recursive: true });
    for (const [name, body] of Object.entries(this.peftFiles(baseModel))) writeFileSync(join(dir, name), body);
  }

  /** The adapter's weights in PEFT's layout, by module: A [r, in] and B [out, r], flattened. */
  private peftWeights(): Record<string, { a: Float32Array; b: Float32Array }> {
    return tf.tidy(() =>
      Object.fromEntries(
        Object.keys(this.a)
          .sort()
          .map((m) => [
            m,
            {
              a: this.a[m].transpose().dataSync() as Float32Array,
              b: this.b[m].transpose().dataSync() as Float32Array,
            },
          ]),
      ),
    );
  }

  /** The two files of a PEFT adapter directory, by name. */
  peftFiles(baseModel = ''): Record<string, Uint8Array | string> {
    const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
    for (const [name, w] of Object.entries(this.peftWeights())) {
      tensors[`base_model.model.${name}.lora_A.weight`] = {
        shape: [this.config.r, w.a.length / this.config.r],
        data: w.a,
      };
      tensors[`base_model.model.${name}.lora_B.weight`] = {
        shape: [w.b.length / this.config.r, this.config.r],
        data: w.b,
      };
    }
    const gpt2 = this.model.architecture === 'GPT2LMHeadModel';
    const config = {
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: baseModel,
      r: this.config.r,
      lora_alpha: this.config.alpha,
      lora_dropout: this.config.dropout ?? 0,
      use_rslora: Boolean(this.config.rslora),
      target_modules: Object.keys(this.a).sort(),
      bias: 'none',
      fan_in_fan_out: gpt2,
      inference_mode: true,
      init_lora_weights: true,
      modules_to_save: null,
      use_dora: false,
      layers_to_transform: null,
      layers_pattern: null,
      rank_pattern: {},
      alpha_pattern: {},
    };
    return {
      'adapter_model.safetensors': new Uint8Array(encodeSafetensors(tensors)),
      'adapter_config.json': JSON.stringify(config, null, 2) + '\n',
    };
  }

  /** Reads a PEFT LoRA adapter for the model `model` describes; refuses what PEFT would do differently (DoRA, biases, per-module ranks). */
  static load(dir: string, model: HfConfig): LoraAdapter {
    const path = join(dir, 'adapter_config.json');
    if (!existsSync(path)) throw new Error(`${dir}: adapter_config.json is missing (a PEFT adapter directory)`);
    const c = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const fail = (field: string, why: string): never => {
      throw new Error(`${path}: ${field}: ${why}`);
    };
    if (c.peft_type !== 'LORA') fail('peft_type', `'${String(c.peft_type)}' is not supported (LORA)`);
    if (c.use_dora === true) fail('use_dora', 'DoRA is not supported');
    if (c.bias !== undefined && c.bias !== 'none') fail('bias', `'${String(c.bias)}' is not supported (none)`);
    if (c.modules_to_save) fail('modules_to_save', 'fully trained modules beside the adapter are not supported');
    for (const k of ['rank_pattern', 'alpha_pattern'])
      if (c[k] && Object.keys(c[k] as object).length) fail(k, 'per-module ranks and alphas are not supported');
    for (const k of ['layers_to_transform', 'layers_pattern']) if (c[k] != null) fail(k, 'is not supported');
    const r = c.r as number;
    if (!Number.isInteger(r) || r < 1 || r > MAX_SIZE)
      fail('r', `a positive integer up to 2^31 - 1, got ${JSON.stringify(c.r)}`);
    const targets = c.target_modules;
    if (typeof targets !== 'string' && !(Array.isArray(targets) && targets.every((t) => typeof t === 'string')))
      fail('target_modules', `a list of module names or a regular expression, got ${JSON.stringify(targets)}`);
    const file = join(dir, 'adapter_model.safetensors');
    if (!existsSync(file)) throw new Error(`${dir}: adapter_model.safetensors is missing`);
    // the header against r and the base's projections, before any tensor data is read
    checkAdapterHeader(path, file, r, targetModules(model, targets as string[] | string));
    const weights: Record<string, { a: Float32Array; b: Float32Array }> = {};
    for (const [key, t] of Object.entries(readSafetensors(file).tensors)) {
      const m = ADAPTER_KEY.exec(key)!;
      (weights[m[1]] ??= { a: new Float32Array(), b: new Float32Array() })[m[2] === 'A' ? 'a' : 'b'] =
        Float32Array.from(t.data);
    }
    return new LoraAdapter(
      model,
      {
        r,
        alpha: c.lora_alpha as number,
        rslora: c.use_rslora === true,
        dropout: (c.lora_dropout as number) ?? 0,
        targetModules: targets as string[] | string,
      },
      0,
      weights,
    );
  }
}
