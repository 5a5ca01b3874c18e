import * as tf from '@tensorflow/tfjs';
import { ADDRESSABLE, withOutput } from './views.js';

/**
 * Registers, for `backendName`, the kernels that training needs and that backend lacks.
 * The wasm backend has no `UnsortedSegmentSum`, which is the gradient of `tf.gather`
 * (embedding lookups); without it every backward pass through an embedding throws.
 * The JS kernel below sums on the host, into the output's memory where the backend allows.
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

/**
 * out[s, ...] = sum of x[i, ...] over every i with segmentIds[i] == s; ids outside [0, numSegments)
 * are dropped, as in TensorFlow. On wasm and cpu the output is written in place (an embedding's
 * gradient is vocabulary x width: 78 MB for Qwen's 151,669 x 128, which a copy in and out
 * turned into half a second a step); elsewhere through the backend's read and write.
 */
const unsortedSegmentSum: tf.KernelFunc = ({ inputs, attrs, backend }) => {
  const { x, segmentIds } = inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
  const numSegments = (attrs as { numSegments: number }).numSegments;
  const be = backend as tf.KernelBackend;
  const ids = be.readSync(segmentIds.dataId) as Int32Array;
  const shape = [numSegments, ...x.shape.slice(segmentIds.shape.length)];
  const name = tf.getBackend();
  if (ADDRESSABLE.has(name) && x.dtype === 'float32') {
    const v = withOutput(name, backend, shape, [x]);
    v.out.fill(0); // the heap's memory may hold an earlier tensor's values
    accumulate(v.ins[0], ids, v.out);
    return v.info;
  }
  const values = be.readSync(x.dataId) as Float32Array;
  const out = new Float32Array(tf.util.sizeFromShape(shape));
  accumulate(values, ids, out);
  const dataId = be.write(out, shape, 'float32');
  return { dataId, shape, dtype: 'float32' };
};

function accumulate(values: Float32Array, ids: Int32Array, out: Float32Array): void {
  const inner = ids.length === 0 ? 0 : values.length / ids.length;
  const segments = inner === 0 ? 0 : out.length / inner;
  for (let i = 0; i < ids.length; i++) {
    const s = ids[i];
    if (s < 0 || s >= segments) continue;
    const src = i * inner;
    const dst = s * inner;
    for (let j = 0; j < inner; j++) out[dst + j] += values[src + j];
  }
}
