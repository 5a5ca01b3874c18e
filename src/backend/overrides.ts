import * as tf from '@tensorflow/tfjs';

/**
 * Kernels this package puts in place of a backend's own, with the ones they replaced, so
 * that turning a fast path off restores tfjs's kernels exactly. Kernels are per backend and
 * per process (each worker thread has its own registry).
 */
const replaced = new Map<string, tf.KernelConfig | null>();
const key = (backendName: string, kernelName: string) => `${backendName}/${kernelName}`;

/** The backend's own kernel for `kernelName` (the one in place before any override), if it has one. */
export function ownKernel(kernelName: string, backendName: string): tf.KernelConfig | undefined {
  const k = key(backendName, kernelName);
  return replaced.has(k) ? (replaced.get(k) ?? undefined) : tf.getKernel(kernelName, backendName);
}

/** Registers `config`, remembering the kernel it displaces the first time. */
export function override(config: tf.KernelConfig): void {
  const k = key(config.backendName, config.kernelName);
  if (!replaced.has(k)) replaced.set(k, tf.getKernel(config.kernelName, config.backendName) ?? null);
  if (tf.getKernel(config.kernelName, config.backendName)) tf.unregisterKernel(config.kernelName, config.backendName);
  tf.registerKernel(config);
}

/** Puts back the backend's own kernels (or none, for a kernel it never had). */
export function restore(backendName: string, kernelNames: readonly string[]): void {
  for (const name of kernelNames) {
    const k = key(backendName, name);
    if (!replaced.has(k)) continue;
    const own = replaced.get(k);
    if (tf.getKernel(name, backendName)) tf.unregisterKernel(name, backendName);
    if (own) tf.registerKernel(own);
    replaced.delete(k);
  }
}
