/** How the environment plants an error in a step's result when it, not the sneaky role, corrupts working. */
import type { Rng } from '../../src/util/rng.js';
import { plantError, stepResults } from '../../src/tasks/scratchpad.js';

/** Right `working` with one step, drawn from `rng`, given a wrong result by `kind` (later steps add on from it). */
export function plantIn(working: string, kind: 'slip' | 'random', rng: Rng): string {
  const results = stepResults(working)!;
  const at = 1 + rng.int(results.length);
  const result = Number(results[at - 1]);
  return plantError(working, at, kind === 'slip' ? slip(result, rng) : randomOfLength(result, rng));
}

const SLIPS = [-10, -1, 1, 10];

/** A carry slip: the result shifted by 1 or 10, up or down, staying a whole number. */
export function slip(result: number, rng: Rng): number {
  const options = SLIPS.map((d) => result + d).filter((v) => v >= 0);
  return options[rng.int(options.length)];
}

/** Another number with as many digits as `result`, uniformly drawn. */
export function randomOfLength(result: number, rng: Rng): number {
  const digits = String(result).length;
  const [lo, hi] = digits === 1 ? [0, 9] : [10 ** (digits - 1), 10 ** digits - 1];
  const v = lo + rng.int(hi - lo);
  return v >= result ? v + 1 : v;
}
