/**
 * Rows of a data file as plain JSON objects, each with where it came from (`file:line` for
 * JSONL, `file: row n` for Parquet, 1-based) so a bad row can be named. Parquet is read with
 * hyparquet (pure JS; snappy built in, gzip/brotli/zstd/lz4 through hyparquet-compressors),
 * so the files Hugging Face datasets ship read without native code.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** One row of a data file and where it is, for errors. */
export interface Row {
  where: string;
  /** its 1-based line (JSONL, blank lines counted) or row (Parquet) number */
  n: number;
  value: unknown;
}

/** The rows of a JSONL file (blank lines skipped); a line that is not JSON throws `path:line: bad JSON`. */
export function jsonlRows(path: string): Row[] {
  const rows: Row[] = [];
  readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const where = `${path}:${i + 1}`;
      try {
        rows.push({ where, n: i + 1, value: JSON.parse(line) });
      } catch (e) {
        throw new Error(`${where}: bad JSON: ${(e as Error).message}`);
      }
    });
  return rows;
}

/** The rows of a Parquet file, whole, as JSON values (int64 as numbers when exact, else strings). */
export async function parquetRows(path: string): Promise<Row[]> {
  // loaded here, so that runs on JSONL never load the Parquet reader
  const [{ parquetReadObjects }, { compressors }] = await Promise.all([
    import('hyparquet'),
    import('hyparquet-compressors'),
  ]);
  const bytes = await readFile(path);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  let objects: Record<string, unknown>[];
  try {
    objects = await parquetReadObjects({ file, compressors });
  } catch (e) {
    throw new Error(`${path}: not a Parquet file this reader can read: ${(e as Error).message}`);
  }
  return objects.map((o, i) => ({ where: `${path}: row ${i + 1}`, n: i + 1, value: plain(o) }));
}

/** Rows of `path` by its extension: `.parquet` or JSONL (`.jsonl`, `.json`, anything else). */
export async function readRows(path: string): Promise<Row[]> {
  return path.toLowerCase().endsWith('.parquet') ? parquetRows(path) : jsonlRows(path);
}

// Parquet decodes int64 to BigInt and binary to bytes; tasks are plain JSON (they are stored
// with episodes), so each value becomes what JSON.parse would have made of it.
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v as ArrayLike<unknown>, plain);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, plain(x)]));
  return v;
}
