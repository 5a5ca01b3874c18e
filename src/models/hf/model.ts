/**
 * A Hugging Face decoder (Llama, Qwen2, Qwen3, GPT-2) as a coevolve policy: the weights of a
 * checkpoint directory as tfjs variables, named as transformers names them (nn.Linear weights
 * held transposed, [in, out]), and one forward pass for the four families, checked against
 * transformers' own logits, losses and gradients (test/models/hf-model.test.ts).
 * Rows may be left-padded: each row's positions count from its first real token and its pad
 * keys are masked, as transformers does with an attention mask and position ids.
 */
import * as tf from '@tensorflow/tfjs';
import { join } from 'node:path';
import { totalmem } from 'node:os';
import { variablePrefix } from '../names.js';
import { linear } from '../ops.js';
import { headScores } from './head.js';
import { shareRows, sharedRowsOf, type SharedRows } from './shared-rows.js';
import { compactScores, expandedLogits } from './compact-head.js';
import { layoutBatch } from '../score-batch.js';
import type { Policy, PolicyInput, ScoredBatch } from '../types.js';
import { inverseFrequencies, readHfConfig, type HfConfig } from './config.js';
import { checkFloat, unknownWeights, weightSpecs } from './layout.js';
import type { LoraAdapter } from './lora.js';
import { attend, attentionBias, cat, geluNew, rotate, rotation } from './attention.js';
import { KeptProducts, recomputed, reusedProduct, taping } from './recompute.js';
import { loraHostFits, loraHostLinear } from './lora-host.js';
import { fusedRmsNorm, fusedSwiglu, fusesRmsNorm, fusesSwiglu } from './fused.js';
import { readCheckpointTensors } from './safetensors.js';
import { checkWeightHeaders } from './validate.js';
import { HostMatrix, hostMatMul, hostProduct, sharedCopy } from '../../backend/native/host.js';
import { activeSgemm } from '../../backend/native/index.js';

/** Per-layer keys and values kept during generation: [B, KV heads, S, head dim] each. */
export interface HfLayerCache {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

/** Weights by transformers name as stored (nn.Linear [out, in]), flattened float32. */
export type StoredWeights = Record<string, { shape: number[]; data: Float32Array }>;

export interface HfLoadOptions {
  /** the base will not be trained (LoRA, generation, serving): its matrices may stay outside the backend's heap */
  frozen?: boolean;
  /** a frozen tied table with shared rows (a base made with sharedRows) computes its head on them; default true (false: the full head, to compare) */
  compactHead?: boolean;
  /** keep the matrices outside the heap (src/backend/native/host.ts); default: when frozen and a native sgemm serves the backend */
  host?: boolean;
}

export class HfCausalLM implements Policy {
  readonly kind = 'hf';
  readonly hasValueHead = false;
  /** the weights held by the backend, as variables (with `host`, only the norms, biases and gains) */
  readonly weights: Record<string, tf.Variable> = {};
  /** with `host`, every matrix (projections, embeddings, head) as stored, outside the backend's heap; frozen */
  readonly host: Record<string, HostMatrix> = {};
  /** the sha256 of the directory's config and weights as loaded, once computed (checkpoints record it) */
  sha256?: string;
  /**
   * Bytes of product outputs a checkpointed training pass may keep outside the heap, so that
   * recomputing a block in the backward pass skips its large products (see KeptProducts); 0
   * recomputes everything. Default: an eighth of the machine's memory, at most 2 GiB.
   */
  keepProductBytes = Math.min(2 ** 31, Math.floor(totalmem() / 8));
  private readonly invFreq?: Float32Array;
  /**
   * with shareUnusedRows: the split, the compact table a training pass reads and trains instead
   * of the tied one ([own rows, then the shared row], d), and whether the tied table lags it
   */
  private shared?: { rows: SharedRows; table: tf.Variable; norm: tf.Tensor; stale: boolean };
  /** a frozen tied table's shared rows and its compact rows [own, then shared; d], once looked for (null: it has none) */
  private frozenShared?: { rows: SharedRows; table: tf.Tensor2D } | null;
  /** loaded to be left untrained (LoRA, generation, serving), its matrices in the heap or not */
  readonly loadedFrozen: boolean;
  /** false: a frozen base's shared rows are not used (the full head, to compare) */
  readonly compactHead: boolean;
  /** while a checkpointed block runs: where its products are kept, and whether this is its recomputation */
  private products?: { kept: KeptProducts; again: boolean };

  /**
   * `tensors` by transformers name, as stored (nn.Linear weights [out, in]); they are copied,
   * but with `host` a float32 matrix is adopted as it is (the caller must leave it unchanged).
   */
  constructor(
    readonly config: HfConfig,
    tensors: Record<string, { shape: number[]; data: Float32Array | Float64Array }>,
    readonly dir?: string,
    o: { host?: boolean; frozen?: boolean; compactHead?: boolean } = {},
  ) {
    this.loadedFrozen = o.frozen === true || o.host === true;
    this.compactHead = o.compactHead !== false;
    if (!this.compactHead) this.frozenShared = null;
    const where = dir ?? 'checkpoint';
    const extra = unknownWeights(config, Object.keys(tensors));
    if (extra) throw new Error(`${where}: weights this ${config.architecture} does not have: ${extra}`);
    const specs = weightSpecs(config);
    // all checked before any is made, so a refusal leaves no variables behind
    for (const s of specs) {
      const t = tensors[s.name];
      if (!t) throw new Error(`${where}: weight ${s.name} is missing`);
      checkFloat(where, s.name, (t as { dtype?: string }).dtype);
      if (JSON.stringify(t.shape) !== JSON.stringify(s.shape))
        throw new Error(
          `${where}: weight ${s.name} has shape ${JSON.stringify(t.shape)}, config.json implies ${JSON.stringify(s.shape)}`,
        );
    }
    const prefix = variablePrefix('hf');
    for (const s of specs) {
      const t = tensors[s.name];
      if (o.host && s.shape.length === 2) {
        this.host[s.name] = new HostMatrix(
          t.data instanceof Float32Array ? t.data : Float32Array.from(t.data),
          s.shape[0],
          s.shape[1],
        );
        continue;
      }
      this.weights[s.name] = tf.tidy(() => {
        const x = tf.tensor(Float32Array.from(t.data), s.shape);
        return tf.variable(s.linear ? x.transpose() : x, true, `${prefix}/${s.name}`);
      });
    }
    if (config.rope) this.invFreq = inverseFrequencies(config.rope, config.headDim);
  }

  /** Every weight as transformers stores it: by its name, nn.Linear weights back to [out, in]; host matrices are returned as held (read only). */
  storedTensors(): StoredWeights {
    this.spreadSharedRow();
    const linear = new Set(
      weightSpecs(this.config)
        .filter((s) => s.linear)
        .map((s) => s.name),
    );
    // not inside tf.tidy: it walks what it returns, every element of a plain array too (a
    // 28M-value embedding passed a Set's size limit)
    const held = Object.entries(this.weights).map(([n, v]) => {
      const t = linear.has(n) ? v.transpose() : v;
      const data = t.dataSync() as Float32Array;
      if (t !== v) t.dispose();
      return [n, { shape: t.shape, data }];
    });
    const host = Object.entries(this.host).map(([n, m]) => [n, { shape: [m.rows, m.cols], data: m.data }]);
    return Object.fromEntries([...held, ...host]);
  }

  /** whether the matrices are held outside the heap (the model is then frozen) */
  get frozen(): boolean {
    return Object.keys(this.host).length > 0;
  }

  /** Loads `DIR` (config.json and safetensors weights; float16 and bfloat16 are computed in float32). */
  static load(dir: string, o: HfLoadOptions = {}): HfCausalLM {
    const config = readHfConfig(dir);
    checkWeightHeaders(config, join(dir, 'config.json'), dir); // before any tensor data is read
    const host = o.host ?? (o.frozen === true && activeSgemm() !== undefined);
    const tensors = readCheckpointTensors(dir);
    // host matrices go to shared memory, one at a time (each decoded copy is garbage at once),
    // so worker-thread replicas (src/parallel) adopt them instead of copying the base
    if (host) for (const t of Object.values(tensors)) if (t.shape.length === 2) t.data = sharedCopy(t.data);
    return new HfCausalLM(config, tensors, dir, { host, frozen: o.frozen, compactHead: o.compactHead });
  }

  get maxSequence(): number {
    return this.config.maxPositions;
  }

  /** The trained variables: with shared rows, the compact table in the tied table's place. */
  variables(): tf.Variable[] {
    const s = this.shared;
    if (!s) return Object.values(this.weights);
    const tied = this.weights[this.tableName()];
    return Object.values(this.weights).map((v) => (v === tied ? s.table : v));
  }

  dispose(): void {
    if (this.shared) tf.dispose([this.shared.table, this.shared.norm]);
    this.frozenShared?.table.dispose();
    for (const v of Object.values(this.weights)) v.dispose();
    for (const n of Object.keys(this.host)) delete this.host[n];
  }

  /** The tokens' rows of the compact table (an unused id reads the shared row, as its own row equals it): [B, T, d]. */
  private sharedEmbed(tokens: tf.Tensor2D): tf.Tensor {
    const { index } = this.shared!.rows;
    const ids = Int32Array.from(tokens.dataSync() as Int32Array, (t) => {
      if (!(t >= 0 && t < index.length)) throw new Error(`hf: token ${t} outside the vocabulary [0, ${index.length})`);
      return index[t];
    });
    return tf.gather(this.shared!.table, tf.tensor(ids, tokens.shape, 'int32'));
  }

  /** Rows `ids` of the embedding `name` [rows, d]: [..ids, d]. */
  private embed(name: string, ids: tf.Tensor | Int32Array, shape: number[]): tf.Tensor {
    if (name === this.tableName()) this.spreadSharedRow();
    const m = this.host[name];
    if (!m) return tf.gather(this.w(name), ids instanceof Int32Array ? tf.tensor(ids, shape, 'int32') : ids);
    return m.gather(ids instanceof Int32Array ? ids : (ids.dataSync() as Int32Array)).reshape([...shape, m.cols]);
  }

  private w(name: string): tf.Tensor {
    const x = this.weights[name];
    if (!x) throw new Error(`hf: no weight ${name}`);
    return x;
  }

  /**
   * Hidden states after the final norm, [B, T, d], of `tokens` [B, T] at `positions` [B*T],
   * continuing `cache` (S - T keys already held); `keyMask` [B*S] is 1 for real keys, 0 for pads;
   * `recompute`: activation checkpointing per block, for whole passes that train (no cache returned).
   */
  forward(
    tokens: tf.Tensor2D,
    positions: Int32Array,
    keyMask: Float32Array,
    cache?: HfLayerCache[],
    adapter?: LoraAdapter,
    recompute = false,
  ): { hidden: tf.Tensor3D; cache: HfLayerCache[] } {
    const c = this.config;
    const [B, T] = tokens.shape;
    const S = keyMask.length / B;
    const past = S - T;
    const bias = attentionBias(keyMask, B, T, past, gpt2OrMha(c) ? 1 : c.heads / c.kvHeads);
    const gpt2 = c.architecture === 'GPT2LMHeadModel';
    let x = (
      !adapter && this.sharedPass()
        ? this.sharedEmbed(tokens)
        : this.embed(gpt2 ? 'transformer.wte.weight' : 'model.embed_tokens.weight', tokens, [B, T])
    ) as tf.Tensor3D; // [B, T, d]
    if (gpt2) x = x.add(this.embed('transformer.wpe.weight', positions, [B, T]));
    const rot = this.invFreq && rotation(this.invFreq, positions, B, T); // cos, sin [B, 1, T, hd]
    const next: HfLayerCache[] = [];
    const block = (
      l: number,
      input: tf.Tensor3D,
      past?: HfLayerCache,
      consts: tf.Tensor[] = [bias, ...(rot ? [rot.cos, rot.sin, rot.half] : [])],
    ) => {
      const [mask, cos, sin, half] = consts;
      const { y, kv } = gpt2
        ? this.gpt2Attention(l, input, mask, past, adapter)
        : this.attention(l, input, mask, { cos, sin, half: half as tf.Tensor2D }, past, adapter);
      const h = input.add(y) as tf.Tensor3D;
      return { out: h.add(gpt2 ? this.gpt2Mlp(l, h, adapter) : this.swiglu(l, h, adapter)) as tf.Tensor3D, kv };
    };
    // with `recompute` (scoring, training) each block keeps only its input for the backward pass
    // and is computed again there, and no cache is built; generation keeps what it computes.
    // Adapter dropout would draw other masks when recomputed, so a dropping adapter is not.
    const checkpoint = recompute && !cache && !(adapter?.training && (adapter.config.dropout ?? 0) > 0);
    // a pass that no gradient will follow keeps nothing
    const kept =
      checkpoint && taping() && this.keepProductBytes > 0 ? new KeptProducts(this.keepProductBytes) : undefined;
    const again = (l: number, input: tf.Tensor3D, consts: tf.Tensor[], recomputing: boolean) => {
      const outer = this.products;
      this.products = kept && { kept, again: recomputing };
      try {
        return block(l, input, undefined, consts).out;
      } finally {
        this.products = outer;
      }
    };
    for (let l = 0; l < c.layers; l++) {
      if (checkpoint) {
        x = recomputed(
          (input, consts, recomputing) => again(l, input, consts, recomputing),
          x,
          [bias, ...(rot ? [rot.cos, rot.sin, rot.half] : [])],
          this.layerVariables(l, adapter),
        );
        continue;
      }
      const { out, kv } = block(l, x, cache?.[l]);
      next.push(kv);
      x = out;
    }
    const hidden = (gpt2 ? this.layerNorm(x, 'transformer.ln_f') : this.rmsNorm(x, 'model.norm.weight')) as tf.Tensor3D;
    return { hidden, cache: next };
  }

  /** The variables block `l` reads that an update may change: its adapter terms, or all its weights. */
  private layerVariables(l: number, adapter?: LoraAdapter): tf.Variable[] {
    const prefix = this.config.architecture === 'GPT2LMHeadModel' ? `transformer.h.${l}.` : `model.layers.${l}.`;
    if (adapter)
      return Object.entries(adapter.named())
        .filter(([n]) => n.startsWith(prefix))
        .map(([, v]) => v);
    return Object.entries(this.weights)
      .filter(([n]) => n.startsWith(prefix))
      .map(([, v]) => v);
  }

  private attention(
    l: number,
    x: tf.Tensor3D,
    bias: tf.Tensor,
    rot: { cos: tf.Tensor; sin: tf.Tensor; half: tf.Tensor2D },
    cache?: HfLayerCache,
    adapter?: LoraAdapter,
  ): { y: tf.Tensor3D; kv: HfLayerCache } {
    const c = this.config;
    const [B, T] = x.shape;
    const p = `model.layers.${l}.self_attn.`;
    const h = this.rmsNorm(x, `model.layers.${l}.input_layernorm.weight`);
    const proj = (name: string, heads: number) => {
      let y = this.linear(h, p + name, adapter).reshape([B, T, heads, c.headDim]); // [B, T, heads, hd]
      if (c.qkNorm && name !== 'v_proj') y = this.rmsNorm(y, `${p}${name[0]}_norm.weight`);
      return y.transpose([0, 2, 1, 3]) as tf.Tensor4D; // [B, heads, T, hd]
    };
    const q = rotate(proj('q_proj', c.heads), rot);
    const k = cat(cache?.k, rotate(proj('k_proj', c.kvHeads), rot));
    const v = cat(cache?.v, proj('v_proj', c.kvHeads));
    // a checkpointed block keeps its attention for the recomputation, as it keeps its products
    const store = this.products && { kept: this.products.kept, name: `${p}attn`, again: this.products.again };
    const y = attend(q, k, v, bias, store); // [B, T, H*hd]
    return { y: this.linear(y, p + 'o_proj', adapter) as tf.Tensor3D, kv: { k, v } };
  }

  private gpt2Attention(
    l: number,
    x: tf.Tensor3D,
    bias: tf.Tensor,
    cache?: HfLayerCache,
    adapter?: LoraAdapter,
  ): { y: tf.Tensor3D; kv: HfLayerCache } {
    const c = this.config;
    const [B, T] = x.shape;
    const p = `transformer.h.${l}.`;
    const qkv = this.linear(this.layerNorm(x, p + 'ln_1'), p + 'attn.c_attn', adapter);
    const [q, k, v] = tf
      .split(qkv, 3, -1)
      .map((t) => t.reshape([B, T, c.heads, c.headDim]).transpose([0, 2, 1, 3]) as tf.Tensor4D);
    const keys = cat(cache?.k, k);
    const values = cat(cache?.v, v);
    const store = this.products && { kept: this.products.kept, name: `${p}attn`, again: this.products.again };
    const y = attend(q, keys, values, bias, store);
    return { y: this.linear(y, p + 'attn.c_proj', adapter) as tf.Tensor3D, kv: { k: keys, v: values } };
  }

  private swiglu(l: number, x: tf.Tensor3D, adapter?: LoraAdapter): tf.Tensor3D {
    const p = `model.layers.${l}.`;
    const h = this.rmsNorm(x, p + 'post_attention_layernorm.weight');
    const gate = this.linear(h, p + 'mlp.gate_proj', adapter);
    const up = this.linear(h, p + 'mlp.up_proj', adapter);
    const product = fusesSwiglu(gate, up) ? fusedSwiglu(gate, up) : gate.mul(tf.sigmoid(gate)).mul(up);
    return this.linear(product, p + 'mlp.down_proj', adapter) as tf.Tensor3D;
  }

  private gpt2Mlp(l: number, x: tf.Tensor3D, adapter?: LoraAdapter): tf.Tensor3D {
    const p = `transformer.h.${l}.`;
    const h = this.linear(this.layerNorm(x, p + 'ln_2'), p + 'mlp.c_fc', adapter);
    return this.linear(geluNew(h), p + 'mlp.c_proj', adapter) as tf.Tensor3D;
  }

  /** `x @ w + b` for the projection named `name` (its bias if it has one), plus the adapter's term when it adapts it. */
  private linear(x: tf.Tensor, name: string, adapter?: LoraAdapter): tf.Tensor {
    const h = this.host[`${name}.weight`];
    const bias = this.weights[`${name}.bias`];
    // a host matrix is held as stored: nn.Linear's [out, in] (x W^T), GPT-2's Conv1D [in, out] (x W)
    const transpose = !this.isConv1D(name);
    // recomputing a checkpointed block: its forward pass's product, when kept
    const kept = this.products?.again ? this.products.kept.take(name) : undefined;
    // an adapted projection of a host matrix: one operation (lora-host.ts), its adapter term included
    const a = adapter?.a[name];
    if (h && a && !adapter.dropping && loraHostFits()) {
      // the adapter's s x A kept with the product, for the recomputation's backward pass
      const keeper = this.products;
      const u = keeper?.again
        ? { kept: keeper.kept.take(`${name}.sxa`) }
        : keeper && { keep: (d: Float32Array, shape: number[]) => keeper.kept.keepCopy(`${name}.sxa`, d, shape) };
      const y = loraHostLinear(
        x,
        h,
        transpose,
        a as tf.Tensor2D,
        adapter.b[name] as tf.Tensor2D,
        adapter.scaling,
        kept,
        u,
      );
      if (this.products && !this.products.again) this.products.kept.keep(name, y);
      return bias ? y.add(bias) : y;
    }
    let y: tf.Tensor;
    if (kept) y = reusedProduct(kept, x, h ?? (this.w(`${name}.weight`) as tf.Tensor2D), transpose, bias);
    else {
      const product = h && hostMatMul(x, h, transpose);
      y = product ? (bias ? product.add(bias) : product) : linear(x, this.w(`${name}.weight`) as tf.Tensor2D, bias);
      if (this.products && !this.products.again) this.products.kept.keep(name, y);
    }
    const delta = adapter?.delta(name, x);
    return delta ? y.add(delta) : y;
  }

  private rmsNorm(x: tf.Tensor, gain: string): tf.Tensor {
    const g = this.w(gain);
    if (fusesRmsNorm(x, g)) return fusedRmsNorm(x, g, this.config.eps);
    return x.mul(tf.rsqrt(x.square().mean(-1, true).add(this.config.eps))).mul(this.w(gain));
  }

  private layerNorm(x: tf.Tensor, name: string): tf.Tensor {
    const mean = x.mean(-1, true);
    const centred = x.sub(mean);
    return centred
      .mul(tf.rsqrt(centred.square().mean(-1, true).add(this.config.eps)))
      .mul(this.w(`${name}.weight`))
      .add(this.w(`${name}.bias`));
  }

  private isConv1D(name: string): boolean {
    return this.config.architecture === 'GPT2LMHeadModel' && !name.startsWith('lm_head');
  }

  /** The head's weight: the embedding table [V, d] when tied, else lm_head held [d, V] (as stored, [V, d], on the host). */
  private headWeight(): tf.Tensor2D | HostMatrix {
    const c = this.config;
    const name = !c.tied
      ? 'lm_head.weight'
      : c.architecture === 'GPT2LMHeadModel'
        ? 'transformer.wte.weight'
        : 'model.embed_tokens.weight';
    return this.host[name] ?? (this.w(name) as tf.Tensor2D);
  }

  /**
   * From now on a training pass reads and trains a compact table instead of the tied one: a row
   * for each id `used` names (and each the table does not share already), and one row for the
   * rest (shared-rows.ts), exact for every used target. `fresh`: the table is a new
   * initialisation, whose unused rows are first made equal. Returns the split.
   */
  shareUnusedRows(used: ReadonlySet<number>, fresh: boolean): SharedRows {
    const c = this.config;
    const v = c.tied ? this.weights[this.tableName()] : undefined;
    if (!v)
      throw new Error('sharedRows: needs a tied embedding table held as a variable (tie_word_embeddings, not frozen)');
    const data = Float32Array.from(v.dataSync() as Float32Array);
    const rows = shareRows(data, c.vocabSize, c.hidden, used, fresh, this.dir ?? 'the model');
    tf.tidy(() => v.assign(tf.tensor2d(data, [c.vocabSize, c.hidden])));
    if (this.shared) tf.dispose([this.shared.table, this.shared.norm]);
    const table = tf.tidy(() => tf.variable(tf.gather(v, tf.tensor1d(rows.ids, 'int32')), true, `${v.name}/shared`));
    const weights = new Float32Array(rows.ids.length).fill(1);
    weights[rows.ids.length - 1] = 1 / rows.sharing.length;
    const norm = tf.keep(tf.tensor2d(weights, [rows.ids.length, 1]));
    this.shared = { rows, table, norm, stale: true }; // stale: a resume loads the compact table next
    return rows;
  }

  /**
   * The gradient-norm clip's weights (src/rl/apply.ts): the shared row's square counts 1/N, as
   * the N tied rows' own gradients (each 1/N of its) sum to; so a clipped step is the full model's.
   */
  gradNormWeights(): Record<string, tf.Tensor> | undefined {
    return this.shared && { [this.shared.table.name]: this.shared.norm };
  }

  /** Writes the compact table into the tied one once training has moved it: each own row to its id, the shared row to every id that shares it. */
  spreadSharedRow(): void {
    const s = this.shared;
    if (!s?.stale) return;
    s.stale = false;
    const { vocabSize: V, hidden: d } = this.config;
    const v = this.weights[this.tableName()];
    const data = new Float32Array(V * d); // every row is written: the own ids' and the sharing ids'
    const compact = s.table.dataSync() as Float32Array;
    const { ids, sharing } = s.rows;
    const last = ids.length - 1;
    for (let i = 0; i < last; i++) data.set(compact.subarray(i * d, i * d + d), ids[i] * d);
    const row = compact.subarray(last * d, last * d + d);
    for (const id of sharing) data.set(row, id * d);
    tf.tidy(() => v.assign(tf.tensor2d(data, [V, d])));
  }

  /** Whether this pass reads the compact table (a taped pass of the full model with shared rows); it then leaves the tied table behind. */
  private sharedPass(): boolean {
    if (!this.shared || this.frozen || !taping()) return false;
    this.shared.stale = true;
    return true;
  }

  /** The compact head's scores while training with shared rows: targets must be own rows. */
  private sharedScores(rows: tf.Tensor2D, targets: Int32Array, mask: Float32Array, temperature: number) {
    const s = this.shared!;
    return compactScores(s.rows, s.table as tf.Tensor2D, rows, targets, mask, temperature, true);
  }

  /**
   * A frozen tied table's shared rows (a base made with sharedRows), looked for once; none for a
   * head that may train, an untied one, or when fewer than half its rows are equal (a
   * checkpoint's few equal padding rows are not worth a second copy of the table).
   */
  private frozenSharedRows(): { rows: SharedRows; table: tf.Tensor2D } | undefined {
    if (!this.config.tied || !this.loadedFrozen) return undefined;
    if (this.frozenShared === undefined) {
      const { vocabSize: V, hidden: d } = this.config;
      const w = this.headWeight();
      const data = w instanceof HostMatrix ? w.data : (w.dataSync() as Float32Array);
      const rows = sharedRowsOf(data, V, d, Math.max(64, V / 2));
      this.frozenShared = rows
        ? {
            rows,
            table: tf.keep(w instanceof HostMatrix ? w.gather(rows.ids) : tf.gather(w, tf.tensor1d(rows.ids, 'int32'))),
          }
        : null;
    }
    return this.frozenShared ?? undefined;
  }

  /** The tied table's name: the embedding the head reads. */
  private tableName(): string {
    return this.config.architecture === 'GPT2LMHeadModel' ? 'transformer.wte.weight' : 'model.embed_tokens.weight';
  }

  /** A frozen base's shared rows, when its head computes on them (see frozenSharedRows): what compactLogits' columns are. */
  compactRows(): SharedRows | undefined {
    return this.frozenSharedRows()?.rows;
  }

  /** Next-token logits on the compact rows [B, T, own ids + 1] (needs compactRows): the sampler reads them as the full row (compact-sampling.ts). */
  compactLogits(hidden: tf.Tensor3D): tf.Tensor3D {
    const fs = this.frozenSharedRows();
    if (!fs) throw new Error('hf: this model has no compact head');
    const [B, T, d] = hidden.shape;
    return tf.tidy(() =>
      tf.matMul(hidden.reshape([B * T, d]), fs.table, false, true).reshape([B, T, fs.rows.ids.length]),
    ) as tf.Tensor3D;
  }

  /** Next-token logits from hidden states: [B, T, d] -> [B, T, V]. */
  logits(hidden: tf.Tensor3D): tf.Tensor3D {
    this.spreadSharedRow();
    const c = this.config;
    const [B, T, d] = hidden.shape;
    const fs = this.frozenSharedRows();
    if (fs) {
      const compact = this.compactLogits(hidden);
      const full = expandedLogits(fs.rows, compact);
      compact.dispose();
      return full;
    }
    const w = this.headWeight();
    const rows = hidden.reshape([B * T, d]) as tf.Tensor2D;
    return (w instanceof HostMatrix ? hostMatMul(rows, w, true) : tf.matMul(rows, w, false, c.tied)).reshape([
      B,
      T,
      c.vocabSize,
    ]);
  }

  /** See Policy.score; `temperature` divides the logits (0, greedy, scores at 1); with `adapter`, through its LoRA terms. */
  score(inputs: readonly PolicyInput[], temperature = 1, adapter?: LoraAdapter): ScoredBatch {
    if (inputs.length === 0) throw new Error('hf: nothing to score');
    const { B, P, Tc, L, tokens, positions, leftPad, targets, mask } = layoutBatch(inputs);
    if (L > this.maxSequence)
      throw new Error(`hf: a scoring pass of ${L} tokens exceeds max_position_embeddings ${this.maxSequence}`);
    const keyMask = new Float32Array(B * L).fill(1);
    leftPad.forEach((n, b) => keyMask.fill(0, b * L, b * L + n));
    const { hidden } = this.forward(tf.tensor2d(tokens, [B, L], 'int32'), positions, keyMask, undefined, adapter, true);
    const d = this.config.hidden;
    const rows = hidden.slice([0, P - 1, 0], [-1, Tc, -1]).reshape([B * Tc, d]) as tf.Tensor2D;
    // chunked over rows, so [B, Tc, V] logits never exist at once (src/models/hf/head.ts)
    // the head trains only in full fine-tuning; under an adapter, or held on the host, it is frozen
    const trainHead = !adapter && !this.frozen;
    const frozen = trainHead ? undefined : this.frozenSharedRows();
    const { logProbs, entropy } =
      trainHead && this.sharedPass()
        ? this.sharedScores(rows, targets, mask, temperature)
        : frozen
          ? compactScores(frozen.rows, frozen.table, rows, targets, mask, temperature, false)
          : headScores(rows, this.headWeight(), this.config.tied, targets, temperature, undefined, trainHead);
    const m = tf.tensor2d(mask, [B, Tc]);
    return {
      logProbs: logProbs.reshape([B, Tc]).mul(m) as tf.Tensor2D,
      entropy: entropy.reshape([B, Tc]) as tf.Tensor2D,
      mask: m,
    };
  }
}

const gpt2OrMha = (c: HfConfig) => c.architecture === 'GPT2LMHeadModel' || c.heads === c.kvHeads;
