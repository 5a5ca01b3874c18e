import * as tf from '@tensorflow/tfjs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Saves an optimizer's state (Adam's step count and moments) beside a model checkpoint,
 * so a resumed run continues the same optimisation rather than restarting Adam.
 */
export async function saveOptimizerState(dir: string, optimizer: tf.Optimizer): Promise<void> {
  const weights = await optimizer.getWeights();
  const { data, specs } = await tf.io.encodeWeights(weights);
  tf.dispose(weights.filter((w) => w.name === 'iter').map((w) => w.tensor)); // a fresh scalar each call; the rest are the optimizer's own
  await writeFile(join(dir, 'optimizer.bin'), new Uint8Array(data));
  await writeFile(join(dir, 'optimizer.json'), JSON.stringify({ specs }));
}

/** Restores what saveOptimizerState wrote; a missing file leaves the optimizer fresh and says so. */
export async function loadOptimizerState(dir: string, optimizer: tf.Optimizer): Promise<boolean> {
  let specs: tf.io.WeightsManifestEntry[];
  try {
    specs = JSON.parse(await readFile(join(dir, 'optimizer.json'), 'utf8')).specs;
  } catch {
    return false;
  }
  const bin = new Uint8Array(await readFile(join(dir, 'optimizer.bin')));
  const map = tf.io.decodeWeights(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength), specs);
  await optimizer.setWeights(specs.map((s) => ({ name: s.name, tensor: map[s.name] })));
  tf.dispose(Object.values(map)); // setWeights copied them into the optimizer's variables
  return true;
}
