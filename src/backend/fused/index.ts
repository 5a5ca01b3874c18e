import * as tf from '@tensorflow/tfjs';
import { ownKernel, override, restore } from '../overrides.js';
import { ADDRESSABLE } from '../views.js';
import { active, fusedKernelsActive } from './active.js';
import { adamKernel } from './adam.js';

export { fusedKernelsActive } from './active.js';
import { sharedCopyKernels } from './copies.js';
import { expKernel } from './exp.js';
import { geluKernels, registerGeluGradient } from './gelu.js';
import { layerNormKernels, registerLayerNormGradient } from './layer-norm.js';
import { leadingSumKernel } from './sum.js';

/**
 * Fused kernels: SIMD loops over tensor memory (../simd) that replace chains of tfjs kernels
 * (GELU, LayerNorm, forward and backward; an Adam step), or a backend kernel that does needless work
 * (copies, transposed sums). They compute what tfjs computes to float32 rounding and need no
 * library.
 */
const names = new Map<string, string[]>();

/** Turns the fused kernels of `backendName` on or off (off restores tfjs's own); false where they cannot run. */
export function setFusedKernels(backendName: string, on: boolean): boolean {
  restore(backendName, names.get(backendName) ?? []);
  active.delete(backendName);
  if (!on || !ADDRESSABLE.has(backendName)) return false;
  const own = (k: string) => {
    const c = ownKernel(k, backendName);
    if (!c) throw new Error(`backend '${backendName}' has no ${k} kernel`);
    return c;
  };
  const configs = [
    adamKernel(backendName),
    ...geluKernels(backendName),
    ...layerNormKernels(backendName),
    leadingSumKernel(backendName, () => own('Sum')),
  ];
  // on cpu, tfjs's Exp (Math.exp in JS) beats copying the values to the SIMD heap and back
  if (backendName === 'wasm')
    configs.push(
      ...sharedCopyKernels(own),
      expKernel(backendName, () => own('Exp')),
    );
  registerGeluGradient();
  registerLayerNormGradient();
  for (const c of configs) override(c);
  names.set(
    backendName,
    configs.map((c) => c.kernelName),
  );
  active.add(backendName);
  return true;
}
