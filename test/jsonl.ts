import { existsSync, readFileSync } from 'node:fs';

/**
 * The complete rows of a JSON-lines file another process may still be writing: a missing file
 * is no rows, and a last line cut off mid-write (it has no newline yet) is left out, so a test
 * that polls a live run never parses half a row.
 */
export function jsonRows<T = Record<string, unknown>>(path: string): T[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  const done = text.slice(0, text.lastIndexOf('\n') + 1);
  return done
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}
