// `npm run bench:hf -- --profile` (with --torch off, one job): where a timed job's wall time
// goes, one run of it after the timed ones. Each tfjs kernel's self time (its own time, less
// the kernels run inside it, as custom operations nest), and every native sgemm call's time
// and floating-point work; what neither covers is JavaScript between kernels (tape
// bookkeeping, copies out of the heap, loops outside kernels) and garbage collection.
import * as tf from '@tensorflow/tfjs';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { NativeLibrary, Sgemm } from '../backend/native/library.js';

interface Tally {
  ms: number;
  calls: number;
  flops: number;
}
const sgemmCalls = new Map<string, Tally>();
// the same calls by shape (op(A) op(B), M x N x K): which products of a kind take the time
const sgemmShapes = new Map<string, Tally>();
let counting = false;

function tally(map: Map<string, Tally>, key: string, ms: number, flops: number): void {
  const t = map.get(key) ?? { ms: 0, calls: 0, flops: 0 };
  t.ms += ms;
  t.calls++;
  t.flops += flops;
  map.set(key, t);
}

/** Wraps the library's sgemm (before the backend takes it) so that a profiled run counts each call. */
export function countSgemm(lib: NativeLibrary): void {
  const inner: Sgemm = lib.sgemm;
  lib.sgemm = (ta, tb, M, N, K, ...rest) => {
    if (!counting) return inner(ta, tb, M, N, K, ...rest);
    const t0 = performance.now();
    inner(ta, tb, M, N, K, ...rest);
    // by size: the products of one kind (large projections, adapters, attention) land together
    const kind = M * N * K >= 2 ** 27 ? 'large (>= 2^27 mul-adds)' : M * N * K >= 2 ** 22 ? 'medium' : 'small (< 2^22)';
    const ms = performance.now() - t0;
    tally(sgemmCalls, kind, ms, 2 * M * N * K);
    tally(sgemmShapes, `${ta ? 'T' : 'N'}${tb ? 'T' : 'N'} ${M}x${N}x${K}`, ms, 2 * M * N * K);
  };
}

/** Runs `run` once with every kernel's self time and the sgemm calls counted; prints a JSON summary. */
export async function profileRun(job: string, run: () => void): Promise<void> {
  const profiler = (tf.engine() as unknown as { profiler: { profileKernel: (...a: unknown[]) => unknown } }).profiler;
  const original = profiler.profileKernel.bind(profiler);
  const kernels = new Map<string, Tally>();
  const nested: number[] = [];
  profiler.profileKernel = (name: unknown, inputs: unknown, f: unknown) => {
    const t0 = performance.now();
    nested.push(0);
    const out = original(name, inputs, f);
    const total = performance.now() - t0;
    const inside = nested.pop()!;
    if (nested.length) nested[nested.length - 1] += total;
    const t = kernels.get(name as string) ?? { ms: 0, calls: 0, flops: 0 };
    t.ms += total - inside;
    t.calls++;
    kernels.set(name as string, t);
    return out;
  };
  sgemmCalls.clear();
  sgemmShapes.clear();
  counting = true;
  // COEVOLVE_CPU_PROFILE=FILE: V8's sampling profile of the same run (its JavaScript and wasm), for Chrome's DevTools
  const cpuFile = process.env.COEVOLVE_CPU_PROFILE;
  const session = cpuFile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const t0 = performance.now();
  try {
    await tf.profile(run);
  } finally {
    counting = false;
    profiler.profileKernel = original;
  }
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(cpuFile!, JSON.stringify(profile));
    session.disconnect();
  }
  const wall = performance.now() - t0;
  const kernelMs = [...kernels.values()].reduce((n, t) => n + t.ms, 0);
  const sgemm = [...sgemmCalls.values()].reduce((a, t) => ({ ms: a.ms + t.ms, flops: a.flops + t.flops }), {
    ms: 0,
    flops: 0,
  });
  const round = (x: number) => Math.round(x);
  const byTime = (m: Map<string, Tally>, n: number) =>
    Object.fromEntries(
      [...m]
        .sort((a, b) => b[1].ms - a[1].ms)
        .slice(0, n)
        .map(([k, t]) => [
          k,
          {
            ms: round(t.ms),
            calls: t.calls,
            gflop: +(t.flops / 1e9).toFixed(1),
            gflops_per_s: +(t.flops / 1e6 / t.ms).toFixed(1),
          },
        ]),
    );
  console.log(
    JSON.stringify({
      job,
      profile: true,
      wall_ms: round(wall),
      kernels_ms: round(kernelMs),
      outside_kernels_ms: round(wall - kernelMs),
      sgemm_ms: round(sgemm.ms),
      sgemm_gflop: +(sgemm.flops / 1e9).toFixed(1),
      sgemm_gflops_per_s: +(sgemm.flops / 1e6 / sgemm.ms).toFixed(1),
      gflops_per_s_of_wall: +(sgemm.flops / 1e6 / wall).toFixed(1),
      sgemm_by_size: byTime(sgemmCalls, 3),
      // the 20 shapes that took longest
      sgemm_by_shape: byTime(sgemmShapes, 20),
      // kernels' self time (an sgemm inside a kernel counts in that kernel too)
      kernels: Object.fromEntries(
        [...kernels]
          .sort((a, b) => b[1].ms - a[1].ms)
          .slice(0, 25)
          .map(([k, t]) => [k, { ms: round(t.ms), calls: t.calls }]),
      ),
    }),
  );
}
