import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

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

const FORMAT = 'coevolve-checkpoint';

/**
 * Writes TensorFlow.js's model-artifacts layout: `model.json` (format, weightsManifest,
 * our metadata) and `weights.bin` (float32, in manifest order), with `config.json` and
 * `tokenizer.json` beside them for people and tools. The files are written to a sibling
 * temporary folder and renamed into place, so a crash never leaves half a checkpoint.
 */
export async function saveCheckpoint(dir: string, meta: CheckpointMeta, weights: Record<string, tf.Tensor>): Promise<void> {
  const { data, specs } = await tf.io.encodeWeights(weights);
  const bin = new Uint8Array(data);
  const modelJson = {
    format: FORMAT,
    generatedBy: `coevolve ${meta.kind}`,
    convertedBy: null,
    modelTopology: { kind: meta.kind, config: meta.config },
    weightsManifest: [{ paths: ['weights.bin'], weights: specs }],
    userDefinedMetadata: { sha256: sha256(bin), bytes: bin.byteLength, tokenizer: meta.tokenizer ?? null, extra: meta.extra ?? {} },
  };
  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  await writeFile(join(tmp, 'weights.bin'), bin);
  await writeFile(join(tmp, 'config.json'), JSON.stringify(meta.config, null, 2));
  if (meta.tokenizer) await writeFile(join(tmp, 'tokenizer.json'), JSON.stringify(meta.tokenizer, null, 2));
  await writeFile(join(tmp, 'model.json'), JSON.stringify(modelJson, null, 2));
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

/**
 * Reads a checkpoint back and checks it: the format, the byte count and sha256 of
 * `weights.bin`, and that every weight `expectedShapes(config)` names is present with
 * that shape and nothing else is. Any mismatch is an error naming the file and weight.
 */
export async function loadCheckpoint(
  dir: string,
  expectedShapes: (kind: string, config: unknown) => Record<string, number[]>,
): Promise<{ meta: CheckpointMeta; weights: Record<string, tf.Tensor> }> {
  const where = join(dir, 'model.json');
  let parsed: Record<string, any>;
  try {
    parsed = JSON.parse(await readFile(where, 'utf8'));
  } catch (err) {
    throw new Error(`checkpoint: cannot read ${where}: ${(err as Error).message}`);
  }
  if (parsed.format !== FORMAT) throw new Error(`checkpoint: ${where} has format '${parsed.format}', expected '${FORMAT}'`);
  const kind = parsed.modelTopology?.kind;
  const config = parsed.modelTopology?.config;
  const specs: tf.io.WeightsManifestEntry[] = parsed.weightsManifest?.[0]?.weights ?? [];
  const udm = parsed.userDefinedMetadata ?? {};
  const bin = new Uint8Array(await readFile(join(dir, 'weights.bin')));
  if (bin.byteLength !== udm.bytes) throw new Error(`checkpoint: ${dir}/weights.bin has ${bin.byteLength} bytes, model.json says ${udm.bytes}`);
  if (sha256(bin) !== udm.sha256) throw new Error(`checkpoint: ${dir}/weights.bin is corrupt (sha256 does not match model.json)`);
  const want = expectedShapes(kind, config);
  const got = new Map(specs.map((s) => [s.name, s.shape]));
  for (const [name, shape] of Object.entries(want)) {
    const have = got.get(name);
    if (!have) throw new Error(`checkpoint: ${where} lacks weight '${name}' that a ${kind} with this config needs`);
    if (have.join('x') !== shape.join('x')) throw new Error(`checkpoint: weight '${name}' has shape [${have}], config needs [${shape}]`);
  }
  const extra = [...got.keys()].filter((n) => !(n in want));
  if (extra.length) throw new Error(`checkpoint: ${where} has weights this config does not use: ${extra.join(', ')}`);
  const weights = tf.io.decodeWeights(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength), specs);
  return { meta: { kind, config, tokenizer: udm.tokenizer ?? undefined, extra: udm.extra ?? {} }, weights };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
