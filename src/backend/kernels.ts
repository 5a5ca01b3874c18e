import * as tf from '@tensorflow/tfjs';

/**
 * Registers, for `backendName`, the kernels that training needs and that backend lacks.
 * The wasm backend has no `UnsortedSegmentSum`, which is the gradient of `tf.gather`
 * (embedding lookups); without it every backward pass through an embedding throws.
 * The JS kernel below reads its inputs, sums on the host and writes the result back:
 * the sizes involved (vocabulary x width) are small enough that this is not a hot spot.
 */
export function registerMissingKernels(backendName: string): string[] {
  const added = (registered[backendName] ??= []);
  if (!tf.getKernel('UnsortedSegmentSum', backendName)) {
    tf.registerKernel({ kernelName: 'UnsortedSegmentSum', backendName, kernelFunc: unsortedSegmentSum });
    added.push('UnsortedSegmentSum');
  }
  return [...added];
}

/** Kernels this package registered, per backend, so every report names them, not just the first. */
const registered: Record<string, string[]> = {};

/** out[s, ...] = sum of x[i, ...] over every i with segmentIds[i] == s; ids outside [0, numSegments) are dropped, as in TensorFlow. */
const unsortedSegmentSum: tf.KernelFunc = ({ inputs, attrs, backend }) => {
  const { x, segmentIds } = inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
  const numSegments = (attrs as { numSegments: number }).numSegments;
  const be = backend as tf.KernelBackend;
  const values = be.readSync(x.dataId) as Float32Array;
  const ids = be.readSync(segmentIds.dataId) as Int32Array;
  const inner = ids.length === 0 ? 0 : values.length / ids.length;
  const out = new Float32Array(numSegments * inner);
  for (let i = 0; i < ids.length; i++) {
    const s = ids[i];
    if (s < 0 || s >= numSegments) continue;
    const src = i * inner;
    const dst = s * inner;
    for (let j = 0; j < inner; j++) out[dst + j] += values[src + j];
  }
  const shape = [numSegments, ...x.shape.slice(segmentIds.shape.length)];
  const dataId = be.write(out, shape, 'float32');
  return { dataId, shape, dtype: 'float32' };
};
