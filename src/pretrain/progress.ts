/**
 * The progress line of a long pretrain: at most `every` seconds apart, the step, the loss,
 * steps/s since this process started training, and the time left at that rate. A base that
 * takes an hour says so in its first half minute instead of at its first evaluation.
 */
export class StepProgress {
  private readonly start = performance.now();
  private last = performance.now();

  constructor(
    private readonly total: number,
    private readonly firstStep: number,
    private readonly log: (line: string) => void,
    private readonly every: number,
  ) {}

  /** Logs a line if `every` seconds have passed since the last one. */
  step(steps: number, loss: number): void {
    const now = performance.now();
    if ((now - this.last) / 1000 < this.every) return;
    this.last = now;
    const rate = (steps - this.firstStep) / ((now - this.start) / 1000);
    const left = rate > 0 ? (this.total - steps) / rate : Infinity;
    this.log(`step ${steps}/${this.total} loss=${loss.toFixed(4)} ${rate.toFixed(2)} steps/s, ${duration(left)} left`);
  }
}

/** `1h02m`, `3m05s`, `12s`. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  const [h, m, r] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}h${two(m)}m` : m > 0 ? `${m}m${two(r)}s` : `${r}s`;
}
