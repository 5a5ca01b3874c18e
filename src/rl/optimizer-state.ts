import * as tf from '@tensorflow/tfjs';
import type { Attachments } from '../models/checkpoint.js';
import { isHostAdam, type HostWeight } from './host-adam.js';

const BIN = 'optimizer.bin';
const JSON_FILE = 'optimizer.json';
/** the attachments that hold an optimizer state */
export const OPTIMIZER_FILES = [JSON_FILE, BIN] as const;

/**
 * An optimizer's state (Adam's step count and moments) as checkpoint attachments, so it is
 * saved inside the model's checkpoint and hashed with it, and a resumed run continues the
 * same optimisation rather than restarting Adam.
 */
export async function encodeOptimizerState(optimizer: tf.Optimizer): Promise<Attachments> {
  if (isHostAdam(optimizer)) return encodeHost(optimizer.hostWeights());
  const weights = await optimizer.getWeights();
  const { data, specs } = await tf.io.encodeWeights(weights);
  tf.dispose(weights.filter((w) => w.name === 'iter').map((w) => w.tensor)); // a fresh scalar each call; the rest are the optimizer's own
  return { [BIN]: new Uint8Array(data), [JSON_FILE]: JSON.stringify({ specs }) };
}

/**
 * Restores the state from a checkpoint's attachments (already checked against its hashes).
 * A checkpoint without optimizer state is an error naming it: a silently fresh Adam would
 * make the resumed run differ from the one that was killed.
 */
export async function restoreOptimizerState(
  where: string,
  attachments: Record<string, Uint8Array>,
  optimizer: tf.Optimizer,
): Promise<void> {
  const json = attachments[JSON_FILE];
  const bin = attachments[BIN];
  if (!json || !bin)
    throw new Error(
      `${where} holds no optimizer state (${JSON_FILE}, ${BIN}); resume with --fresh-optimizer to restart the optimizer`,
    );
  let specs: tf.io.WeightsManifestEntry[];
  let map: tf.NamedTensorMap;
  try {
    specs = JSON.parse(new TextDecoder().decode(json)).specs;
    const bytes = specs.reduce((n, s) => n + 4 * s.shape.reduce((a, b) => a * b, 1), 0);
    if (bytes !== bin.byteLength)
      throw new Error(`${BIN} has ${bin.byteLength} bytes, ${JSON_FILE} describes ${bytes}`);
    if (isHostAdam(optimizer)) {
      optimizer.setHostWeights(decodeHost(bin, specs));
      return;
    }
    map = tf.io.decodeWeights(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength) as ArrayBuffer, specs);
  } catch (e) {
    throw new Error(`${where}/${JSON_FILE}: cannot read the optimizer state: ${(e as Error).message}`);
  }
  try {
    await optimizer.setWeights(specs.map((s) => ({ name: s.name, tensor: map[s.name] })));
    replayBiasCorrection(optimizer);
  } catch (e) {
    throw new Error(`${where}/${JSON_FILE}: the optimizer state does not fit this model: ${(e as Error).message}`);
  } finally {
    tf.dispose(Object.values(map)); // setWeights copied them into the optimizer's variables
  }
}

/**
 * tfjs's Adam restores its bias-correction powers as pow(beta, t + 1), while training reached
 * them by t float32 products: the two differ in the last bit, and so would every update after
 * a resume. They are recomputed here as training computes them, so a resumed run continues
 * bit for bit.
 */
function replayBiasCorrection(optimizer: tf.Optimizer): void {
  const adam = optimizer as unknown as {
    accBeta1?: tf.Variable;
    accBeta2?: tf.Variable;
    beta1: number;
    beta2: number;
    iterations: number;
  };
  if (!adam.accBeta1 || !adam.accBeta2) return;
  tf.tidy(() => {
    let b1 = tf.scalar(adam.beta1);
    let b2 = tf.scalar(adam.beta2);
    for (let t = 0; t < adam.iterations; t++) {
      b1 = tf.mul(b1, adam.beta1);
      b2 = tf.mul(b2, adam.beta2);
    }
    adam.accBeta1!.assign(b1);
    adam.accBeta2!.assign(b2);
  });
}

/** tf.io.encodeWeights's layout (each tensor's bytes in turn, little-endian) from Node's memory: no tensor is made. */
function encodeHost(weights: HostWeight[]): Attachments {
  const bytes = new Uint8Array(weights.reduce((n, w) => n + w.data.byteLength, 0));
  let at = 0;
  for (const w of weights) {
    bytes.set(new Uint8Array(w.data.buffer, w.data.byteOffset, w.data.byteLength), at);
    at += w.data.byteLength;
  }
  const specs = weights.map((w) => ({ name: w.name, shape: w.shape, dtype: w.dtype }));
  return { [BIN]: bytes, [JSON_FILE]: JSON.stringify({ specs }) };
}

/** The tensors of a state written either way, as arrays in Node's memory. */
function decodeHost(bin: Uint8Array, specs: tf.io.WeightsManifestEntry[]): HostWeight[] {
  let at = 0;
  return specs.map((s) => {
    const n = s.shape.reduce((a, b) => a * b, 1);
    const slice = bin.slice(at, at + 4 * n).buffer;
    at += 4 * n;
    const dtype = s.dtype === 'int32' ? 'int32' : 'float32';
    return {
      name: s.name,
      shape: s.shape,
      dtype,
      data: dtype === 'int32' ? new Int32Array(slice) : new Float32Array(slice),
    };
  });
}
