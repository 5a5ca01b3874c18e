import { simdKernels, type SimdKernels } from '../../backend/simd/index.js';

const PAGE = 65536;
const LIMIT = 65536 * PAGE; // a wasm32 memory's 4 GiB
const KEEP = 4; // idle memories kept for the next passes; more are left to the collector
const idle: WebAssembly.Memory[] = [];

/**
 * The arrays of one native pass, all in one WebAssembly.Memory, so that the SIMD kernels
 * (which address a wasm memory) and the native products (which take views of it) work on
 * them in place. Every array is laid out at once: growing a memory detaches the views made
 * before, so nothing grows after `arrays` returns. Memories are pooled per thread; `release`
 * hands one back, and one never released (a pass whose backward never came) is collected.
 */
export class PassMemory {
  readonly kernels: SimdKernels;
  private memory?: WebAssembly.Memory;

  /** Float32 arrays of the given lengths, each 16-byte aligned; their contents are whatever the memory held (fill what must start at 0). */
  static arrays<K extends string>(sizes: Record<K, number>): { memory: PassMemory; views: Record<K, Float32Array> } {
    const offsets = {} as Record<K, number>;
    let end = 0;
    for (const key of Object.keys(sizes) as K[]) {
      offsets[key] = end;
      end += Math.ceil(sizes[key] / 4) * 16;
    }
    if (end > LIMIT)
      throw new Error(
        `native pass: needs ${(end / 2 ** 30).toFixed(2)} GiB, over a wasm memory's 4 GiB; score in smaller batches (trainer.microBatch)`,
      );
    const memory = new PassMemory(end);
    const buffer = memory.memory!.buffer;
    const views = {} as Record<K, Float32Array>;
    for (const key of Object.keys(sizes) as K[]) views[key] = new Float32Array(buffer, offsets[key], sizes[key]);
    return { memory, views };
  }

  private constructor(bytes: number) {
    const fits = idle
      .filter((m) => m.buffer.byteLength >= bytes)
      .sort((a, b) => a.buffer.byteLength - b.buffer.byteLength)[0];
    const memory = fits ?? idle.pop() ?? new WebAssembly.Memory({ initial: 1 });
    if (fits) idle.splice(idle.indexOf(fits), 1);
    if (memory.buffer.byteLength < bytes) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE));
    this.memory = memory;
    this.kernels = simdKernels(memory);
  }

  /** Returns the memory to the pool; the views are not to be used after. */
  release(): void {
    if (this.memory && idle.length < KEEP) idle.push(this.memory);
    this.memory = undefined;
  }
}
