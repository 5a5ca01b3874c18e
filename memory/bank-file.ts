import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { DEFAULT_LIMITS, MemoryBank, type BankData, type BankLimits, type MemoryEntry, type MemoryOp } from './bank.js';

export interface BankFileOptions {
  limits?: BankLimits;
  clock?: () => number;
}

/**
 * A memory bank persisted with lowdb, one JSON file per bank. Each operation is written before
 * `apply` resolves, and lowdb's writer replaces the file by renaming a finished temporary file,
 * so a crash (even SIGKILL mid-write) leaves the last acknowledged state, never half an entry.
 * A file that is not a bank (bad JSON, wrong shape, over the limits) is refused with an error
 * naming it, and left untouched: nothing is written to it.
 */
export class BankFile {
  private constructor(
    readonly path: string,
    readonly bank: MemoryBank,
    private readonly db: Low<BankData>,
  ) {}

  /** Opens the bank at `path`, or starts an empty one there (written on its first operation). */
  static async open(path: string, options: BankFileOptions = {}): Promise<BankFile> {
    const limits = options.limits ?? DEFAULT_LIMITS;
    const db = new Low<BankData>(new JSONFile<BankData>(path), { entries: [], next: 0 });
    try {
      await db.read();
    } catch (e) {
      throw new Error(`memory bank ${path}: not valid JSON (${(e as Error).message}); refused and left as it is`);
    }
    const problem = checkBankData(db.data, limits);
    if (problem) throw new Error(`memory bank ${path}: ${problem}; refused and left as it is`);
    return new BankFile(path, new MemoryBank(db.data, limits, options.clock), db);
  }

  /** Applies one operation and writes the bank; a refused operation (MemoryOpError) writes nothing. */
  async apply(op: MemoryOp): Promise<MemoryEntry | undefined> {
    const entry = this.bank.apply(op);
    if (op.op === 'NOOP') return entry;
    this.db.data = this.bank.snapshot();
    await this.db.write();
    return entry;
  }
}

/** Why data is not a bank within the limits, or undefined when it is one. */
export function checkBankData(data: unknown, limits: BankLimits): string | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'not a bank object';
  const { entries, next } = data as Partial<BankData>;
  if (!Array.isArray(entries)) return "'entries' is not a list";
  if (!Number.isSafeInteger(next) || (next as number) < 0) return "'next' is not a non-negative integer";
  if (entries.length > limits.maxEntries) return `${entries.length} entries exceed maxEntries ${limits.maxEntries}`;
  const ids = new Set<string>();
  for (const [i, e] of entries.entries()) {
    const ok =
      typeof e === 'object' &&
      e !== null &&
      typeof e.id === 'string' &&
      typeof e.text === 'string' &&
      Number.isFinite(e.created) &&
      Number.isFinite(e.updated) &&
      (e.key === undefined || typeof e.key === 'string');
    if (!ok) return `entry ${i} is not {id, text, key?, created, updated}`;
    if (ids.has(e.id)) return `entry id '${e.id}' appears twice`;
    if (e.text.length > limits.maxEntryChars) return `entry '${e.id}' exceeds maxEntryChars ${limits.maxEntryChars}`;
    ids.add(e.id);
  }
  return undefined;
}
