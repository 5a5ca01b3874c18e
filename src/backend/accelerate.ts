import { setFusedKernels } from './fused/index.js';
import { setNativeProducts } from './native/index.js';

/**
 * `auto`: the fast paths (fused kernels, and native products when a library loads);
 * `off`: tfjs's own kernels only, the reference every fast path is tested against.
 */
export type Accelerate = 'auto' | 'off';
export const ACCELERATE_CHOICES: readonly Accelerate[] = ['auto', 'off'];

export interface Acceleration {
  /** the library now serving matrix products, or undefined for tfjs's own kernels */
  library?: string;
  /** why no library serves them, when asked for `auto` */
  why?: string;
  /** whether the fused kernels (GELU, LayerNorm, Exp, sums, Adam, shared copies) serve the backend */
  fused: boolean;
}

/**
 * Puts `backendName`'s kernels on the fast paths (`auto`) or back on tfjs's own (`off`).
 * Kernels are per backend and per process (each worker thread has its own registry), so
 * this is called once per backend after it initialises.
 */
export function setAccelerate(backendName: string, mode: Accelerate): Acceleration {
  if (!ACCELERATE_CHOICES.includes(mode))
    throw new Error(`accelerate: unknown choice '${String(mode)}'; known: ${ACCELERATE_CHOICES.join(', ')}`);
  const fused = setFusedKernels(backendName, mode === 'auto');
  return { ...setNativeProducts(backendName, mode === 'auto'), fused };
}
