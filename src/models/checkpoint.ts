import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** What a checkpoint holds besides the weights: plain JSON. */
export interface CheckpointMeta {
  /** which model class reads it back ('tinylm', 'mlp') */
  kind: string;
  /** the model's config */
  config: unknown;
  /** the tokenizer's spec, for language models */
  tokenizer?: unknown;
  /** anything else the caller wants beside (iteration, metrics) */
  extra?: Record<string, unknown>;
}

/** More files saved in the checkpoint and hashed with it (optimizer state, a held-out set). */
export type Attachments = Record<string, Uint8Array | string>;

const FORMAT = 'coevolve-checkpoint';
const MODEL_JSON = 'model.json';
/** files every checkpoint writes itself; attachments add to them */
const OWN_FILES = [MODEL_JSON, 'weights.bin', 'config.json', 'tokenizer.json'];

/**
 * Writes TensorFlow.js's model-artifacts layout: `model.json` (format, weightsManifest,
 * our metadata) and `weights.bin` (float32, in manifest order), with `config.json` and
 * `tokenizer.json` beside them for people and tools, plus any attachments. `model.json`
 * records the sha256 of every other file and of itself, so a load checks the checkpoint
 * whole. The files are written to a sibling temporary folder and renamed into place, so a
 * crash never leaves half a checkpoint; an existing folder is replaced only if it is a
 * checkpoint (or empty), never a folder of other files.
 */
export async function saveCheckpoint(
  dir: string,
  meta: CheckpointMeta,
  weights: Record<string, tf.Tensor>,
  attachments: Attachments = {},
): Promise<void> {
  checkReplaceable(dir);
  const { data, specs } = await tf.io.encodeWeights(weights);
  const files: Record<string, Uint8Array> = {
    'weights.bin': new Uint8Array(data),
    'config.json': utf8(JSON.stringify(meta.config, null, 2)),
  };
  if (meta.tokenizer) files['tokenizer.json'] = utf8(JSON.stringify(meta.tokenizer, null, 2));
  for (const [name, body] of Object.entries(attachments)) {
    // a name the checkpoint writes itself is refused; tokenizer.json is free when there is no tokenizer spec (a Hugging Face model brings its own)
    if (name in files || name === MODEL_JSON || basename(name) !== name || name.startsWith('.'))
      throw new Error(`checkpoint: attachment name '${name}' is not a plain file name of its own`);
    files[name] = typeof body === 'string' ? utf8(body) : body;
  }
  const modelJson = seal({
    format: FORMAT,
    generatedBy: `coevolve ${meta.kind}`,
    convertedBy: null,
    modelTopology: { kind: meta.kind, config: meta.config },
    weightsManifest: [{ paths: ['weights.bin'], weights: specs }],
    userDefinedMetadata: { tokenizer: meta.tokenizer ?? null, extra: meta.extra ?? {} },
    integrity: {
      files: Object.fromEntries(Object.entries(files).map(([n, b]) => [n, { bytes: b.byteLength, sha256: sha256(b) }])),
    },
  });
  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  for (const [name, body] of Object.entries(files)) await writeFile(join(tmp, name), body);
  await writeFile(join(tmp, MODEL_JSON), JSON.stringify(modelJson, null, 2));
  if (existsSync(dir)) {
    // the old one moves aside first: a kill between the renames leaves it whole beside
    const old = `${dir}.old-${process.pid}`;
    await rm(old, { recursive: true, force: true });
    await rename(dir, old);
    await rename(tmp, dir);
    await rm(old, { recursive: true, force: true });
  } else await rename(tmp, dir);
}

/**
 * Throws unless `dir` is absent, empty, or a checkpoint (a `model.json` of ours and only the
 * files it lists): saving there must never delete someone else's files.
 */
export function checkReplaceable(dir: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new Error(`checkpoint: ${dir} exists and is not a folder`);
  const present = readdirSync(dir);
  if (present.length === 0) return;
  const listed = new Set([...OWN_FILES, ...listedFiles(dir)]);
  const foreign = present.filter((f) => !listed.has(f));
  if (!present.includes(MODEL_JSON) || foreign.length > 0) {
    const shown = (foreign.length ? foreign : present).slice(0, 5).join(', ');
    throw new Error(
      `checkpoint: ${dir} holds files that are not a checkpoint's (${shown}${foreign.length > 5 ? ', ...' : ''}); refusing to replace it`,
    );
  }
}

function listedFiles(dir: string): string[] {
  try {
    const json = JSON.parse(readFileSync(join(dir, MODEL_JSON), 'utf8'));
    return json?.format === FORMAT && json.integrity?.files ? Object.keys(json.integrity.files) : [];
  } catch {
    return [];
  }
}

/** How to read a checkpoint: `ignore` names attachments not to read or check (a state the caller will not use). */
export interface LoadOptions {
  ignore?: readonly string[];
}

/** A checkpoint read and checked whole: its model.json and the bytes of every file it lists. */
export interface VerifiedCheckpoint {
  json: Record<string, any>;
  files: Record<string, Uint8Array>;
}

/**
 * Reads `dir` and checks it whole: the format, model.json's own hash (so an edited
 * tokenizer or config is caught), and the byte count and sha256 of every file it lists.
 * Any mismatch is an error naming the file.
 */
export async function verifyCheckpoint(dir: string, o: LoadOptions = {}): Promise<VerifiedCheckpoint> {
  const where = join(dir, MODEL_JSON);
  let json: Record<string, any>;
  try {
    json = JSON.parse(await readFile(where, 'utf8'));
  } catch (err) {
    throw new Error(`checkpoint: cannot read ${where}: ${(err as Error).message}`);
  }
  if (json?.format !== FORMAT)
    throw new Error(`checkpoint: ${where} has format '${json?.format}', expected '${FORMAT}'`);
  const recorded = json.integrity?.files;
  if (typeof recorded !== 'object' || recorded === null || typeof json.integrity.sha256 !== 'string') {
    throw new Error(
      `checkpoint: ${where} records no hashes of its files (written by an older coevolve); save it again`,
    );
  }
  if (seal(json as { integrity: { files: unknown } }).integrity.sha256 !== json.integrity.sha256)
    throw new Error(`checkpoint: ${where} was altered (its sha256 does not match its content)`);
  const files: Record<string, Uint8Array> = {};
  for (const [name, want] of Object.entries(recorded as Record<string, { bytes: number; sha256: string }>)) {
    if (o.ignore?.includes(name)) continue;
    const path = join(dir, name);
    if (!existsSync(path)) throw new Error(`checkpoint: ${path} is missing (${MODEL_JSON} lists it)`);
    const bytes = new Uint8Array(await readFile(path));
    if (bytes.byteLength !== want.bytes)
      throw new Error(`checkpoint: ${path} has ${bytes.byteLength} bytes, ${MODEL_JSON} says ${want.bytes}`);
    if (sha256(bytes) !== want.sha256)
      throw new Error(`checkpoint: ${path} is corrupt (sha256 does not match ${MODEL_JSON})`);
    files[name] = bytes;
  }
  return { json, files };
}

/**
 * Reads a checkpoint back, checked whole (see verifyCheckpoint), and checks that every
 * weight `expectedShapes(config)` names is present with that shape and nothing else is.
 */
export async function loadCheckpoint(
  dir: string,
  expectedShapes: (kind: string, config: unknown) => Record<string, number[]>,
  o: LoadOptions = {},
): Promise<{ meta: CheckpointMeta; weights: Record<string, tf.Tensor>; attachments: Record<string, Uint8Array> }> {
  const where = join(dir, MODEL_JSON);
  if (o.ignore?.some((n) => OWN_FILES.includes(n)))
    throw new Error(`checkpoint: only attachments can be ignored, not ${o.ignore.join(', ')}`);
  const { json, files } = await verifyCheckpoint(dir, o);
  const kind = json.modelTopology?.kind;
  const config = json.modelTopology?.config;
  const specs: tf.io.WeightsManifestEntry[] = json.weightsManifest?.[0]?.weights ?? [];
  const udm = json.userDefinedMetadata ?? {};
  const bin = files['weights.bin'];
  if (!bin) throw new Error(`checkpoint: ${where} lists no weights.bin`);
  const want = expectedShapes(kind, config);
  const got = new Map(specs.map((s) => [s.name, s.shape]));
  for (const [name, shape] of Object.entries(want)) {
    const have = got.get(name);
    if (!have) throw new Error(`checkpoint: ${where} lacks weight '${name}' that a ${kind} with this config needs`);
    if (have.join('x') !== shape.join('x'))
      throw new Error(`checkpoint: weight '${name}' has shape [${have}], config needs [${shape}]`);
  }
  const extra = [...got.keys()].filter((n) => !(n in want));
  if (extra.length) throw new Error(`checkpoint: ${where} has weights this config does not use: ${extra.join(', ')}`);
  const weights = tf.io.decodeWeights(
    bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength) as ArrayBuffer,
    specs,
  );
  const own = udm.tokenizer ? OWN_FILES : OWN_FILES.filter((n) => n !== 'tokenizer.json');
  const attachments = Object.fromEntries(Object.entries(files).filter(([n]) => !own.includes(n)));
  return {
    meta: { kind, config, tokenizer: udm.tokenizer ?? undefined, extra: udm.extra ?? {} },
    weights,
    attachments,
  };
}

/** model.json with `integrity.sha256` set to the hash of everything else in it. */
export function seal<T extends { integrity: { files: unknown } }>(json: T): T & { integrity: { sha256: string } } {
  const { sha256: _, ...integrity } = json.integrity as { sha256?: string; files: unknown };
  const body = { ...json, integrity };
  return { ...body, integrity: { ...integrity, sha256: sha256(utf8(JSON.stringify(body))) } };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
