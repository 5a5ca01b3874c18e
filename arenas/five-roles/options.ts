import { z } from 'zod';
import { positiveInt } from '../options.js';

export const FiveRolesOptionsSchema = z.strictObject({
  attempts: positiveInt().default(4), // solver answers to each task (its comparison group)
  limits: z.record(z.string(), z.unknown()).default({}), // bounds a proposal must stay within, a difficulty of the family
  bank: positiveInt().default(8), // tasks the memory manager may keep
  replay: z.number().int().min(0).default(4), // kept tasks played again each iteration, beside the proposed ones
  critic: z.boolean().default(true), // the critic marks each answer's steps (off: four roles, for an ablation)
});
export type FiveRolesOptions = z.output<typeof FiveRolesOptionsSchema>;

/** The comparison group of the judge's own answers and of the critic's checks: apart from their verdicts. */
export const OWN_SCOPE = 'episode:own';
export const CHECK_SCOPE = 'episode:check';
