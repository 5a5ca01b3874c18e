/** The field builders every config schema shares (src/config/schema.ts and its parts). */
import { z } from 'zod';

// zod's own .int() aborts the whole parse on a fraction (so cross-field checks would be
// skipped and the error would list fewer problems); this check does not.
export const int = () =>
  z.number().superRefine((v, ctx) => {
    if (!Number.isSafeInteger(v)) ctx.addIssue({ code: 'custom', message: `expected integer, received ${v}` });
  });
export const posInt = () => int().positive();
export const nonNegInt = () => int().nonnegative();
// Ids and names become folder names (checkpoints/<model>, runs/<name>), so each must be one
// plain path component: no '/', no '..', nothing hidden.
export const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;
export const unsafe = (v: string) =>
  `must be a plain name (letters, digits, '.', '_', '-'; not starting with '.' or '-'), got ${JSON.stringify(v)}`;
export const safeName = () =>
  z.string().superRefine((v, ctx) => {
    if (!SAFE_NAME.test(v)) ctx.addIssue({ code: 'custom', message: unsafe(v) });
  });
// record keys are checked in the cross-field pass, where the error can name the key
export const id = z.string().min(1, 'must not be empty');
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
// Cross-field checks run even when other fields failed, so one error lists every problem;
// they therefore read their input defensively.
export const always = { when: () => true };
