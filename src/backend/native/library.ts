import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * A row-major float32 matrix product from a native library, C = alpha op(A) op(B) + beta C
 * (alpha 1 unless given), writing C in place. A, B and C may be views of a
 * WebAssembly.Memory or plain arrays.
 */
export type Sgemm = (
  transA: boolean,
  transB: boolean,
  M: number,
  N: number,
  K: number,
  A: Float32Array,
  lda: number,
  B: Float32Array,
  ldb: number,
  beta: number,
  C: Float32Array,
  ldc: number,
  alpha?: number,
) => void;

export interface NativeLibrary {
  /** 'oneDNN' or 'OpenBLAS' */
  name: string;
  /** the shared object that loaded */
  file: string;
  sgemm: Sgemm;
  /** sets how many threads one product may use (the library's pool is shared by the process) */
  setThreads(n: number): void;
  /** how many threads one product may use now (1 where the library fixes it at load) */
  threads(): number;
}

/**
 * Debian's packages. OpenBLAS (libopenblas0-pthread, about 100 GFLOP/s per core here) is the
 * default. oneDNN (libdnnl2 2.6, about 110) only loads when asked for by COEVOLVE_NATIVE=oneDNN:
 * a mix of its 1-row products and large ones corrupted the malloc heap of the process
 * (glibc aborted with "corrupted size vs. prev_size" under a sampling profiler), while the
 * same calls on OpenBLAS ran clean.
 */
const CANDIDATES = [
  { name: 'OpenBLAS', file: 'libopenblas.so.0', byDefault: true },
  { name: 'oneDNN', file: 'libdnnl.so.2', byDefault: false },
] as const;

let loaded: NativeLibrary | null | undefined;
let whyNot = '';

/**
 * The first native library that loads, or null (with `nativeUnavailable()` saying why). One
 * thread per caller: each worker thread is one core's worth, and oneDNN with two OpenMP
 * threads crashed at process exit when tried here. The thread count has to be in the
 * environment before the library (and its OpenMP runtime) loads.
 */
export function loadNative(): NativeLibrary | null {
  if (loaded !== undefined) return loaded;
  process.env.OMP_NUM_THREADS ??= '1';
  process.env.OPENBLAS_NUM_THREADS ??= '1';
  // OpenBLAS's idle helpers spin for 2^28 cycles by default, which takes the second core from
  // the kernels that follow a product; 2^4 puts them to sleep at once (measured: 2-thread
  // products then shorten a reference train step instead of lengthening the rest of it)
  process.env.OPENBLAS_THREAD_TIMEOUT ??= '4';
  const core = blasCoreType(cpuFlags());
  if (core) process.env.OPENBLAS_CORETYPE ??= core;
  let koffi: typeof import('koffi');
  try {
    koffi = createRequire(import.meta.url)('koffi');
  } catch (e) {
    whyNot = `koffi did not load (${(e as Error).message.split('\n')[0]})`;
    return (loaded = null);
  }
  const errors: string[] = [];
  // COEVOLVE_NATIVE=OpenBLAS (or oneDNN) picks one library, to compare them; none, no library (a machine without one)
  const pick = process.env.COEVOLVE_NATIVE?.toLowerCase();
  if (pick === 'none') {
    whyNot = 'COEVOLVE_NATIVE=none turns them off (unset, it loads libopenblas0-pthread when installed)';
    return (loaded = null);
  }
  const chosen = CANDIDATES.filter((c) => (pick ? c.name.toLowerCase() === pick : c.byDefault));
  if (chosen.length === 0) {
    whyNot = `COEVOLVE_NATIVE='${process.env.COEVOLVE_NATIVE}' names no library; known: ${CANDIDATES.map((c) => c.name).join(', ')}`;
    return (loaded = null);
  }
  for (const c of chosen) {
    try {
      const lib = koffi.load(c.file);
      loaded = { name: c.name, file: c.file, ...(c.name === 'oneDNN' ? dnnl(lib) : openblas(lib)) };
      return loaded;
    } catch (e) {
      errors.push(`${c.file}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  whyNot = `no native library (${errors.join('; ')}); apt-get install libopenblas0-pthread`;
  return (loaded = null);
}

/** Why `loadNative()` returned null. */
export function nativeUnavailable(): string {
  return whyNot;
}

type Lib = ReturnType<typeof import('koffi').load>;

function dnnl(lib: Lib): Pick<NativeLibrary, 'sgemm' | 'setThreads' | 'threads'> {
  // dnnl_status_t dnnl_sgemm(char transa, char transb, dnnl_dim_t M, N, K, float alpha, const float *A, lda, const float *B, ldb, float beta, float *C, ldc): row-major
  const f = lib.func(
    'int dnnl_sgemm(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t, const float *, int64_t, float, float *, int64_t)',
  );
  const N = 'N'.charCodeAt(0);
  const T = 'T'.charCodeAt(0);
  const sgemm: Sgemm = (ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, alpha = 1) => {
    const status = f(ta ? T : N, tb ? T : N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) as number;
    if (status !== 0) throw new Error(`dnnl_sgemm failed with status ${status} (M ${m}, N ${n}, K ${k})`);
  };
  // its OpenMP threads are fixed at load (OMP_NUM_THREADS): more than one crashed at exit here
  return { sgemm, setThreads: () => {}, threads: () => 1 };
}

function openblas(lib: Lib): Pick<NativeLibrary, 'sgemm' | 'setThreads' | 'threads'> {
  // void cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); CblasRowMajor 101, NoTrans 111, Trans 112
  const f = lib.func(
    'void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int)',
  );
  const setThreads = lib.func('void openblas_set_num_threads(int)');
  const getThreads = lib.func('int openblas_get_num_threads()');
  return {
    sgemm: (ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, alpha = 1) =>
      f(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
    setThreads: (n) => setThreads(Math.max(1, Math.floor(n))),
    threads: () => getThreads() as number,
  };
}

/**
 * The OpenBLAS kernels to pin: OpenBLAS picks them by CPU, and kernels block and round their
 * sums differently, so one pretrain config made another base on another CPU (the chat base's
 * held-out 0.020 at step 250 here became 0.016 with SandyBridge's kernels). Zen's kernels,
 * what this project's AMD EPYC machines pick, need AVX2 and FMA only, so any CPU with both runs
 * the same products to the same bits; a CPU without them keeps OpenBLAS's own choice.
 */
export function blasCoreType(flags: ReadonlySet<string>): string | undefined {
  return flags.has('avx2') && flags.has('fma') ? 'Zen' : undefined;
}

/** This CPU's feature flags, from /proc/cpuinfo (none where there is no such file). */
function cpuFlags(): Set<string> {
  try {
    const line = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    return new Set(line ? line[1].trim().split(/\s+/) : []);
  } catch {
    return new Set();
  }
}

/**
 * `f` with the library's products on one thread, for small ones: two threads wait on each other
 * at every small product, and with other work on the machine that wait made them slower than
 * one thread. Measured: a block's attention forward and backward (SmolLM2's shape, [768, 64] x
 * [64, 256] per batch row and kv head) 0.16 to 0.28 s on one thread, 0.18 to 0.93 s on two,
 * alternating, load 15; a LoRA adapter's rank-16 products ([2040, 576] x [576, 16] and the
 * like) 40 to 68 GFLOP/s on one thread, 14 to 42 on two, load 20.
 */
export function oneThread<T>(f: () => T): T {
  const lib = loadNative();
  const before = lib?.threads() ?? 1;
  if (before > 1) lib!.setThreads(1);
  try {
    return f();
  } finally {
    if (before > 1) lib!.setThreads(before);
  }
}
