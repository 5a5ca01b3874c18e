/** Checks an arena's config options: known keys only, each of the right kind; errors name arena and key. */
export function arenaOptions<T extends Record<string, unknown>>(arena: string, options: Record<string, unknown>, spec: { [K in keyof T]: (v: unknown) => string | undefined }, defaults: T): T {
  const known = Object.keys(spec);
  for (const [key, value] of Object.entries(options ?? {})) {
    if (!known.includes(key)) throw new Error(`arena.options.${key}: unknown option of arena '${arena}'; known: ${known.join(', ') || '(none)'}`);
    const wrong = spec[key]!(value);
    if (wrong) throw new Error(`arena.options.${key}: must be ${wrong}, got ${JSON.stringify(value)}`);
  }
  return { ...defaults, ...options } as T;
}

export const positiveInteger = (v: unknown) => (Number.isSafeInteger(v) && (v as number) > 0 ? undefined : 'a positive integer');
export const mapping = (v: unknown) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : 'a mapping');
