import * as tf from '@tensorflow/tfjs';
import type { TensorInfo } from '@tensorflow/tfjs';
import type { CpuBackend, WasmBackend } from '../views.js';
import { SIMD_BINARY } from './binary.js';

/** The SIMD kernels of source.ts; pointers are byte offsets into the memory they were instantiated on. */
export interface SimdKernels {
  exp(x: number, y: number, n: number): void;
  gelu(x: number, y: number, n: number): void;
  geluGrad(dy: number, x: number, dx: number, n: number): void;
  /** y = a + b (y may be a or b) */
  add(a: number, b: number, y: number, n: number): void;
  /** y = a b */
  mul(a: number, b: number, y: number, n: number): void;
  /** y = x Φ(x) (GELU) and s = Φ(x) + x φ(x) (its derivative) */
  geluSlope(x: number, y: number, s: number, n: number): void;
  /** the first n floats of each of `rows` rows at p (`stride` apart) become softmax(p + b), b a bias of the same layout; the rest of each row 0 */
  biasSoftmax(p: number, b: number, rows: number, n: number, stride: number): void;
  /** row by row over the first n, dp = p (dp - Σ dp p), the softmax's backward; the rest of each dp row 0 */
  softmaxGrad(p: number, dp: number, rows: number, n: number, stride: number): void;
  /** y = g σ(g) u (SwiGLU's product) */
  swiglu(g: number, u: number, y: number, n: number): void;
  /** its gradients: dg = dy u σ (1 + g (1 - σ)), du = dy g σ */
  swigluGrad(dy: number, g: number, u: number, dg: number, du: number, n: number): void;
  /** RMSNorm over rows of d floats (d a multiple of 4): y = x g / sqrt(mean(x^2) + eps) */
  rmsNorm(x: number, g: number, y: number, rows: number, d: number, eps: number): void;
  /** its gradients; `want`: 1 writes dx, 2 dg */
  rmsNormGrad(
    dy: number,
    x: number,
    g: number,
    dx: number,
    dg: number,
    rows: number,
    d: number,
    eps: number,
    want: number,
  ): void;
  /** row t of the n x n block at p: softmax of its first t + 1 entries, 0 beyond */
  causalSoftmax(p: number, n: number): void;
  /** row by row, dp = p (dp - Σ dp p), the softmax's backward (p is 0 where it was masked) */
  causalSoftmaxGrad(p: number, dp: number, n: number): void;
  sumRows(x: number, out: number, rows: number, inner: number): void;
  /** RoPE on T rows of hd floats: y1 = x1 c - x2 s', y2 = x2 c + x1 s' (s' = sign s), in doubles rounded once */
  rotateHalves(x: number, c: number, s: number, y: number, T: number, hd: number, sign: number): void;
  /** the largest of the n floats at p */
  rowMax(p: number, n: number): number;
  /** [Σ e, Σ e z] over the n floats z at p, e = exp(k z - m) */
  expStats(p: number, n: number, k: number, m: number): [number, number];
  /** z = scale exp(k z - lse) (c0 + c1 z) over the n floats at p, in place */
  expGrad(p: number, n: number, k: number, lse: number, c0: number, c1: number, scale: number): void;
  /** [the largest of the n floats at p, their sum in doubles] */
  rowMaxSum(p: number, n: number): [number, number];
  /** [Σ e, Σ e t] over the n floats z at p, t = k z - m and e = exp(t), summed in doubles */
  expSums(p: number, n: number, k: number, m: number): [number, number];
  /** the first index at which the running Σ exp(k z - m) over the n floats z at p exceeds u; -1 if none */
  expDraw(p: number, n: number, k: number, m: number, u: number): number;
  adam(
    p: number,
    m: number,
    v: number,
    g: number,
    po: number,
    mo: number,
    vo: number,
    n: number,
    b1: number,
    omb1: number,
    b2: number,
    omb2: number,
    c1: number,
    c2: number,
    eps: number,
    neglr: number,
  ): void;
  layerNorm(x: number, g: number, b: number, y: number, rows: number, d: number, eps: number): void;
  /** `want`: 1 writes dx, 2 dg, 4 db (others untouched) */
  layerNormGrad(
    dy: number,
    x: number,
    g: number,
    dx: number,
    dg: number,
    db: number,
    rows: number,
    d: number,
    eps: number,
    want: number,
  ): void;
}

let compiled: WebAssembly.Module | undefined;
const instances = new WeakMap<WebAssembly.Memory, SimdKernels>();

/** The kernels working on `memory` (instantiated once per memory; the module once per thread). */
export function simdKernels(memory: WebAssembly.Memory): SimdKernels {
  let k = instances.get(memory);
  if (!k) {
    compiled ??= new WebAssembly.Module(Buffer.from(SIMD_BINARY, 'base64'));
    k = new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as SimdKernels;
    instances.set(memory, k);
  }
  return k;
}

/** The memory of the tfjs wasm backend `backend` (its Emscripten module's heap). */
export function wasmBackendMemory(backend: unknown): WebAssembly.Memory {
  const memory = (backend as { wasm?: { asm?: { memory?: unknown } } }).wasm?.asm?.memory;
  if (!(memory instanceof WebAssembly.Memory))
    throw new Error('the wasm backend does not expose its memory (wasm.asm.memory): tfjs-backend-wasm changed');
  return memory;
}

/** The kernels over the memory `view` lies in, when that is the wasm backend's heap (else undefined). */
export function kernelsOver(view: Float32Array): { kernels: SimdKernels; at: number } | undefined {
  const wasm = tf.findBackend('wasm'); // null until made: asking for the current backend would make one
  if (!wasm) return undefined;
  const memory = wasmBackendMemory(wasm);
  return memory.buffer === view.buffer ? { kernels: simdKernels(memory), at: view.byteOffset } : undefined;
}

type Info = TensorInfo;

/** A private heap for the cpu backend, whose tensors are JS arrays: inputs are copied in, outputs out. */
let scratch: WebAssembly.Memory | undefined;

/**
 * Runs `f` on the SIMD kernels with byte offsets of float32 `inputs` and of new outputs of
 * `shapes`, and returns the outputs. On wasm the kernels work in the backend's heap in place
 * (inputs made elsewhere move there first, and every allocation comes before any offset is
 * read, since growing the heap moves nothing but detaches views); on cpu they run on copies.
 */
export function simdCall(
  backendName: string,
  backend: unknown,
  inputs: Info[],
  shapes: number[][],
  f: (k: SimdKernels, ins: number[], outs: number[]) => void,
): Info[] {
  const sizes = shapes.map((s) => s.reduce((a, b) => a * b, 1));
  if (backendName === 'wasm') {
    const be = backend as WasmBackend;
    for (const t of inputs) be.dataIdMap.get(t.dataId);
    const outs = shapes.map((s) => be.makeOutput(s, 'float32'));
    const offset = (t: Info) => be.dataIdMap.get(t.dataId).memoryOffset;
    f(simdKernels(wasmBackendMemory(backend)), inputs.map(offset), outs.map(offset));
    return outs;
  }
  if (backendName !== 'cpu') throw new Error(`simd kernels: backend '${backendName}' is not wasm or cpu`);
  const be = backend as CpuBackend;
  const values = inputs.map((t) => be.data.get(t.dataId).values);
  const lengths = [...values.map((v) => v.length), ...sizes];
  const starts: number[] = [];
  let end = 0;
  for (const n of lengths) {
    starts.push(end);
    end += 4 * Math.ceil(n / 4) * 4; // 16-byte aligned
  }
  scratch ??= new WebAssembly.Memory({ initial: 1 });
  if (scratch.buffer.byteLength < end) scratch.grow(Math.ceil((end - scratch.buffer.byteLength) / 65536));
  values.forEach((v, i) => new Float32Array(scratch!.buffer, starts[i], v.length).set(v));
  const outStarts = starts.slice(inputs.length);
  f(simdKernels(scratch), starts.slice(0, inputs.length), outStarts);
  return shapes.map((s, i) =>
    be.makeTensorInfo(s, 'float32', new Float32Array(scratch!.buffer, outStarts[i], sizes[i]).slice()),
  );
}
