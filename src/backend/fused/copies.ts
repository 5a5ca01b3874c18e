import * as tf from '@tensorflow/tfjs';

type Args = Parameters<tf.KernelFunc>[0];
interface Counted {
  incRef(dataId: unknown): void;
}

/**
 * Identity and a Cast to the dtype a tensor already has, on wasm, as references to the
 * input's buffer (as the cpu backend's are) instead of copies. Backpropagation clones every
 * tensor a gradient saves and the Multiply gradient casts its operands, so the copies were
 * 13% of a reference train step (266 a step). Sharing is safe because no kernel writes into
 * an existing buffer: a variable's assign takes a new one.
 */
export function sharedCopyKernels(own: (kernelName: string) => tf.KernelConfig): tf.KernelConfig[] {
  const share = (kernelName: string, target: (a: Args) => string): tf.KernelConfig => ({
    kernelName,
    backendName: 'wasm',
    kernelFunc: (args: Args) => {
      const x = (args.inputs as { x: tf.TensorInfo }).x;
      if (x.dtype === 'string' || x.dtype !== target(args)) return own(kernelName).kernelFunc(args);
      (args.backend as unknown as Counted).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
    },
  });
  return [
    share('Identity', (a) => (a.inputs as { x: tf.TensorInfo }).x.dtype),
    share('Cast', (a) => (a.attrs as { dtype: string }).dtype),
  ];
}
