/**
 * A prefix for a new model's variable names (`tinylm7`), unique in this process. tfjs
 * refuses a second variable of a name still registered, and its registry is per process, so
 * the counter is too: kept on globalThis, it stays unique even when a module is loaded
 * twice (a plugin's `import 'coevolve'` may load its own copy of the package).
 */
export function variablePrefix(kind: string): string {
  const key = Symbol.for('coevolve.modelCount');
  const g = globalThis as Record<symbol, number | undefined>;
  g[key] = (g[key] ?? 0) + 1;
  return `${kind}${g[key]}`;
}
