/**
 * An arena's options are checked by the zod schema it registers with its kind (ARENA_KINDS,
 * defineArena); its constructor parses them too, so an arena built in code is checked the
 * same way. Errors name the path (`arena.options.mode`) and, for an unknown key, the known ones.
 */
import { z } from 'zod';
import { parseOptions } from '../src/config/issues.js';

/** `options` parsed by `schema` at `arena.options`. */
export const arenaOptions = <S extends z.ZodType>(schema: S, options: unknown): z.output<S> =>
  parseOptions(schema, options, 'arena.options');

export const positiveInt = () => z.number().int().positive();
/** A re-rollout count: 0 (off) or G >= 2 samples from one state, compared with each other (Memory-R2's local re-rollouts). */
export const rerolloutCount = () =>
  z
    .number()
    .int()
    .refine((v) => v === 0 || v >= 2, '0 (off) or an integer >= 2')
    .default(0);
