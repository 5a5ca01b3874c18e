/**
 * Append-only JSONL files that survive a kill at any instant: a writer appends whole lines,
 * so a kill leaves at most one torn (unterminated) last line, which readers skip and
 * `cutTornTail` removes before the next append; a rewrite is atomic (write aside, rename).
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';

export function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

export function tryParse(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The complete (newline-terminated) lines of a file; [] when it does not exist. */
export function completeLines(file: string): { lines: string[]; torn: boolean } {
  if (!existsSync(file)) return { lines: [], torn: false };
  const text = readFileSync(file, 'utf8');
  const end = text.lastIndexOf('\n');
  const lines = end < 0 ? [] : text.slice(0, end).split('\n');
  return { lines, torn: end !== text.length - 1 };
}

export function readJsonl(file: string): Record<string, unknown>[] {
  const { lines } = completeLines(file);
  const out: Record<string, unknown>[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const obj = tryParse(line);
    if (obj === undefined) throw new Error(`${file}:${i + 1}: not a JSON object: ${line.slice(0, 80)}`);
    out.push(obj);
  });
  return out;
}

export function countLines(file: string): number {
  const { lines } = completeLines(file);
  return lines.filter((l) => l.trim() !== '').length;
}

export interface FilterPlan {
  file: string;
  kept: string[];
  changed: boolean;
}

/**
 * Which complete lines of `file` to keep. A complete line that is not a JSON object with a
 * numeric iteration is an error naming the line: it is someone's data, not a torn write.
 */
export function planFilter(file: string, keep: (obj: Record<string, unknown>) => boolean): FilterPlan {
  if (!existsSync(file)) return { file, kept: [], changed: false };
  const { lines, torn } = completeLines(file);
  const kept: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const obj = tryParse(line);
    if (obj === undefined || typeof obj.iteration !== 'number') {
      throw new Error(
        `${file}:${i + 1}: not a JSON object with a numeric iteration (${line.slice(0, 60)}); fix or remove that line, then resume again`,
      );
    }
    if (keep(obj)) kept.push(line);
  });
  return { file, kept, changed: torn || kept.length !== lines.length };
}

/** Rewrites the file (atomically) as planned; one left empty is removed unless `keepEmpty` (a log its readers expect). */
export function applyFilter(p: FilterPlan, keepEmpty = false): void {
  if (!p.changed) return;
  if (p.kept.length === 0 && !keepEmpty) rmSync(p.file, { force: true });
  else writeAtomic(p.file, p.kept.map((l) => l + '\n').join(''));
}

/** Truncates `file` after its last newline, if its tail is an unterminated line. */
export function cutTornTail(file: string): void {
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return;
    // scan backwards in blocks for the last newline
    const block = Buffer.alloc(64 * 1024);
    let pos = size;
    let lastNl = -1;
    while (pos > 0 && lastNl < 0) {
      const len = Math.min(block.length, pos);
      pos -= len;
      readSync(fd, block, 0, len, pos);
      const idx = block.subarray(0, len).lastIndexOf(0x0a);
      if (idx >= 0) lastNl = pos + idx;
    }
    if (lastNl !== size - 1) ftruncateSync(fd, lastNl + 1);
  } finally {
    closeSync(fd);
  }
}
