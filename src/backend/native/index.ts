import * as tf from '@tensorflow/tfjs';
import { ownKernel, override, restore } from '../overrides.js';
import { ADDRESSABLE } from '../views.js';
import { loadNative, nativeUnavailable, type Sgemm } from './library.js';
import { nativeMatMulKernels } from './matmul.js';

const KERNELS = ['BatchMatMul', '_FusedMatMul'];

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

/**
 * Puts the matrix-product kernels of `backendName` on a native sgemm (`on`) or back on
 * tfjs's own. Returns the library serving them, or why none does.
 */
export function setNativeProducts(backendName: string, on: boolean): { library?: string; why?: string } {
  restore(backendName, KERNELS);
  active[backendName] = undefined;
  if (!on) return {};
  if (!ADDRESSABLE.has(backendName)) return { why: `native products are wired for wasm and cpu, not '${backendName}'` };
  const own = Object.fromEntries(
    KERNELS.flatMap((k) => {
      const c = ownKernel(k, backendName);
      return c ? [[k, c]] : [];
    }),
  );
  const missing = KERNELS.filter((k) => !own[k]);
  if (missing.length) return { why: `backend '${backendName}' lacks ${missing.join(', ')}` };
  const lib = loadNative();
  if (!lib) return { why: nativeUnavailable() };
  for (const config of nativeMatMulKernels(backendName, lib.sgemm, own)) override(config);
  active[backendName] = lib.sgemm;
  return { library: lib.name };
}
