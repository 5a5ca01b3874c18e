import type { ExperimentConfig } from '../config/schema.js';

/**
 * The roles that train at iteration `it` (1-based): those with `train: true`, narrowed by
 * the phase `it` falls in when `phases` is set. Phases repeat: R-Zero alternates a proposer
 * phase and a solver phase; without phases every role trains at every step (Absolute Zero).
 */
export function trainingRoles(c: ExperimentConfig, it: number): Set<string> {
  const willing = Object.entries(c.roles)
    .filter(([, r]) => r.train)
    .map(([id]) => id);
  if (!c.phases) return new Set(willing);
  const phase = c.phases[phaseIndex(c, it)];
  return new Set(willing.filter((id) => phase.roles.includes(id)));
}

/** The index of the phase `it` falls in (for the logs), or -1 without phases. */
export function phaseIndex(c: ExperimentConfig, it: number): number {
  if (!c.phases) return -1;
  const cycle = c.phases.reduce((n, p) => n + p.iterations, 0);
  let t = (it - 1) % cycle;
  for (let i = 0; i < c.phases.length; i++) {
    if (t < c.phases[i].iterations) return i;
    t -= c.phases[i].iterations;
  }
  return -1;
}
