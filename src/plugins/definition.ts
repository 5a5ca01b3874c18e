/**
 * What a plugin's `define*` call returns: one named kind of one concept. A leaf (it imports
 * nothing), so the loader and the plan can hold definitions without the concepts' types.
 */
/** Marks a definition across copies of this module (a plugin's `coevolve` and the CLI's). */
export const DEFINITION: unique symbol = Symbol.for('coevolve.definition') as never;

/** The concepts a plugin can add to, as registries and errors name them. */
export type Concept = 'arena' | 'judge' | 'role' | 'task family' | 'evaluator';

/** One named kind of one concept, as `define*` returns it. */
export interface Definition<C extends Concept = Concept, T = unknown> {
  readonly [DEFINITION]: true;
  readonly concept: C;
  readonly name: string;
  readonly value: T;
}

/** True for what a `define*` function returned (in any copy of coevolve). */
export function isDefinition(x: unknown): x is Definition {
  return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[DEFINITION] === true;
}

/** A definition with who gave it (a plugin's path, or the definitions given to runExperiment). */
export type PluginDefinition = Definition & { source: string };
