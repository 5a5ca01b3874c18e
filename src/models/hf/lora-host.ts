/**
 * A LoRA-adapted projection on a frozen host matrix as one operation: y = x W^T + s (x A) B
 * (x W for GPT-2's Conv1D layout), every product on the native sgemm, the adapter's term
 * added into y by the product itself (beta 1) and the gradients likewise:
 * dx = dy W + (s dy B^T) A^T, dA = x^T (s dy B^T), dB = (s x A)^T dy. Composed of tfjs
 * operations the same projection took five products and three passes over its [rows, out]
 * output (scaling, adding) each way, and a tape entry per piece.
 */
import * as tf from '@tensorflow/tfjs';
import { HostMatrix } from '../../backend/native/host.js';
import { activeSgemm } from '../../backend/native/index.js';
import { oneThread, type Sgemm } from '../../backend/native/library.js';
import { smallGemm } from '../../backend/native/matmul.js';
import { ADDRESSABLE, withOutputs } from '../../backend/views.js';
import { releaseKept } from './recompute.js';

/** Whether loraHostLinear can run on the backend in use (its tensors addressable in place). */
export const loraHostFits = () => ADDRESSABLE.has(tf.getBackend());

/**
 * x [.., in] through the host matrix `m` (stored [out, in] when `transpose`, else [in, out])
 * plus the adapter term of `a` [in, r], `b` [r, out] scaled by `scaling`; `kept`, when given,
 * is this output as the forward pass computed it (a checkpointed block's recomputation, with
 * the same x, a and b), used instead of multiplying again. Gradients flow to x, a and b.
 * `u`: the adapter's s x A [rows, r], which the backward pass needs too: `keep` receives it when
 * this pass computes it, and `kept` is it as a forward pass computed it, so that a
 * recomputation with a kept output need not multiply x A again for the gradient.
 */
export function loraHostLinear(
  x: tf.Tensor,
  m: HostMatrix,
  transpose: boolean,
  a: tf.Tensor2D,
  b: tf.Tensor2D,
  scaling: number,
  kept?: { data: Float32Array },
  u?: { keep?: (u: Float32Array, shape: number[]) => void; kept?: { data: Float32Array } },
): tf.Tensor {
  const lead = x.shape.slice(0, -1);
  const [K, r] = a.shape;
  const out = b.shape[1];
  const gemm: Sgemm = activeSgemm() ?? smallGemm;
  const backendName = tf.getBackend();
  const backend = tf.engine().backend;
  const f = tf.customGrad(((...args: unknown[]) => {
    const [xs, as, bs] = args.slice(0, 3) as tf.Tensor2D[];
    const save = args[3] as tf.GradSaveFunc;
    const n = xs.shape[0];
    const v = withOutputs(backendName, backend, [[n, out]], [xs, as, bs]);
    const [X, A, B] = v.ins;
    const [Y] = v.outs;
    // the base product, then s (x A) B added in place; or y as the forward pass computed it
    // s x A as this pass computed it, or a forward pass did (the same bits), for the backward pass
    let sxa: Float32Array | undefined = u?.kept?.data;
    if (kept) {
      Y.set(kept.data);
      releaseKept(kept.data);
    } else {
      gemm(false, transpose, n, out, K, X, K, m.data, m.cols, 0, Y, out);
      const xa = new Float32Array(n * r);
      // the adapter's rank-r products on one thread (see oneThread)
      oneThread(() => {
        gemm(false, false, n, r, K, X, K, A, r, 0, xa, r);
        for (let i = 0; i < xa.length; i++) xa[i] *= scaling;
        gemm(false, false, n, out, r, xa, r, B, out, 1, Y, out);
      });
      u?.keep?.(xa, [n, r]);
      sxa = xa;
    }
    const y = tf.engine().makeTensorFromTensorInfo(v.infos[0]) as tf.Tensor2D;
    save([xs, as, bs]);
    return {
      value: y,
      // a custom gradient runs outside any scope (tfjs): nothing is left behind but its outputs
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => {
        const g = withOutputs(
          backendName,
          backend,
          [
            [n, K],
            [K, r],
            [r, out],
          ],
          [dy, ...saved],
        );
        const [DY, Xs, As, Bs] = g.ins;
        const [DX, DA, DB] = g.outs;
        // w = s dy B^T [n, r]; dx = dy W + w A^T; dA = x^T w; dB = (s x A)^T dy
        // the frozen matrix's product on the library's threads, the rank-r ones on one
        gemm(false, !transpose, n, K, out, DY, out, m.data, m.cols, 0, DX, K);
        const w = new Float32Array(n * r);
        let us = sxa;
        oneThread(() => {
          gemm(false, true, n, r, out, DY, out, Bs, out, 0, w, r);
          for (let i = 0; i < w.length; i++) w[i] *= scaling;
          gemm(false, true, n, K, r, w, r, As, r, 1, DX, K);
          gemm(true, false, K, r, n, Xs, K, w, r, 0, DA, r);
          if (!us) {
            const xa = new Float32Array(n * r);
            gemm(false, false, n, r, K, Xs, K, As, r, 0, xa, r);
            for (let i = 0; i < xa.length; i++) xa[i] *= scaling;
            us = xa;
          }
          gemm(true, false, r, out, n, us, r, DY, out, 0, DB, out);
        });
        if (us && us === u?.kept?.data) releaseKept(us);
        return g.infos.map((info) => tf.engine().makeTensorFromTensorInfo(info));
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (...t: tf.Tensor[]) => tf.Tensor;
  return f(x.reshape([-1, K]), a, b).reshape([...lead, out]);
}
