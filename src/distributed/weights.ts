/**
 * Model weights by version, where rollout workers can fetch them: one binary blob per model
 * and version (a JSON header with the architecture and the tokenizer, then every variable's
 * float32 values in the model's order; a Hugging Face policy's header names its base instead,
 * see hf-weights.ts), in Redis under `<prefix>:weights:<model>:<version>`
 * or in a directory as `<dir>/<model>/<version>.bin`. Versions are the learner's iterations:
 * version v holds the weights after v updates.
 */
import * as tf from '@tensorflow/tfjs';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { TinyLM, type TinyLMConfig } from '../models/tinylm.js';
import { CharTokenizer, type TokenizerSpec } from '../tokenizer/index.js';

interface Header {
  config: TinyLMConfig;
  tokenizer: TokenizerSpec;
  sizes: number[];
}

/** One buffer: a 4-byte header length, the JSON header, then every array's float32 values in order. */
export function frame(header: object, arrays: readonly Float32Array[]): Buffer {
  const head = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(head.length);
  return Buffer.concat([
    length,
    head,
    ...arrays.map((a) => Buffer.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength))),
  ]);
}

/** The header and values of a framed buffer. */
export function unframe<H>(blob: Buffer): { header: H; values: Float32Array } {
  const n = blob.readUInt32LE(0);
  const header = JSON.parse(blob.subarray(4, 4 + n).toString('utf8')) as H;
  return {
    header,
    values: new Float32Array(blob.buffer.slice(blob.byteOffset + 4 + n, blob.byteOffset + blob.length)),
  };
}

/** Which model a blob holds: a Hugging Face policy (src/distributed/hf-weights.ts), or a TinyLM (no kind, as blobs always were). */
export function blobKind(blob: Buffer): 'hf' | 'tinylm' {
  return unframe<{ kind?: string }>(blob).header.kind === 'hf' ? 'hf' : 'tinylm';
}

/** A TinyLM's weights as one buffer (see frame). */
export function encodeWeights(model: TinyLM, tokenizer: CharTokenizer): Buffer {
  const vars = model.variables();
  return frame(
    { config: model.config, tokenizer: tokenizer.spec, sizes: vars.map((v) => v.size) } satisfies Header,
    vars.map((v) => v.dataSync() as Float32Array),
  );
}

const readHeader = (blob: Buffer) => unframe<Header>(blob);

function assignAll(model: TinyLM, values: Float32Array): void {
  let offset = 0;
  for (const v of model.variables()) {
    tf.tidy(() => v.assign(tf.tensor(values.subarray(offset, offset + v.size), v.shape)));
    offset += v.size;
  }
  if (offset !== values.length) throw new Error(`weights: ${values.length} values for ${offset} parameters`);
}

/** A fresh TinyLM holding the weights of `blob`, and its tokenizer. */
export function decodeWeights(blob: Buffer): { model: TinyLM; tokenizer: CharTokenizer } {
  const { header, values } = readHeader(blob);
  const model = new TinyLM(header.config);
  if (
    model
      .variables()
      .map((v) => v.size)
      .join() !== header.sizes.join()
  )
    throw new Error('weights: the blob does not fit the architecture it names');
  assignAll(model, values);
  return { model, tokenizer: CharTokenizer.fromSpec(header.tokenizer) };
}

/** Writes `blob`'s weights into `model` in place when the architecture is the same; false otherwise. */
export function loadWeightsInto(model: TinyLM, blob: Buffer): boolean {
  const { header, values } = readHeader(blob);
  if (JSON.stringify(header.config) !== JSON.stringify(model.config)) return false;
  assignAll(model, values);
  return true;
}

/** Where versions are published and fetched from. */
export interface WeightStore {
  put(model: string, version: number, blob: Buffer): Promise<void>;
  /** the blob, or undefined when that version is not (or no longer) published */
  get(model: string, version: number): Promise<Buffer | undefined>;
  /** drops versions older than `keepFrom` */
  prune(model: string, keepFrom: number): Promise<void>;
}

export function redisWeights(redis: Redis, prefix: string): WeightStore {
  const key = (model: string, version: number) => `${prefix}:weights:${model}:${version}`;
  return {
    async put(model, version, blob) {
      await redis.set(key(model, version), blob);
      await redis.sadd(`${prefix}:weights:${model}`, String(version));
    },
    async get(model, version) {
      return (await redis.getBuffer(key(model, version))) ?? undefined;
    },
    async prune(model, keepFrom) {
      const old = (await redis.smembers(`${prefix}:weights:${model}`)).filter((v) => Number(v) < keepFrom);
      if (old.length) {
        await redis.del(...old.map((v) => key(model, Number(v))));
        await redis.srem(`${prefix}:weights:${model}`, ...old);
      }
    },
  };
}

export function directoryWeights(dir: string): WeightStore {
  const file = (model: string, version: number) => join(dir, model, `${version}.bin`);
  return {
    async put(model, version, blob) {
      mkdirSync(join(dir, model), { recursive: true });
      // written whole, then renamed: a worker never reads half a version
      writeFileSync(`${file(model, version)}.tmp`, blob);
      renameSync(`${file(model, version)}.tmp`, file(model, version));
    },
    async get(model, version) {
      return existsSync(file(model, version)) ? readFileSync(file(model, version)) : undefined;
    },
    async prune(model, keepFrom) {
      for (let v = keepFrom - 1; v >= 0 && existsSync(file(model, v)); v--) rmSync(file(model, v));
    },
  };
}
