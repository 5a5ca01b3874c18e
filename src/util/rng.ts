/**
 * A small seeded random number generator (mulberry32). Sampling, shuffles and task
 * generators draw from it so that a run is reproducible from its seed; its state is one
 * integer, which checkpoints can store.
 */
export class Rng {
  private state: number;
  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new Error(`rng: seed must be a finite number, got ${seed}`);
    this.state = seed >>> 0;
  }
  /** uniform in [0, 1) */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** integer in [0, n) */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** standard normal, Box-Muller */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  get seedState(): number {
    return this.state;
  }
}
