import * as tf from '@tensorflow/tfjs';
import { registerMissingKernels } from './kernels.js';
import { ACCELERATE_CHOICES, setAccelerate, type Accelerate } from './accelerate.js';
import { fusedKernelsActive } from './fused/index.js';
import { activeLibrary } from './native/index.js';

/** Which tensor backend to run on. `auto` takes the first of gpu, node, wasm, cpu that loads. */
export type BackendChoice = 'auto' | 'gpu' | 'node' | 'wasm' | 'cpu';
export const BACKEND_CHOICES: readonly BackendChoice[] = ['auto', 'gpu', 'node', 'wasm', 'cpu'];

export interface BackendInfo {
  /** what the user asked for */
  requested: BackendChoice;
  /** the choice that loaded */
  chosen: Exclude<BackendChoice, 'auto'>;
  /** TensorFlow.js's own name for it (`tensorflow`, `wasm`, `cpu`) */
  tfName: string;
  /** kernels this package registered because the backend lacked them */
  addedKernels: string[];
  /** why each earlier candidate was skipped */
  skipped: Record<string, string>;
  /** what was asked of the native products */
  accelerate: Accelerate;
  /** the native library serving matrix products (`oneDNN`, `OpenBLAS`), if any */
  native?: string;
  /** why none does, when `accelerate` is `auto` */
  nativeWhy?: string;
  /** whether the fused kernels (GELU, LayerNorm, Exp, sums, Adam, shared copies) serve the backend */
  fused: boolean;
}

// The native packages are optional peers: importing them by a computed name keeps
// TypeScript and bundlers from requiring them at build time.
const NATIVE_PACKAGES = { gpu: '@tensorflow/tfjs-node-gpu', node: '@tensorflow/tfjs-node' } as const;

async function load(choice: Exclude<BackendChoice, 'auto'>): Promise<string> {
  if (choice === 'gpu' || choice === 'node') {
    const name: string = NATIVE_PACKAGES[choice];
    await import(name);
    if (!(await tf.setBackend('tensorflow'))) throw new Error(`${name} loaded but its backend did not initialise`);
    return 'tensorflow';
  }
  if (choice === 'wasm') await import('@tensorflow/tfjs-backend-wasm');
  if (!(await tf.setBackend(choice))) throw new Error(`backend ${choice} did not initialise`);
  return choice;
}

let current: BackendInfo | undefined;

/**
 * Selects the tensor backend of this process (or worker). Asking again for the choice
 * that is still active returns the cached answer; otherwise it switches. Throws, naming every
 * attempt, when the requested backend cannot load.
 */
export async function initBackend(
  requested: BackendChoice = 'auto',
  accelerate: Accelerate = 'auto',
): Promise<BackendInfo> {
  if (!BACKEND_CHOICES.includes(requested)) {
    throw new Error(`backend: unknown choice '${String(requested)}'; known: ${BACKEND_CHOICES.join(', ')}`);
  }
  if (!ACCELERATE_CHOICES.includes(accelerate))
    throw new Error(`accelerate: unknown choice '${String(accelerate)}'; known: ${ACCELERATE_CHOICES.join(', ')}`);
  // the cached answer holds only while its kernels are still the ones registered (setAccelerate may have changed them)
  if (
    current &&
    current.requested === requested &&
    current.accelerate === accelerate &&
    tf.getBackend() === current.tfName &&
    activeLibrary(current.tfName) === current.native &&
    fusedKernelsActive(current.tfName) === current.fused
  )
    return current;
  const candidates: Exclude<BackendChoice, 'auto'>[] =
    requested === 'auto' ? ['gpu', 'node', 'wasm', 'cpu'] : [requested];
  const skipped: Record<string, string> = {};
  for (const choice of candidates) {
    try {
      const tfName = await load(choice);
      await tf.ready();
      tf.enableProdMode();
      const addedKernels = registerMissingKernels(tfName);
      const fast = setAccelerate(tfName, accelerate);
      current = {
        requested,
        chosen: choice,
        tfName,
        addedKernels,
        skipped,
        accelerate,
        native: fast.library,
        nativeWhy: fast.why,
        fused: fast.fused,
      };
      return current;
    } catch (err) {
      skipped[choice] = (err as Error).message.split('\n')[0];
    }
  }
  const why = Object.entries(skipped)
    .map(([k, v]) => `${k}: ${v}`)
    .join('; ');
  throw new Error(`backend '${requested}' could not be loaded (${why})`);
}

/**
 * Which kernels compute, e.g. `wasm + native sgemm (OpenBLAS) + native TinyLM passes`: what
 * decides how results round. With a native sgemm, TinyLM's decode step and its scoring passes
 * (forward and backward) run natively too (src/models/native).
 */
export function describeKernels(info: BackendInfo): string {
  return (
    info.chosen +
    (info.fused ? ' + fused kernels' : '') +
    (info.native ? ` + native sgemm (${info.native}) + native TinyLM passes` : '')
  );
}

/** One line for logs: which backend runs and what was skipped on the way. */
export function describeBackend(info: BackendInfo): string {
  const skipped = Object.keys(info.skipped);
  return (
    `backend: ${describeKernels(info)} (tfjs '${info.tfName}')` +
    (skipped.length ? `; skipped ${skipped.join(', ')}` : '') +
    (info.addedKernels.length ? `; added kernels ${info.addedKernels.join(', ')}` : '') +
    (info.accelerate === 'off' ? '; accelerate off' : info.nativeWhy ? `; no native products: ${info.nativeWhy}` : '')
  );
}
