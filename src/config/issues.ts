/**
 * Config problems as `path: message` lines, from zod issues: shared by the experiment schema
 * and the option schemas each arena, judge, evaluator and task family registers, so an option
 * error reads as any other config error.
 */
import type { z } from 'zod';

/** One problem of a config: where it is and what is wrong. */
export interface ConfigIssue {
  /** dotted path of the field (`trainer.lr`, `judges.0.kind`); '' for the whole config */
  path: string;
  message: string;
}

/** A config that cannot run: the message lists every problem as `path: message`, and `issues` holds them one by one. */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly issues: ConfigIssue[],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses `value` with a kind's option schema, or throws a {@link ConfigError} naming each
 * problem by its full path (`where` is the path of the options: `judges.1.options`).
 */
export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value === undefined ? {} : value, { reportInput: true });
  if (result.success) return result.data;
  const base = where.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const issues = result.error.issues.flatMap((zi) =>
    describeIssue(zi, schema).map(({ segs, message }) => ({ path: [...base, ...segs].join('.'), message })),
  );
  throw new ConfigError(
    [
      `invalid ${where} (${issues.length} issue${issues.length === 1 ? '' : 's'}):`,
      ...issues.map((i) => `  ${i.path}: ${i.message}`),
    ].join('\n'),
    issues,
  );
}

/** One zod issue as one or more `path: message` issues (an unrecognized-keys issue becomes one per key). */
export function describeIssue(zi: z.core.$ZodIssue, root: z.ZodType): { segs: (string | number)[]; message: string }[] {
  const segs = zi.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  if (zi.code === 'unrecognized_keys') {
    const known = knownKeysAt(root, segs);
    return zi.keys.map((k) => {
      const guess = known ? closest(k, known) : undefined;
      return {
        segs: [...segs, k],
        message: `unrecognized key${guess ? ` (did you mean "${guess}"?)` : ''}${known ? `; known: ${known.join(', ') || '(none)'}` : ''}`,
      };
    });
  }
  if (zi.code === 'invalid_type') {
    const hasInput = 'input' in zi;
    const input = (zi as { input?: unknown }).input;
    if (hasInput && input === undefined) return [{ segs, message: `required (expected ${zi.expected})` }];
    if (zi.expected === 'int' && typeof input === 'number')
      return [{ segs, message: `expected integer, received ${input}` }];
    if (zi.expected === 'number' && typeof input === 'number')
      return [{ segs, message: `expected a finite number, received ${input}` }];
    return [{ segs, message: `expected ${zi.expected}, received ${typeName(input)}` }];
  }
  const input = (zi as { input?: unknown }).input;
  if (zi.code === 'invalid_value') {
    return [
      {
        segs,
        message: `expected one of ${zi.values.map((v) => JSON.stringify(v)).join(', ')}, received ${show(input)}`,
      },
    ];
  }
  // a schema's own message (`.min(2, 'at least 2 (a pair needs two answers)')`) says more than the bound
  if (
    (zi.code === 'too_small' || zi.code === 'too_big') &&
    zi.origin === 'number' &&
    typeof input === 'number' &&
    /^Too (small|big)/.test(zi.message)
  ) {
    const bound = zi.code === 'too_small' ? zi.minimum : zi.maximum;
    const op = zi.code === 'too_small' ? (zi.inclusive ? '>=' : '>') : zi.inclusive ? '<=' : '<';
    return [{ segs, message: `expected a number ${op} ${bound}, received ${input}` }];
  }
  if (zi.code === 'too_small' && zi.origin === 'array' && /^Too small/.test(zi.message))
    return [{ segs, message: `expected at least ${zi.minimum} item${zi.minimum === 1 ? '' : 's'}` }];
  return [{ segs, message: zi.message.replace(/^Invalid input: /, '') }];
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 40 ? s.slice(0, 37) + '...' : s;
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && Number.isNaN(v)) return 'NaN';
  return typeof v;
}

/** The keys a strict object at `segs` accepts, found by walking the schema. */
function knownKeysAt(root: z.ZodType, segs: (string | number)[]): string[] | undefined {
  let s: unknown = root;
  const def = (x: unknown) => (x as { _zod: { def: Record<string, unknown> } })._zod.def;
  const unwrap = (x: unknown): unknown => {
    for (;;) {
      const d = def(x);
      if (d.innerType) x = d.innerType;
      else if (d.type === 'pipe') x = d.in;
      else return x;
    }
  };
  for (const seg of segs) {
    const d = def((s = unwrap(s)));
    if (d.type === 'object') s = (d.shape as Record<string, unknown>)[String(seg)];
    else if (d.type === 'record') s = d.valueType;
    else if (d.type === 'array') s = d.element;
    else return undefined;
    if (s === undefined) return undefined;
  }
  const d = def(unwrap(s));
  return d.type === 'object' ? Object.keys(d.shape as object) : undefined;
}

function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
