import * as tf from '@tensorflow/tfjs';
import { loadNative, nativeUnavailable, type Sgemm } from './library.js';
import { nativeMatMulKernels } from './matmul.js';

/** `auto`: native products when a library loads, else tfjs's own; `off`: always tfjs's own (the reference path). */
export type Accelerate = 'auto' | 'off';
export const ACCELERATE_CHOICES: readonly Accelerate[] = ['auto', 'off'];

/** Backends whose tensor memory the native kernels can address. */
const SUPPORTED = new Set(['wasm', 'cpu']);
const KERNELS = ['BatchMatMul', '_FusedMatMul'];

/** The kernels each backend had before ours, to fall back on and to restore. */
const originals: Record<string, Record<string, tf.KernelConfig>> = {};
/** The sgemm serving each backend now, for code that computes outside tfjs (generation). */
const active: Record<string, Sgemm | undefined> = {};

/** The native sgemm serving the backend in use, or undefined when its products are tfjs's own. */
export function activeSgemm(): Sgemm | undefined {
  return active[tf.getBackend()];
}

/** The library serving `backendName`'s products now, or undefined. */
export function activeLibrary(backendName: string): string | undefined {
  return active[backendName] ? loadNative()?.name : undefined;
}

export interface Acceleration {
  /** the library now serving matrix products, or undefined for tfjs's own kernels */
  library?: string;
  /** why no library serves them, when asked for `auto` */
  why?: string;
}

/**
 * Puts the matrix-product kernels of `backendName` on a native sgemm (`auto`) or back on
 * tfjs's own (`off`). Kernels are per backend and per process (each worker thread has its
 * own registry), so this is called once per backend after it initialises.
 */
export function setAccelerate(backendName: string, mode: Accelerate): Acceleration {
  if (!ACCELERATE_CHOICES.includes(mode)) throw new Error(`accelerate: unknown choice '${String(mode)}'; known: ${ACCELERATE_CHOICES.join(', ')}`);
  // cached only once complete (ours replace them only then), so a call before the backend registered its kernels is not remembered
  const saved = originals[backendName] ?? Object.fromEntries(KERNELS.flatMap((k) => {
    const c = tf.getKernel(k, backendName);
    return c ? [[k, c]] : [];
  }));
  if (KERNELS.every((k) => saved[k])) originals[backendName] = saved;
  const restore = () => {
    for (const k of KERNELS) {
      if (!saved[k]) continue;
      if (tf.getKernel(k, backendName)) tf.unregisterKernel(k, backendName);
      tf.registerKernel(saved[k]);
    }
  };
  active[backendName] = undefined;
  if (mode === 'off') {
    restore();
    return {};
  }
  if (!SUPPORTED.has(backendName)) return { why: `native products are wired for wasm and cpu, not '${backendName}'` };
  if (KERNELS.some((k) => !saved[k])) return { why: `backend '${backendName}' lacks ${KERNELS.filter((k) => !saved[k]).join(', ')}` };
  const lib = loadNative();
  if (!lib) return { why: nativeUnavailable() };
  restore();
  for (const config of nativeMatMulKernels(backendName, lib.sgemm, saved)) {
    tf.unregisterKernel(config.kernelName, backendName);
    tf.registerKernel(config);
  }
  active[backendName] = lib.sgemm;
  return { library: lib.name };
}
