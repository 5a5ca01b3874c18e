/** What a memory manager role writes and a memory bank (memory/bank.ts) applies. */
/** Memory-R1's operations. Ids name entries; a manager that was shown a list refers to it by position, mapped to ids by the caller. */
export type MemoryOp =
  | { op: 'ADD'; text: string; key?: string }
  | { op: 'UPDATE'; id: string; text: string }
  | { op: 'DELETE'; id: string }
  | { op: 'NOOP' };
