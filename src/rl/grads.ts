import * as tf from '@tensorflow/tfjs';

/**
 * Gradients as they cross threads: keyed by the variable's index in `variables()` order
 * (names differ between a model and its replica), each in its own buffer so it can be
 * transferred. Variables without a gradient are absent, as in `tf.variableGrads`.
 */
export type IndexedGrads = Record<number, Float32Array>;

/** Reads and disposes `grads`. */
export function toIndexed(vars: readonly tf.Variable[], grads: tf.NamedTensorMap): IndexedGrads {
  const index = new Map(vars.map((v, i) => [v.name, i]));
  const out: IndexedGrads = {};
  for (const [name, g] of Object.entries(grads)) out[index.get(name)!] = new Float32Array(g.dataSync());
  tf.dispose(Object.values(grads));
  return out;
}

/** Adds a replica's gradients into `sum` (named by this thread's variables). */
export function addIndexed(
  sum: tf.NamedTensorMap,
  vars: readonly tf.Variable[],
  grads: IndexedGrads,
): tf.NamedTensorMap {
  const named: tf.NamedTensorMap = {};
  for (const [i, data] of Object.entries(grads)) named[vars[Number(i)].name] = tf.tensor(data, vars[Number(i)].shape);
  return addGrads(sum, named);
}

/** Adds `more` into `sum` (a variable may be missing from either), disposing what it replaces. */
export function addGrads(sum: tf.NamedTensorMap, more: tf.NamedTensorMap): tf.NamedTensorMap {
  for (const [k, g] of Object.entries(more)) {
    const prev = sum[k];
    sum[k] = prev ? tf.add(prev, g) : g;
    if (prev) tf.dispose([prev, g]);
  }
  return sum;
}
