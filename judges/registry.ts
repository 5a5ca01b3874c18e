/**
 * Judges by name, for configs: `{ kind: 'majority', options: { role: 'solver' } }` becomes a
 * Judge. Options arrive as untyped JSON/YAML, so they are checked here, key by key, before
 * any judge is built: a typo must fail loudly, not fall back to a default.
 */
import { show } from './common.js';
import { existsSync } from 'node:fs';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import { CoverageJudge } from './coverage.js';
import { GroundedJudge, type LiveModels } from './grounded.js';
import { LearnabilityJudge } from './learnability.js';
import { MajorityJudge } from './majority.js';
import { OutcomeJudge } from './outcome.js';
import { PeerJudge } from './peer.js';
import { UncertaintyJudge } from './uncertainty.js';
import { SelfCertaintyJudge } from './self-certainty.js';
import type { Task } from '../src/core/types.js';
import type { Judge, VerifyFn } from './types.js';
import { VerifierJudge } from './verifier.js';
import { VerdictJudge } from './verdict.js';

/** What a factory may need besides its options. */
export interface JudgeDeps {
  /** the task family's verifier; required by 'verifier' */
  verify?: VerifyFn;
  /** the task family's difficulty measure; required by 'coverage' */
  measure?: (task: Task) => Record<string, number>;
  /** the task family's name, for reading task files */
  family?: string;
  /** what the loop can measure on its live models; required by 'grounded' */
  live?: LiveModels;
}

/** Builds one kind of judge from config options (checked) and dependencies. */
export type JudgeFactory = (options: Record<string, unknown>, deps: JudgeDeps) => Judge;

/** A check for one option's value: returns what was expected when it fails, else undefined. */
type Check = (value: unknown) => string | undefined;

const finite: Check = (v) => (typeof v === 'number' && Number.isFinite(v) ? undefined : 'a finite number');
const weights: Check = (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((w) => typeof w === 'number' && Number.isFinite(w) && w > 0) ? undefined : 'a map from a truth to a weight > 0';
const text: Check = (v) => (typeof v === 'string' && v !== '' ? undefined : 'a non-empty string');
const roles: Check = (v) =>
  (typeof v === 'string' && v !== '') ||
  (Array.isArray(v) && v.length > 0 && v.every((r) => typeof r === 'string' && r !== ''))
    ? undefined
    : 'a role id or a non-empty list of role ids';
const oneOf =
  (...allowed: string[]): Check =>
  (v) =>
    typeof v === 'string' && allowed.includes(v) ? undefined : `one of ${allowed.map((a) => `'${a}'`).join(', ')}`;

/**
 * Throws unless `options` is a plain object whose keys all appear in `spec` and whose values
 * pass their checks. Errors name the judge kind and the option. A key set to `undefined`
 * counts as absent (JSON never produces it; spread-built option objects may).
 */
function checkOptions(kind: string, options: unknown, spec: Record<string, Check>): Record<string, unknown> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new Error(`judge '${kind}': options must be an object, got ${show(options)}`);
  }
  const known = Object.keys(spec);
  for (const [key, value] of Object.entries(options)) {
    if (!Object.hasOwn(spec, key)) {
      throw new Error(`judge '${kind}': unknown option '${key}'; known: ${known.join(', ')}`);
    }
    if (value === undefined) continue;
    const expected = spec[key](value);
    if (expected !== undefined) {
      throw new Error(`judge '${kind}': option '${key}' must be ${expected}, got ${show(value)}`);
    }
  }
  return options as Record<string, unknown>;
}

/**
 * Every judge kind by name. Options per kind (all optional):
 * - 'verifier': role, name, correct, wrong, invalid — needs `deps.verify`;
 * - 'majority': role, name, minShare (0..1);
 * - 'outcome': role, name: the arena's outcome for the role (a game's return per seat);
 * - 'verdict': role (default 'judge'), name, correct, wrong, invalid, score ('verdict' | 'working'), weights (truth -> a weight > 0): whether a judge's verdict (or its working before it) is right;
 * - 'peer': role, name, invalid: the share of 'y' verdicts other turns gave an answer (peer judgement, a judge in the loop);
 * - 'self-certainty': role, name, normalize ('none' | 'group'), invalidReward;
 * - 'learnability' (Absolute Zero), 'uncertainty' (R-Zero) and 'coverage': proposer rewards
 *   read from the solver turns of each proposal's episode (options in their files).
 * Each factory throws on unknown option keys or wrongly typed values, naming kind and option.
 */
export const JUDGE_KINDS: Readonly<Record<string, JudgeFactory>> = Object.freeze({
  verifier: (options, deps) => {
    const o = checkOptions('verifier', options, { role: roles, name: text, correct: finite, wrong: finite, invalid: finite });
    if (typeof deps?.verify !== 'function') {
      throw new Error("judge 'verifier': needs deps.verify, the task family's verifier");
    }
    return new VerifierJudge(deps.verify, o);
  },
  outcome: (options) => new OutcomeJudge(checkOptions('outcome', options, { role: roles, name: text })),
  verdict: (options) => new VerdictJudge(checkOptions('verdict', options, { role: roles, name: text, correct: finite, wrong: finite, invalid: finite, score: oneOf('verdict', 'working'), weights })),
  peer: (options) => new PeerJudge(checkOptions('peer', options, { role: roles, name: text, invalid: finite })),
  majority: (options) => new MajorityJudge(checkOptions('majority', options, { role: roles, name: text, minShare: finite, maxShare: finite })),
  learnability: (options, deps) => new LearnabilityJudge(deps?.verify, checkOptions('learnability', options, { role: roles, solver: roles, p: oneOf('verifier', 'vote'), invalid: finite, name: text })),
  uncertainty: (options, deps) =>
    new UncertaintyJudge(deps?.verify, checkOptions('uncertainty', options, { role: roles, solver: roles, p: oneOf('verifier', 'vote'), repetition: finite, threshold: finite, invalid: finite, name: text })),
  grounded: (options, deps) => {
    const o = checkOptions('grounded', options, { role: roles, solver: text, probe: text, invalid: finite, name: text });
    if (typeof o.probe !== 'string') throw new Error("judge 'grounded': option 'probe' (a JSONL file of labeled target tasks) is required");
    if (!existsSync(o.probe)) throw new Error(`judge 'grounded': option 'probe': ${o.probe} does not exist`);
    if (!deps?.verify || !deps.live || !deps.family) throw new Error("judge 'grounded': needs the task family's verifier and the loop's live models");
    return new GroundedJudge(deps.verify, readTasksJsonl(o.probe, deps.family), deps.live, o as never);
  },
  coverage: (options, deps) => new CoverageJudge(deps?.measure!, checkOptions('coverage', options, { role: roles, solver: roles, name: text })),
  'self-certainty': (options) =>
    new SelfCertaintyJudge(
      checkOptions('self-certainty', options, {
        role: roles,
        name: text,
        normalize: oneOf('none', 'group'),
        invalidReward: finite,
      }),
    ),
});

/**
 * Builds the judge of kind `kind` (a key of {@link JUDGE_KINDS}) from `options` (default {})
 * and `deps` (default {}). Throws `unknown judge 'x'; known: majority, self-certainty,
 * verifier` (known kinds sorted) for an unknown kind; option errors come from the factory.
 */
export function makeJudge(kind: string, options: Record<string, unknown> = {}, deps: JudgeDeps = {}): Judge {
  // hasOwn, not `in`: 'toString' and friends are not judges
  if (!Object.hasOwn(JUDGE_KINDS, kind)) {
    throw new Error(`unknown judge '${kind}'; known: ${Object.keys(JUDGE_KINDS).sort().join(', ')}`);
  }
  return JUDGE_KINDS[kind](options, deps);
}
