/**
 * Judges by name, for configs: `{ kind: 'majority', options: { role: 'solver' } }` becomes a
 * Judge. Options arrive as untyped JSON/YAML, so each kind registers a strict zod schema and
 * they are parsed before any judge is built: a typo must fail loudly, naming the known options.
 */
import { z } from 'zod';
import { parseOptions } from '../src/config/issues.js';
import { kindOf } from '../src/config/kind.js';
import { existsSync } from 'node:fs';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import { CoverageJudge } from './coverage.js';
import { GroundedJudge } from './grounded.js';
import { LearnabilityJudge } from './learnability.js';
import { MajorityJudge } from './majority.js';
import { OutcomeJudge } from './outcome.js';
import { PeerJudge } from './peer.js';
import { UncertaintyJudge } from './uncertainty.js';
import { SelfCertaintyJudge } from './self-certainty.js';
import type { Judge, JudgeDeps, JudgeFactory, JudgeKind } from '../src/core/judge.js';
import { VerifierJudge } from './verifier.js';
import { VerdictJudge } from './verdict.js';

export type { JudgeDeps, JudgeFactory, JudgeKind } from '../src/core/judge.js';

const kind = kindOf<JudgeFactory>();

// the options most judges share: which roles it rewards and the name of its metrics
const roles = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
  error: 'a role id or a non-empty list of role ids',
});
const common = { role: roles.optional(), name: z.string().min(1).optional() };
const scores = { correct: z.number().optional(), wrong: z.number().optional(), invalid: z.number().optional() };
const p = z.enum(['verifier', 'vote']).optional();

/**
 * Every judge kind by name, with its options (all optional):
 * - 'verifier': role, name, correct, wrong, invalid — needs `deps.verify`;
 * - 'majority': role, name, minShare, maxShare (0..1);
 * - 'outcome': role, name: the arena's outcome for the role (a game's return per seat);
 * - 'verdict': role (default 'judge'), name, correct, wrong, invalid, score ('verdict' | 'working'), weights (truth -> a weight > 0): whether a judge's verdict (or its working before it) is right;
 * - 'peer': role, name, invalid: the share of 'y' verdicts other turns gave an answer (peer judgement, a judge in the loop);
 * - 'self-certainty': role, name, normalize ('none' | 'group'), invalidReward;
 * - 'learnability' (Absolute Zero), 'uncertainty' (R-Zero) and 'coverage': proposer rewards
 *   read from the solver turns of each proposal's episode (options in their files).
 */
export const JUDGE_KINDS: Readonly<Record<string, JudgeKind>> = Object.freeze({
  verifier: kind(z.strictObject({ ...common, ...scores }), (o, deps) => {
    if (typeof deps?.verify !== 'function')
      throw new Error("judge 'verifier': needs deps.verify, the task family's verifier");
    return new VerifierJudge(deps.verify, o);
  }),
  outcome: kind(z.strictObject(common), (o) => new OutcomeJudge(o)),
  verdict: kind(
    z.strictObject({
      ...common,
      ...scores,
      score: z.enum(['verdict', 'working']).optional(),
      weights: z.record(z.string(), z.number().positive()).optional(),
    }),
    (o) => new VerdictJudge(o),
  ),
  peer: kind(z.strictObject({ ...common, invalid: z.number().optional() }), (o) => new PeerJudge(o)),
  majority: kind(
    z.strictObject({
      ...common,
      minShare: z.number().min(0).max(1).optional(),
      maxShare: z.number().min(0).max(1).optional(),
    }),
    (o, deps) => new MajorityJudge(o, deps?.verify),
  ),
  learnability: kind(
    z.strictObject({ ...common, solver: roles.optional(), p, invalid: z.number().optional() }),
    (o, deps) => new LearnabilityJudge(deps?.verify, o),
  ),
  uncertainty: kind(
    z.strictObject({
      ...common,
      solver: roles.optional(),
      p,
      repetition: z.number().optional(),
      threshold: z.number().optional(),
      invalid: z.number().optional(),
    }),
    (o, deps) => new UncertaintyJudge(deps?.verify, o),
  ),
  grounded: kind(
    z.strictObject({
      ...common,
      solver: z.string().min(1).optional(),
      probe: z.string().min(1, 'a JSONL file of labeled target tasks'),
      invalid: z.number().optional(),
    }),
    (o, deps) => {
      const probe = o.probe as string;
      if (!existsSync(probe)) throw new Error(`judge 'grounded': option 'probe': ${probe} does not exist`);
      if (!deps?.verify || !deps.live || !deps.family)
        throw new Error("judge 'grounded': needs the task family's verifier and the loop's live models");
      return new GroundedJudge(deps.verify, readTasksJsonl(probe, deps.family), deps.live, o as never);
    },
  ),
  coverage: kind(
    z.strictObject({ ...common, solver: roles.optional() }),
    (o, deps) => new CoverageJudge(deps?.measure!, o),
  ),
  'self-certainty': kind(
    z.strictObject({
      ...common,
      normalize: z.enum(['none', 'group']).optional(),
      invalidReward: z.number().optional(),
    }),
    (o) => new SelfCertaintyJudge(o),
  ),
});

/**
 * Builds the judge of kind `name` (a key of {@link JUDGE_KINDS}) from `options` (default {},
 * parsed at the path `where`) and `deps` (default {}). Throws `unknown judge 'x'; known:
 * majority, self-certainty, verifier` (known kinds sorted) for an unknown kind.
 */
export function makeJudge(
  name: string,
  options: Record<string, unknown> = {},
  deps: JudgeDeps = {},
  where = `${name}.options`,
): Judge {
  // hasOwn, not `in`: 'toString' and friends are not judges
  if (!Object.hasOwn(JUDGE_KINDS, name)) {
    throw new Error(`unknown judge '${name}'; known: ${Object.keys(JUDGE_KINDS).sort().join(', ')}`);
  }
  const k = JUDGE_KINDS[name];
  return k.make(parseOptions(k.options, options, where), deps);
}
