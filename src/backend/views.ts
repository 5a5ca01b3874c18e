import * as tf from '@tensorflow/tfjs';

type Info = tf.TensorInfo;

/**
 * How a kernel reaches tensor memory without copying: the wasm backend's tensors live in its
 * heap, the cpu backend's in JS arrays. Inputs made on another backend move on first access,
 * and a move or an allocation may grow (and so detach) the wasm heap: so every input is
 * touched first, then the output allocated, and only then are the views taken.
 */
export type Views = { info: Info; out: Float32Array; ins: Float32Array[] };

/** What kernels here use of tfjs-wasm's backend (a tensor's offset in the heap; touching its entry moves it there). */
export interface WasmBackend {
  dataIdMap: { get(id: unknown): { memoryOffset: number } };
  makeOutput(shape: number[], dtype: 'float32'): Info;
  typedArrayFromHeap(t: Info): Float32Array;
}
/** What kernels here use of the cpu backend (tensors are JS arrays). */
export interface CpuBackend {
  data: { get(id: unknown): { values: Float32Array } };
  makeTensorInfo(shape: number[], dtype: 'float32', values: Float32Array): Info;
}

/** Backends whose tensor memory these views can address. */
export const ADDRESSABLE = new Set(['wasm', 'cpu']);

/** A new float32 output of `shape` and views of it and of `inputs` (float32), on the wasm or cpu backend. */
export function withOutput(backendName: string, backend: unknown, shape: number[], inputs: Info[]): Views {
  if (backendName === 'wasm') {
    const be = backend as WasmBackend;
    for (const t of inputs) be.dataIdMap.get(t.dataId); // moves a tensor made elsewhere onto the heap now
    const info = be.makeOutput(shape, 'float32');
    return { info, out: be.typedArrayFromHeap(info), ins: inputs.map((t) => be.typedArrayFromHeap(t)) };
  }
  const be = backend as CpuBackend;
  const ins = inputs.map((t) => be.data.get(t.dataId).values);
  const out = new Float32Array(shape.reduce((a, b) => a * b, 1));
  return { info: be.makeTensorInfo(shape, 'float32', out), out, ins };
}

/** As withOutput, for several new float32 outputs of `shapes` (all allocated before any view is taken). */
export function withOutputs(
  backendName: string,
  backend: unknown,
  shapes: number[][],
  inputs: Info[],
): { infos: Info[]; outs: Float32Array[]; ins: Float32Array[] } {
  if (backendName === 'wasm') {
    const be = backend as WasmBackend;
    for (const t of inputs) be.dataIdMap.get(t.dataId);
    const infos = shapes.map((s) => be.makeOutput(s, 'float32'));
    const view = (t: Info) => be.typedArrayFromHeap(t);
    return { infos, outs: infos.map(view), ins: inputs.map(view) };
  }
  const be = backend as CpuBackend;
  const outs = shapes.map((s) => new Float32Array(s.reduce((a, b) => a * b, 1)));
  return {
    infos: shapes.map((s, i) => be.makeTensorInfo(s, 'float32', outs[i])),
    outs,
    ins: inputs.map((t) => be.data.get(t.dataId).values),
  };
}

/**
 * The float32 values of `t` without copying them where the backend allows (the wasm heap, the
 * cpu backend's array), else a copy (dataSync). The view is valid until `t` is disposed or the
 * backend allocates (which may grow, and so detach, the wasm heap).
 */
export function readView(t: tf.Tensor): Float32Array {
  const name = tf.getBackend();
  if (t.dtype === 'float32' && ADDRESSABLE.has(name)) {
    const backend = tf.backend();
    if (name === 'wasm') return (backend as unknown as WasmBackend).typedArrayFromHeap(t);
    return (backend as unknown as CpuBackend).data.get(t.dataId).values;
  }
  return t.dataSync() as Float32Array;
}
