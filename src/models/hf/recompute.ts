import * as tf from '@tensorflow/tfjs';

/**
 * `f(x, consts)` whose backward pass recomputes it from x instead of keeping its intermediate tensors
 * (activation checkpointing): the gradients of x and of `vars` (the variables f reads that may
 * train) come from a fresh tape over f. Memory for a block's backward is then one block's
 * activations, not every block's.
 */
export function recomputed(
  f: (x: tf.Tensor3D, consts: tf.Tensor[]) => tf.Tensor3D,
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
      value: f(input, consts),
      gradFunc: (dy: tf.Tensor3D, saved: tf.Tensor[]) => {
        const held = tf.variable(saved[0], true);
        // tfjs keeps one tape per engine: a gradient taken inside a backward pass would replace
        // the outer pass's tape (and clear it when done), so the outer one is set aside meanwhile
        const state = (tf.engine() as unknown as { state: { activeTape: unknown } }).state;
        const outer = state.activeTape;
        state.activeTape = null;
        try {
          const { grads } = tf.variableGrads(
            () =>
              f(held as unknown as tf.Tensor3D, saved.slice(1))
                .mul(dy)
                .sum() as tf.Scalar,
            [held, ...vars],
          );
          return [grads[held.name], ...vars.map((v) => grads[v.name] ?? tf.zerosLike(v))];
        } finally {
          state.activeTape = outer;
          held.dispose();
        }
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (...inputs: tf.Tensor[]) => tf.Tensor3D;
  return op(x, ...vars);
}
