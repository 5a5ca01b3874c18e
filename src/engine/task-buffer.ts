import type { Task } from '../core/types.js';
import { Rng } from '../util/rng.js';

/** A buffered task with what the loop learned of it: p, the solver's success rate when it was played. */
export interface BufferedTask {
  task: Task;
  p: number;
  iteration: number;
}

/**
 * The recent valid tasks a proposer wrote, newest last, at most `size` (the oldest leave
 * first). A proposer's duplicate of one of them is invalid; `sample` draws tasks to replay.
 * Plain JSON in and out (`entries`, `from`), so a checkpoint keeps it and a resumed run
 * sees the same buffer.
 */
export class TaskBuffer {
  private readonly items: BufferedTask[] = [];
  private readonly prompts = new Map<string, number>();

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size <= 0)
      throw new Error(`buffer.size must be a positive integer, got ${size}`);
  }

  static from(size: number, entries: readonly BufferedTask[]): TaskBuffer {
    const b = new TaskBuffer(size);
    for (const e of entries) b.add(e);
    return b;
  }

  get length(): number {
    return this.items.length;
  }

  has(prompt: string): boolean {
    return this.prompts.has(prompt);
  }

  add(entry: BufferedTask): void {
    this.items.push(structuredClone(entry));
    this.prompts.set(entry.task.prompt, (this.prompts.get(entry.task.prompt) ?? 0) + 1);
    while (this.items.length > this.size) {
      const old = this.items.shift()!;
      const n = this.prompts.get(old.task.prompt)! - 1;
      if (n === 0) this.prompts.delete(old.task.prompt);
      else this.prompts.set(old.task.prompt, n);
    }
  }

  /** Up to n distinct buffered tasks, drawn with `seed` (a replayed iteration draws the same). */
  sample(n: number, seed: number): BufferedTask[] {
    const rng = new Rng(seed);
    const pool = [...this.items];
    const k = Math.min(n, pool.length);
    for (let i = 0; i < k; i++) {
      const j = i + rng.int(pool.length - i);
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    return pool.slice(0, k).map((e) => structuredClone(e));
  }

  entries(): BufferedTask[] {
    return structuredClone(this.items);
  }
}
