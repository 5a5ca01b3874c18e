/**
 * A kind of a concept a config names (an arena, a judge, an evaluator): the zod schema of its
 * `options` and its factory, registered together so the runtime parses the options at their
 * path (`judges.1.options`) before the factory sees them, and an option error reads as any
 * other config error (issues.ts). A plugin's kind registers its schema the same way.
 */
import { z } from 'zod';

export interface Kind<F> {
  /** what `options:` may hold, with defaults; strict, so a misspelt option is an error naming the known ones */
  readonly options: z.ZodType<Record<string, unknown>>;
  readonly make: F;
}

/** The schema of a kind that checks its own options (a plugin that registered none): any mapping. */
export const ANY_OPTIONS: z.ZodType<Record<string, unknown>> = z.record(z.string(), z.unknown());

/**
 * A kind from its option schema and a factory typed by it: `Factory` is the concept's factory
 * type, whose first parameter is the parsed options.
 */
export const kindOf =
  <Factory extends (options: Record<string, unknown>, ...deps: never[]) => unknown>() =>
  <S extends z.ZodType<Record<string, unknown>>>(
    options: S,
    make: (
      options: z.output<S>,
      ...deps: Parameters<Factory> extends [unknown, ...infer D] ? D : never
    ) => ReturnType<Factory>,
  ): Kind<Factory> => ({ options, make: make as unknown as Factory });
