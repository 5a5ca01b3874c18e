import * as tf from '@tensorflow/tfjs';
import { HostMatrix, hostProduct } from '../../backend/native/host.js';
import { backProducts } from '../ops.js';
import type { WasmBackend } from '../../backend/views.js';

interface EngineState {
  activeTape: unknown;
  gradientDepth: number;
}
/** tfjs's Engine.gradients: the gradients of f's output seeded with dy (undefined where none reaches). */
type Gradients = (
  f: () => tf.Tensor,
  xs: tf.Tensor[],
  dy: tf.Tensor,
  allowNoGradients: boolean,
) => { value: tf.Tensor; grads: (tf.Tensor | undefined)[] };
const engineState = () => (tf.engine() as unknown as { state: EngineState }).state;

/**
 * `f(x, consts, again)` whose backward pass recomputes it from x instead of keeping its intermediate tensors
 * (activation checkpointing): the gradients of x and of `vars` (the variables f reads that may
 * train) come from a fresh tape over f. Memory for a block's backward is then one block's
 * activations, not every block's. `again` is false in the forward pass, true when the backward
 * computes it again (see KeptProducts).
 */
export function recomputed(
  f: (x: tf.Tensor3D, consts: tf.Tensor[], again: boolean) => tf.Tensor3D,
  x: tf.Tensor3D,
  consts: tf.Tensor[],
  vars: tf.Variable[],
): tf.Tensor3D {
  const op = tf.customGrad(((...args: unknown[]) => {
    const save = args[args.length - 1] as tf.GradSaveFunc;
    const input = args[0] as tf.Tensor3D;
    // the constants (masks, rotations) are saved with the input: the forward's scope frees them before the backward runs
    save([input, ...consts]);
    return {
      value: f(input, consts, false),
      gradFunc: (dy: tf.Tensor3D, saved: tf.Tensor[]) => {
        const held = tf.variable(saved[0], true);
        // tfjs keeps one tape per engine: a gradient taken inside a backward pass would replace
        // the outer pass's tape (and clear it when done), so the outer one is set aside meanwhile
        const state = engineState();
        const outer = state.activeTape;
        state.activeTape = null;
        try {
          // dy seeds the backward pass directly (not as the gradient of sum(f dy), which would
          // add a product, a sum and a tensor of ones the size of the block's output)
          const xs = [held, ...vars];
          const { value, grads } = (tf.engine() as unknown as { gradients: Gradients }).gradients(
            () => f(held as unknown as tf.Tensor3D, saved.slice(1), true),
            xs,
            dy,
            true,
          );
          value.dispose();
          return grads.map((g, i) => g ?? tf.zerosLike(xs[i]));
        } finally {
          state.activeTape = outer;
          held.dispose();
        }
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (...inputs: tf.Tensor[]) => tf.Tensor3D;
  return op(x, ...vars);
}

/** A tensor of a kept product; on wasm the data is copied into the heap at once, so its buffer goes back for reuse. */
function reuse(kept: { data: Float32Array; shape: number[] }): tf.Tensor {
  const t = tf.tensor(kept.data, kept.shape);
  if (tf.getBackend() === 'wasm') releaseKept(kept.data);
  return t;
}

/** Whether operations run now are recorded for a gradient (tfjs's isTapeOn, outside any kernel). */
export function taping(): boolean {
  return engineState().gradientDepth > 0;
}

/**
 * Buffers of products already taken back, for the next pass's keep: a step keeps the same
 * sizes again, and a fresh buffer costs its pages' first touch and a collection later.
 */
const spare = new Map<number, Float32Array[]>();
let spareBytes = 0;

/** A buffer of n floats, a released one when there is (its contents are stale); give it back with releaseKept. */
export function keptBuffer(n: number): Float32Array {
  const b = spare.get(n)?.pop();
  if (!b) return new Float32Array(n);
  spareBytes -= b.byteLength;
  return b;
}

/**
 * Gives back a kept product's memory once it has been copied where it is needed: at most 3 GiB
 * are held for reuse, what a pass keeps at most (2 GiB of products, 1 GiB of the head's logits).
 */
export function releaseKept(data: Float32Array): void {
  if (spareBytes + data.byteLength > 3 * 2 ** 30) return;
  const list = spare.get(data.length) ?? [];
  list.push(data);
  spare.set(data.length, list);
  spareBytes += data.byteLength;
}

/**
 * The outputs of a checkpointed pass's large products (x W + b of each projection) and its
 * attention probabilities, kept in Node's memory, outside the backend's heap, up to `budget`
 * bytes: when the backward pass computes a block again it takes them back instead of
 * multiplying again, which saves a third of a training step's products; the cheap operations
 * between them are still recomputed, so the heap holds one block's activations at a time as
 * before. Each is taken once, by the block's backward, and freed then. Beyond the budget the
 * products are computed again.
 */
export class KeptProducts {
  private readonly held = new Map<string, { data: Float32Array; shape: number[] }>();
  private bytes = 0;

  constructor(readonly budget: number) {}

  /** Keeps `y`, the output of the product named `name`, if the budget allows. */
  keep(name: string, y: tf.Tensor): void {
    if (!this.fits(name, y.size)) return;
    let data: Float32Array;
    if (tf.getBackend() === 'wasm' && y.dtype === 'float32') {
      // copied from the heap into a reused buffer, not into a fresh one as dataSync would
      const be = tf.engine().backend as unknown as WasmBackend;
      be.dataIdMap.get(y.dataId);
      data = keptBuffer(y.size);
      data.set(be.typedArrayFromHeap(y));
    } else data = y.dataSync() as Float32Array;
    this.hold(name, data, y.shape);
  }

  /** Keeps a copy of `data` (a view of the heap, say) under `name`, if the budget allows. */
  keepCopy(name: string, data: Float32Array, shape: number[]): void {
    if (!this.fits(name, data.length)) return;
    const copy = keptBuffer(data.length);
    copy.set(data);
    this.hold(name, copy, shape);
  }

  private fits(name: string, size: number): boolean {
    return this.bytes + 4 * size <= this.budget && !this.held.has(name);
  }

  private hold(name: string, data: Float32Array, shape: number[]): void {
    this.held.set(name, { data, shape });
    this.bytes += data.byteLength;
  }

  /** The kept output of `name`, removed from the keeper, or undefined when it was not kept. */
  take(name: string): { data: Float32Array; shape: number[] } | undefined {
    const got = this.held.get(name);
    if (got) {
      this.held.delete(name);
      this.bytes -= got.data.byteLength;
    }
    return got;
  }
}

/**
 * A kept product as an operation of the tape: the value is `kept` (what x W + b was in the
 * forward pass), the gradients those of x W + b: dy W^T for x, x^T dy for a trainable W
 * (a variable [in, out]) and dy summed over rows for the bias. A host matrix is frozen and
 * held as stored ([out, in] when `transpose`): x's gradient only.
 */
export function reusedProduct(
  kept: { data: Float32Array; shape: number[] },
  x: tf.Tensor,
  w: tf.Tensor2D | HostMatrix,
  transpose: boolean,
  bias?: tf.Tensor,
): tf.Tensor {
  const K = x.shape[x.shape.length - 1];
  const host = w instanceof HostMatrix;
  const inputs = [x, ...(host ? [] : [w]), ...(bias ? [bias] : [])];
  const f = tf.customGrad(((...args: unknown[]) => {
    const save = args[args.length - 1] as tf.GradSaveFunc;
    const xs = args[0] as tf.Tensor;
    save(host ? [] : [xs, args[1] as tf.Tensor]);
    return {
      value: reuse(kept),
      // a custom gradient runs outside any scope (tfjs): its temporaries are freed here
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const rows = dy.reshape([-1, dy.shape[dy.shape.length - 1]]) as tf.Tensor2D;
          const grads: tf.Tensor[] = [];
          if (host) grads.push(hostProduct(rows, w, !transpose).reshape(x.shape));
          else {
            // as linear() computes them (src/models/ops.ts), so that a kept product changes no gradient
            const [dx, dw] = backProducts(rows, saved[0].reshape([-1, K]) as tf.Tensor2D, saved[1] as tf.Tensor2D);
            grads.push(dx.reshape(x.shape), dw);
          }
          if (bias) grads.push(rows.sum(0).reshape(bias.shape));
          return grads;
        }),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (...inputs: tf.Tensor[]) => tf.Tensor;
  return f(...inputs);
}
