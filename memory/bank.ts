import { bm25, words } from './bm25.js';
import type { MemoryOp } from '../src/core/memory-op.js';

/** One remembered fact. Times are the bank's clock (ms since the epoch by default; a turn index in arenas). */
export interface MemoryEntry {
  id: string;
  text: string;
  /** optional handle the writer chose (e.g. 'ann/city'); retrieval reads only the text */
  key?: string;
  created: number;
  updated: number;
}

export type { MemoryOp } from '../src/core/memory-op.js';

/** A bank as plain JSON: what files and snapshots hold. */
export interface BankData {
  entries: MemoryEntry[];
  /** the next id's number, so ids are never reused after a delete */
  next: number;
}

export interface BankLimits {
  /** most entries the bank holds; an ADD beyond it is refused */
  maxEntries: number;
  /** longest entry text, in characters */
  maxEntryChars: number;
}

export const DEFAULT_LIMITS: BankLimits = { maxEntries: 10_000, maxEntryChars: 2_000 };

/** An operation the bank refused (full, too long, unknown id): the bank is unchanged. */
export class MemoryOpError extends Error {}

/**
 * An external memory bank a memory manager edits (Memory-R1): entries with ids, ADD / UPDATE /
 * DELETE / NOOP, top-k retrieval by BM25, and snapshot and fork so that re-rollouts can start
 * from the same state (Memory-R2). In memory only; `bank-file.ts` persists one.
 */
export class MemoryBank {
  private data: BankData;

  constructor(
    data: BankData = { entries: [], next: 0 },
    readonly limits: BankLimits = DEFAULT_LIMITS,
    private readonly clock: () => number = Date.now,
  ) {
    this.data = structuredClone(data);
  }

  get entries(): readonly MemoryEntry[] {
    return this.data.entries;
  }

  get size(): number {
    return this.data.entries.length;
  }

  /** Applies one operation; returns the entry it wrote (none for DELETE and NOOP). Throws MemoryOpError, changing nothing, when refused. */
  apply(op: MemoryOp): MemoryEntry | undefined {
    switch (op.op) {
      case 'NOOP':
        return undefined;
      case 'ADD': {
        this.checkText(op.text);
        if (this.size >= this.limits.maxEntries)
          throw new MemoryOpError(
            `memory bank full: ${this.limits.maxEntries} entries (maxEntries); DELETE or UPDATE one first`,
          );
        const now = this.clock();
        const entry: MemoryEntry = {
          id: `m${this.data.next}`,
          text: op.text,
          ...(op.key !== undefined ? { key: op.key } : {}),
          created: now,
          updated: now,
        };
        this.data.next += 1;
        this.data.entries.push(entry);
        return entry;
      }
      case 'UPDATE': {
        this.checkText(op.text);
        const entry = this.find(op.id, 'UPDATE');
        entry.text = op.text;
        entry.updated = this.clock();
        return entry;
      }
      case 'DELETE': {
        const entry = this.find(op.id, 'DELETE');
        this.data.entries = this.data.entries.filter((e) => e !== entry);
        return undefined;
      }
      default:
        throw new MemoryOpError(
          `unknown memory operation ${JSON.stringify((op as { op: unknown }).op)}; known: ADD, UPDATE, DELETE, NOOP`,
        );
    }
  }

  /** The k entries that best match the query by BM25 (only those sharing a word with it); ties go to the most recently updated. */
  retrieve(query: string, k: number): MemoryEntry[] {
    const scores = bm25(
      this.data.entries.map((e) => words(e.text)),
      words(query),
    );
    return this.data.entries
      .map((e, i) => ({ e, s: scores[i], i }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s || b.e.updated - a.e.updated || b.i - a.i)
      .slice(0, k)
      .map((x) => x.e);
  }

  /** A deep copy of the bank's data (plain JSON). */
  snapshot(): BankData {
    return structuredClone(this.data);
  }

  /** An independent bank from the same state: what one re-rollout edits. */
  fork(): MemoryBank {
    return new MemoryBank(this.data, this.limits, this.clock);
  }

  private find(id: string, op: string): MemoryEntry {
    const entry = this.data.entries.find((e) => e.id === id);
    if (!entry) throw new MemoryOpError(`${op}: no entry '${id}' in the memory bank`);
    return entry;
  }

  private checkText(text: string): void {
    if (typeof text !== 'string' || !text.trim()) throw new MemoryOpError('an entry needs non-empty text');
    if (text.length > this.limits.maxEntryChars)
      throw new MemoryOpError(`entry of ${text.length} characters exceeds maxEntryChars ${this.limits.maxEntryChars}`);
  }
}
