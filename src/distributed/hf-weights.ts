/**
 * A Hugging Face policy's weights by version. The base never travels: every worker loads it
 * from a directory it can read, and the blob names it by the learner's path and sha256 (of
 * config.json and the weights, as checkpoints record it) and by the sha256 of its tokenizer
 * files. What travels is what the update changes: the adapter's matrices when the base is
 * frozen (LoRA), every weight in full fine-tuning, in the held layout (nn.Linear [in, out]).
 *
 * On a worker the base is found at the learner's path (from the worker's working directory)
 * unless `coevolve worker --base FROM=TO` maps it: a path the config names equal to FROM, or
 * under it, is read from TO instead. A base that hashes otherwise than the learner's is
 * refused, both hashes named: its episodes would come from another model.
 */
import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, normalize, resolve, sep } from 'node:path';
import { baseSha256 } from '../models/hf/checkpoint.js';
import { TOKENIZER_FILES } from '../models/hf/create.js';
import { LoraAdapter, type LoraConfig } from '../models/hf/lora.js';
import { HfCausalLM } from '../models/hf/model.js';
import { HfPolicy } from '../models/hf/policy.js';
import { loadHfTokenizer } from '../models/hf/text.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { frame, unframe } from './weights.js';

export interface HfHeader {
  kind: 'hf';
  /** the base directory as the learner's config names it */
  base: string;
  sha256: string;
  tokenizerSha256: string;
  /** the adapter's settings, or null in full fine-tuning (the blob then holds every weight) */
  lora: LoraConfig | null;
  names: string[];
  shapes: number[][];
}

/** Files that decide how text becomes ids and back (config.json is in the base's own hash). */
const TOKEN_FILES = [...TOKENIZER_FILES, 'generation_config.json', 'chat_template.jinja'];
const tokenHashes = new Map<string, string>();

/** The sha256 of `dir`'s tokenizer files (those present, each by name and contents), once per process. */
export function tokenizerSha256(dir: string): string {
  const key = resolve(dir);
  let sha = tokenHashes.get(key);
  if (!sha) {
    const hash = createHash('sha256');
    for (const f of TOKEN_FILES.filter((f) => existsSync(join(dir, f))))
      hash.update(f).update(readFileSync(join(dir, f)));
    tokenHashes.set(key, (sha = hash.digest('hex')));
  }
  return sha;
}

/** The weights an update of `policy` changes, framed with its base's names and hashes. */
export function encodeHfWeights(policy: HfPolicy): Buffer {
  const dir = policy.base.dir;
  if (!dir) throw new Error('rollouts: a Hugging Face model goes to workers only when it was loaded from a directory');
  const named = Object.entries(policy.weights);
  const header: HfHeader = {
    kind: 'hf',
    base: dir,
    sha256: policy.baseSha256 ?? (policy.base.sha256 = baseSha256(dir)),
    tokenizerSha256: tokenizerSha256(dir),
    lora: policy.adapter?.config ?? null,
    names: named.map(([n]) => n),
    shapes: named.map(([, v]) => v.shape),
  };
  return frame(
    header,
    named.map(([, v]) => v.dataSync() as Float32Array),
  );
}

/** A Hugging Face policy a worker plays, with its tokenizer. */
export interface HfPlayed {
  model: HfPolicy;
  tokenizer: Tokenizer;
  header: HfHeader;
  dispose(): void;
}

/** A base this worker cannot play for the learner: missing, or not the learner's (by hash). */
export class BaseRefused extends Error {}

/** `--base FROM=TO` pairs, checked: both sides non-empty. */
export function parseBaseMaps(specs: readonly string[]): Array<[string, string]> {
  return specs.map((s) => {
    const eq = s.indexOf('=');
    if (eq <= 0 || eq === s.length - 1)
      throw new Error(
        `worker: --base takes FROM=TO (the path the run's config names, then this machine's), got '${s}'`,
      );
    return [s.slice(0, eq), s.slice(eq + 1)];
  });
}

/**
 * A worker's Hugging Face models: each base directory loaded once, hashed once; a frozen base
 * is shared by every adapter on it, a fully fine-tuned model holds its own copy.
 */
export class HfWorkerModels {
  private readonly frozen = new Map<string, HfCausalLM>();
  private readonly hashes = new Map<string, string>();
  private readonly tokenizers = new Map<string, Tokenizer>();

  /** `maps`: from the learner's paths to this machine's (longest first wins) */
  constructor(private readonly maps: ReadonlyArray<[string, string]> = []) {}

  /** Where this worker reads the learner's base `path`. */
  local(path: string): string {
    const p = normalize(path).replace(/[\\/]+$/, '');
    const hit = [...this.maps]
      .map(([from, to]) => [normalize(from).replace(/[\\/]+$/, ''), to] as const)
      .filter(([from]) => p === from || p.startsWith(from + sep))
      .sort((a, b) => b[0].length - a[0].length)[0];
    return hit ? join(hit[1], p.slice(hit[0].length)) : path;
  }

  /** A policy holding `blob`'s weights, on its base read here and checked against the learner's. */
  decode(model: string, blob: Buffer): HfPlayed {
    const { header, values } = unframe<HfHeader>(blob);
    const dir = this.checked(model, header);
    const tokenizer = this.tokenizers.get(dir) ?? loadHfTokenizer(dir);
    this.tokenizers.set(dir, tokenizer);
    let policy: HfPolicy;
    if (header.lora) {
      if (!this.frozen.has(dir))
        this.frozen.set(dir, Object.assign(HfCausalLM.load(dir, { frozen: true }), { sha256: header.sha256 }));
      policy = new HfPolicy(this.frozen.get(dir)!, new LoraAdapter(this.frozen.get(dir)!.config, header.lora));
    } else policy = new HfPolicy(Object.assign(HfCausalLM.load(dir), { sha256: header.sha256 }));
    const played: HfPlayed = {
      model: policy,
      tokenizer,
      header,
      dispose: () => (header.lora ? policy.dispose() : policy.base.dispose()),
    };
    if (!this.assign(played, header, values)) {
      played.dispose();
      throw new Error(`weights: the blob of model '${model}' does not fit its base ${dir} (names or shapes differ)`);
    }
    return played;
  }

  /** Writes `blob`'s weights into `held` in place when it is the same base and the same adapter settings; false otherwise. */
  loadInto(held: HfPlayed, blob: Buffer): boolean {
    const { header, values } = unframe<HfHeader>(blob);
    const h = held.header;
    if (
      h.base !== header.base ||
      h.sha256 !== header.sha256 ||
      h.tokenizerSha256 !== header.tokenizerSha256 ||
      JSON.stringify(h.lora) !== JSON.stringify(header.lora)
    )
      return false;
    return this.assign(held, header, values);
  }

  private assign(held: HfPlayed, header: HfHeader, values: Float32Array): boolean {
    const weights = held.model.weights;
    if (
      header.names.length !== Object.keys(weights).length ||
      header.names.some((n, k) => !weights[n] || weights[n].shape.join() !== header.shapes[k].join())
    )
      return false;
    let offset = 0;
    header.names.forEach((n, k) => {
      const size = header.shapes[k].reduce((a, b) => a * b, 1);
      tf.tidy(() => weights[n].assign(tf.tensor(values.subarray(offset, offset + size), header.shapes[k])));
      offset += size;
    });
    if (offset !== values.length) throw new Error(`weights: ${values.length} values for ${offset} parameters`);
    return true;
  }

  /** The directory this worker reads `header`'s base from, its hashes checked against the learner's. */
  private checked(model: string, header: HfHeader): string {
    const dir = this.local(header.base);
    const mapped = dir === header.base ? '' : ` (mapped by --base from ${header.base})`;
    if (!existsSync(join(dir, 'config.json')))
      throw new BaseRefused(
        `model '${model}': the learner's base ${header.base} is not at ${resolve(dir)}${mapped} on this worker; start the worker where it is, or with --base ${header.base}=DIR`,
      );
    const key = resolve(dir);
    if (!this.hashes.has(key)) this.hashes.set(key, baseSha256(dir));
    const mine = this.hashes.get(key)!;
    if (mine !== header.sha256)
      throw new BaseRefused(
        `model '${model}': this worker's base ${dir}${mapped} has sha256 ${mine}, the learner's base ${header.base} ` +
          `has sha256 ${header.sha256}: not the same model; give the worker the learner's base`,
      );
    const tokens = tokenizerSha256(dir);
    if (tokens !== header.tokenizerSha256)
      throw new BaseRefused(
        `model '${model}': this worker's tokenizer files in ${dir}${mapped} have sha256 ${tokens}, the learner's in ${header.base} have ${header.tokenizerSha256}: prompts would be other ids`,
      );
    return dir;
  }

  dispose(): void {
    for (const b of this.frozen.values()) b.dispose();
    this.frozen.clear();
  }
}
