import * as tf from '@tensorflow/tfjs';

/** The backends whose fused kernels are on (a leaf, so each kernel can ask without importing the set-up). */
export const active = new Set<string>();

/** Whether the fused kernels serve `backendName` (the one in use by default). */
export function fusedKernelsActive(backendName = tf.getBackend()): boolean {
  return active.has(backendName);
}
