/**
 * Rule verifier: the classic RLVR reward. The task family knows how to check an answer;
 * this judge only maps that check (and the role's parse result) onto reward values.
 */
import type { Episode, BatchRewards } from '../src/core/types.js';
import { taskOf } from '../src/core/groups.js';
import { finiteOption, nullRewards, roleSet } from '../src/core/judge-common.js';
import type { Judge, RoleOption, VerifyFn } from '../src/core/judge.js';

/** Options for {@link VerifierJudge}. */
export interface VerifierOptions {
  /** roles to reward (default 'solver'); other roles' turns get null */
  role?: RoleOption;
  /** judge name (default 'verifier') */
  name?: string;
  /** reward when `verify(task, turn.text)` is true (default 1) */
  correct?: number;
  /** reward for a valid action that does not verify (default 0) */
  wrong?: number;
  /** reward for an invalid (unparsed) action that does not verify (default 0) */
  invalid?: number;
}

/**
 * Rewards each turn of the configured roles by the caller-supplied `verify(task, output)`:
 *
 * - `task.answer` absent (unlabeled data) → `null` for every turn of that episode: there is
 *   nothing to verify against, and label-free training must never see a fake 0.
 * - else `verify(task, turn.text)` returns exactly `true` → `correct`;
 * - else `turn.action.valid` false → `invalid`;
 * - else → `wrong`.
 *
 * `verify` is called on the decoded text, not on `action.value`, so it sees exactly what the
 * model wrote and applies the family's own extraction rules; it is consulted first, so a
 * correct answer the role failed to parse still earns `correct` (the family's checker is the
 * authority on correctness; `invalid` only lets a caller penalise unparsed wrong output
 * below parsed wrong output). An exception thrown by `verify` propagates, with the episode
 * and turn in the message: a broken verifier must not be mistaken for a wrong answer.
 */
export class VerifierJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  /** it abstains on a task without an answer */
  readonly needsAnswer = true;
  private readonly correct: number;
  private readonly wrong: number;
  private readonly invalid: number;

  constructor(
    private readonly verify: VerifyFn,
    options: VerifierOptions = {},
  ) {
    this.name = options.name ?? 'verifier';
    if (typeof verify !== 'function') throw new Error(`judge '${this.name}': verify must be a function`);
    this.roles = roleSet(options.role, this.name);
    this.correct = finiteOption(options.correct ?? 1, this.name, 'correct');
    this.wrong = finiteOption(options.wrong ?? 0, this.name, 'wrong');
    this.invalid = finiteOption(options.invalid ?? 0, this.name, 'invalid');
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    batch.forEach((ep, e) => {
      ep.turns.forEach((turn, t) => {
        if (!this.roles.has(turn.role)) return;
        const task = taskOf(ep, turn);
        // An empty-string answer is still an answer; only a missing one abstains.
        if (task.answer === undefined || task.answer === null) return;
        let ok: boolean;
        try {
          ok = this.verify(task, turn.text) === true;
        } catch (err) {
          const msg = err instanceof Error ? err.message : String(err);
          throw new Error(`judge '${this.name}': verify failed on episode '${ep.id}' turn ${t}: ${msg}`, {
            cause: err,
          });
        }
        rewards[e][t] = ok ? this.correct : turn.action.valid ? this.wrong : this.invalid;
      });
    });
    return rewards;
  }
}
