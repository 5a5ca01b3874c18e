/**
 * A study: conditions x seeds of experiment configs, each one run directory, compared on one
 * metric at the same budget (what a baseline needs). `coevolve study FILE` runs what is missing,
 * resumes what was killed and skips what finished, then writes the summary.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigError, describeIssue } from '../config/issues.js';

const SAFE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

export const ConditionSchema = z.strictObject({
  config: z.string().min(1), // the experiment config
  set: z.array(z.string().min(1)).default([]), // overrides, as `coevolve run --set`
  metric: z.string().min(1).optional(), // what this condition is measured by (default the study's)
});

export const StudySchema = z.strictObject({
  name: z.string().regex(SAFE, 'a plain name'), // its runs go to <outDir>/<name>/<condition>-s<seed>
  outDir: z.string().min(1).default('runs'),
  seeds: z.array(z.number().int()).min(1).default([1, 2, 3]),
  parallel: z.number().int().positive().default(2), // runs at once
  metric: z.string().min(1), // the metric compared, e.g. eval/harder/pass1
  last: z.number().int().positive().default(1), // each run's figure: the mean of its last this many measurements
  also: z.array(z.string().min(1)).default([]), // further metrics shown, each as the mean of its last measurements
  conditions: z
    .record(z.string().regex(SAFE, 'a plain name'), ConditionSchema)
    .refine((c) => Object.keys(c).length > 0, 'at least one condition'),
});
export type Study = z.output<typeof StudySchema>;

/** A study file, checked: every error names its path and the file. */
export function loadStudy(path: string): Study {
  const got = StudySchema.safeParse(parse(readFileSync(path, 'utf8')) ?? {}, { reportInput: true });
  if (got.success) return got.data;
  const issues = got.error.issues.flatMap((zi) =>
    describeIssue(zi, StudySchema).map(({ segs, message }) => ({ path: segs.join('.'), message })),
  );
  throw new ConfigError(
    [`invalid study ${path}:`, ...issues.map((i) => `  ${i.path || '(top)'}: ${i.message}`)].join('\n'),
    issues,
  );
}
