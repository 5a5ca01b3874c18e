import { timingSafeEqual } from 'node:crypto';

/** The bearer token of an `Authorization` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer (.+)$/.exec(header ?? '')?.[1];
}

/** True when `given` is the API key, compared in constant time (a server's check of a client's key). */
export function keyMatches(given: string | undefined, key: string): boolean {
  const [a, b] = [Buffer.from(given ?? ''), Buffer.from(key)];
  return a.length === b.length && timingSafeEqual(a, b);
}
