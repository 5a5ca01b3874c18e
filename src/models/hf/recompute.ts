import * as tf from '@tensorflow/tfjs';
import { HostMatrix, hostProduct } from '../../backend/native/host.js';
import { backProducts } from '../ops.js';

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

/** Whether operations run now are recorded for a gradient (tfjs's isTapeOn, outside any kernel). */
export function taping(): boolean {
  return engineState().gradientDepth > 0;
}

/**
 * The outputs of a checkpointed pass's large products (x W + b of each projection), kept in
 * Node's memory, outside the backend's heap, up to `budget` bytes: when the backward pass
 * computes a block again it takes them back instead of multiplying again, which saves a third
 * of a training step's products; the cheap operations between them are still recomputed, so
 * the heap holds one block's activations at a time as before. Each is taken once, by the
 * block's backward, and freed then. Beyond the budget the products are computed again.
 */
export class KeptProducts {
  private readonly held = new Map<string, { data: Float32Array; shape: number[] }>();
  private bytes = 0;

  constructor(readonly budget: number) {}

  /** Keeps `y`, the output of the product named `name`, if the budget allows. */
  keep(name: string, y: tf.Tensor): void {
    if (this.bytes + 4 * y.size > this.budget || this.held.has(name)) return;
    this.held.set(name, { data: y.dataSync() as Float32Array, shape: y.shape });
    this.bytes += 4 * y.size;
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
      value: tf.tensor(kept.data, kept.shape),
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
