/**
 * Reads an experiment config: YAML file -> `key.path=value` overrides -> zod validation.
 * Every failure is one `ConfigError` whose message lists each problem as `path: message`.
 */
import { expandAdapters } from './adapters.js';
import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigError, describeIssue, typeName, type ConfigIssue } from './issues.js';
import { ExperimentSchema, type ExperimentConfig } from './schema.js';

export { ConfigError, type ConfigIssue } from './issues.js';

/** Reads, overrides and validates the YAML config at `path`. */
export function loadConfig(path: string, overrides: readonly string[] = []): ExperimentConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    throw new ConfigError(`config ${path}: cannot read: ${why}`, [{ path: '', message: `cannot read: ${why}` }]);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const at = (err: (typeof doc.errors)[number]) => lineCounter.linePos(err.pos[0]);
    const issues = doc.errors.map((err) => {
      const { line, col } = at(err);
      return { path: '', message: `YAML syntax error at line ${line}, column ${col}: ${firstLine(err.message)}` };
    });
    const { line, col } = at(doc.errors[0]!);
    throw new ConfigError(
      `${path}:${line}:${col}: YAML syntax error: ${firstLine(doc.errors[0]!.message)}` + more(issues.length),
      issues,
    );
  }
  const raw: unknown = doc.toJS();
  const located = (issuePath: (string | number)[]) => locate(doc, lineCounter, path, issuePath);
  return validate(raw ?? {}, path, overrides, located);
}

/** Validates an already-parsed object (with optional overrides); `source` names it in errors. */
export function parseConfig(obj: unknown, source = '<inline>', overrides: readonly string[] = []): ExperimentConfig {
  return validate(structuredClone(obj), source, overrides);
}

/** Applies `key.path=value` overrides to a plain object in place (exported for tools that show the merged config). */
export function applyOverrides(target: Record<string, unknown>, overrides: readonly string[]): void {
  for (const o of overrides) applyOverride(target, o);
}

function validate(
  raw: unknown,
  source: string,
  overrides: readonly string[],
  locateIssue?: (p: (string | number)[]) => string | undefined,
): ExperimentConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const got = raw === null ? 'null' : Array.isArray(raw) ? 'a list' : typeof raw;
    throw new ConfigError(`config ${source}: expected a mapping of fields at the top level, got ${got}`, [
      { path: '', message: `expected a mapping, received ${got}` },
    ]);
  }
  const obj = raw as Record<string, unknown>;
  applyOverrides(obj, overrides);
  const overridden = overrides.map((o) => o.slice(0, o.indexOf('=')).trim());

  const result = ExperimentSchema.safeParse(obj, { reportInput: true });
  if (result.success) return expandAdapters(result.data);

  const issues: ConfigIssue[] = [];
  const lines: string[] = [];
  for (const zi of result.error.issues) {
    for (const { segs, message } of describeIssue(zi, ExperimentSchema)) {
      const dotted = segs.join('.');
      issues.push({ path: dotted, message });
      // a line number helps only for values that came from the file, not from an override
      const fromOverride = overridden.some(
        (k) => k === dotted || dotted.startsWith(k + '.') || k.startsWith(dotted + '.'),
      );
      const where = !fromOverride && locateIssue ? locateIssue(segs) : undefined;
      lines.push(`  ${dotted || '(top level)'}: ${message}${where ? ` (${where})` : ''}`);
    }
  }
  const head = `invalid config ${source} (${issues.length} issue${issues.length === 1 ? '' : 's'}):`;
  throw new ConfigError([head, ...lines].join('\n'), issues);
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

function more(n: number): string {
  return n > 1 ? ` (and ${n - 1} more)` : '';
}

// ---------------------------------------------------------------- overrides

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

function applyOverride(target: Record<string, unknown>, override: string): void {
  const eq = override.indexOf('=');
  const fail = (why: string): never => {
    throw new ConfigError(`bad override "${override}": ${why}`, [
      { path: eq > 0 ? override.slice(0, eq).trim() : '', message: `bad override "${override}": ${why}` },
    ]);
  };
  if (eq < 0) fail('expected key.path=value');
  const key = override.slice(0, eq).trim();
  if (key === '') fail('missing key before "="');
  const segs = key.split('.');
  if (segs.some((s) => s === '')) fail('empty segment in key path');
  if (segs.some((s) => FORBIDDEN.has(s))) fail('forbidden key');
  const value = parseValue(override.slice(eq + 1));

  let node: unknown = target;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const last = i === segs.length - 1;
    const at = segs.slice(0, i).join('.') || '(top level)';
    if (Array.isArray(node)) {
      if (!/^\d+$/.test(seg)) fail(`${at} is a list; "${seg}" is not an index`);
      const idx = Number(seg);
      if (idx > node.length) fail(`${at} has ${node.length} items; index ${idx} would leave a gap`);
      if (last) {
        if (value === undefined) node.splice(idx, 1);
        else node[idx] = value;
        return;
      }
      if (node[idx] === undefined || node[idx] === null) node[idx] = {};
      node = node[idx];
    } else if (typeof node === 'object' && node !== null) {
      const rec = node as Record<string, unknown>;
      if (last) {
        if (value === undefined) delete rec[seg];
        else rec[seg] = value;
        return;
      }
      if (!Object.hasOwn(rec, seg) || rec[seg] === undefined || rec[seg] === null) rec[seg] = {};
      node = rec[seg];
    } else {
      fail(`${at} is a ${typeName(node)}, not a mapping`);
    }
  }
}

/**
 * The value of an override, read as YAML: `3e-4` is a number, `true` a boolean, `[a, b]` and
 * `{k: v}` flow collections; `null` or `~` removes the key (back to its default); anything
 * else that is not a single YAML value (e.g. `a: b`) stays the literal string.
 */
function parseValue(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  const doc = parseDocument(trimmed);
  if (doc.errors.length > 0 || doc.contents === null) return trimmed;
  const c = doc.contents;
  if (isScalar(c)) return c.value === null ? undefined : c.value;
  if ((isMap(c) || isSeq(c)) && c.flow) return c.toJSON();
  return trimmed;
}

// ---------------------------------------------------------------- locations and suggestions

function locate(doc: Document, lc: LineCounter, file: string, segs: (string | number)[]): string | undefined {
  // the deepest node of the path that exists in the file (the whole document says nothing)
  for (let n = segs.length; n >= 1; n--) {
    const node = doc.getIn(segs.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    if (range) {
      const { line } = lc.linePos(range[0]);
      return `${file}:${line}`;
    }
  }
  return undefined;
}
