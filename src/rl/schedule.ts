/**
 * Learning-rate schedules as multipliers of the base rate, one value per optimizer update
 * (`step` counts from 0), as verl's actor steps its LambdaLR once per training step.
 */

export type LrScheduleKind = 'constant' | 'cosine';

export interface LrSchedule {
  kind: LrScheduleKind;
  /** updates over which the rate rises linearly from 0 (`lr_warmup_steps`) */
  warmup: number;
  /** floor of the cosine, as a share of the base rate (`min_lr_ratio`) */
  minRatio: number;
  /** restart every this many updates (cosine with warm restarts); absent: one cycle of `total` */
  cycle?: number;
  /** the peak of cycle k is `cycleDecay^k` (timm's `cycle_decay`); default 1 */
  cycleDecay?: number;
}

/**
 * The multiplier at update `step` (0-based) of `total`; the loop's updates are steps 0 to
 * total - 1.
 *
 * - warmup (both kinds): `step / warmup` while `step < warmup`, as verl's schedules; with
 *   warmup 0 the first update gets the full rate.
 * - 'constant' (verl's `get_constant_schedule_with_warmup`): 1 after warmup.
 * - 'cosine' (verl's `get_cosine_schedule_with_warmup`, `num_cycles` 0.5): with
 *   `p = (step - warmup) / max(1, total - warmup)`,
 *   `max(minRatio, minRatio + (1 - minRatio) · (1 + cos(π p)) / 2)`: 1 right after warmup,
 *   falling to `minRatio` at `step = total` (the last update is one step short of it).
 * - `cycle`: the schedule above over `cycle` updates, restarted at every multiple of
 *   `cycle` (`step mod cycle` of `cycle`), so each stage of a run gets its own warmup and decay.
 *   With `cycleDecay` d, cycle k warms up to and holds (constant) or starts its cosine at
 *   `peak = d^k` and decays to the same floor, `max(minRatio, minRatio + (peak - minRatio) ·
 *   (1 + cos(π p)) / 2)`, as timm's cosine scheduler with `cycle_decay` keeps `lr_min`.
 */
export function lrMultiplier(s: LrSchedule, step: number, total: number): number {
  if (!Number.isInteger(step) || step < 0) throw new Error(`lr schedule: step must be an integer >= 0, got ${step}`);
  if (step > total) throw new Error(`lr schedule: step ${step} is past the last update ${total}`);
  if (!(s.minRatio >= 0 && s.minRatio <= 1))
    throw new Error(`lr schedule: minRatio must be in [0, 1], got ${s.minRatio}`);
  if (!Number.isInteger(s.warmup) || s.warmup < 0)
    throw new Error(`lr schedule: warmup must be an integer >= 0, got ${s.warmup}`);
  if (s.cycle !== undefined && !(Number.isInteger(s.cycle) && s.cycle >= 1))
    throw new Error(`lr schedule: cycle must be an integer >= 1, got ${s.cycle}`);
  const decay = s.cycleDecay ?? 1;
  if (!(decay > 0 && decay <= 1)) throw new Error(`lr schedule: cycleDecay must be in (0, 1], got ${decay}`);
  const length = s.cycle ?? total;
  const at = s.cycle ? step % s.cycle : step;
  const peak = decay ** (s.cycle ? Math.floor(step / s.cycle) : 0);
  if (at < s.warmup) return (peak * at) / Math.max(1, s.warmup);
  if (s.kind === 'constant') return peak;
  const p = (at - s.warmup) / Math.max(1, length - s.warmup);
  return Math.max(s.minRatio, s.minRatio + ((peak - s.minRatio) * (1 + Math.cos(Math.PI * p))) / 2);
}
