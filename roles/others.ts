import type { Action } from '../src/core/types.js';
import { stepResults } from '../src/tasks/scratchpad.js';
import { invalid, valid, type Observation, type Role } from '../src/core/role.js';

/** Writes a new task for the solver: its output must look like a task prompt ending in '='. */
export class ProposerRole implements Role {
  readonly kind = 'proposer';
  readonly instructions = 'You are the proposer. Write a new, hard but solvable task ending in =.';
  render(o: Observation): string {
    return `new ${o.task.family}:`;
  }
  parse(output: string): Action {
    const text = output.trim();
    if (!/^[^=]+=$/.test(text))
      return invalid(`a proposed task is text ending in one '=', got ${JSON.stringify(text)}`);
    return valid(text);
  }
}

/**
 * Criticises an answer. Shown an answer, it says whether it is right, 'y' or 'n'. Shown
 * working of `steps` steps (`observation.working`, e.g. `12+56=68,68+34=102`), it names the
 * first wrong step, '1' to `steps`, or '0' when none is (SPC's step critic). The verdict is
 * the output's last character (what comes before is the critic's own working); anything
 * else is an invalid action. A critic that checks first is asked twice (the arena's
 * checkFirst): shown the task and the working's first step without its result (`stage:
 * 'check'`, `12+34+56=12+56=`) it solves on as a solver would (`68,68+34=102`: the action is
 * its results, `68,102`), then shown the working with its own result before each shown one
 * (`observation.check`: `12+56=68>69,69+34=102>103?`) it gives the verdict. Why two turns: a
 * critic that wrote its sums after reading the shown results copied them (`2+29=41` checked
 * as 41) and learned nothing, even from right labels. Asked per step (`observation.step`,
 * 1-based, with the check) it is shown that step alone, its own result before the shown one,
 * `69+34=102>103?`, and says whether they agree, 'y' or 'n'.
 */
export class CriticRole implements Role {
  readonly kind = 'critic';
  readonly instructions = 'You are the critic. Reply y if it is right, n if not, or the first wrong step (0 if none).';
  render(o: Observation): string {
    if (typeof o.working !== 'string') return `${o.task.prompt}${String(o.answer ?? '')}?`;
    if (o.stage === 'check') return `${o.task.prompt}${firstStep(o.working)}`;
    if (typeof o.check !== 'string') return `${o.task.prompt}${o.working}?`;
    // its own sum where the solver writes a result, then the shown one: each shown digit a fixed distance from its match
    const own = o.check.split(',');
    const steps = o.working.split(',').map((step, i) => step.replace('=', `=${own[i] ?? ''}>`));
    if (typeof o.step === 'number') {
      if (!Number.isInteger(o.step) || o.step < 1 || o.step > steps.length)
        throw new RangeError(`observation.step: a step of the working, 1 to ${steps.length}, got ${o.step}`);
      return `${steps[o.step - 1]}?`;
    }
    return `${o.task.prompt}${steps.join(',')}?`;
  }
  /** A verdict after its own check is one character (a step's digit, or per step 'y' or 'n') and the end of sequence. */
  maxNewTokens(o: Observation): number | undefined {
    return typeof o.check === 'string' ? 2 : undefined;
  }
  parse(output: string, o?: Observation): Action {
    const text = output.trim();
    const steps = Number(o?.steps);
    if (o?.stage === 'check') {
      const results = stepResults(`${firstStep(String(o.working))}${text}`);
      return results && results.length === steps
        ? valid(results.join(','))
        : invalid(`a check goes on from the first step to working of ${steps} steps, got ${JSON.stringify(text)}`);
    }
    const verdict = text.slice(-1);
    if (typeof o?.working === 'string' && typeof o.step !== 'number') {
      return /^\d$/.test(verdict) && Number(verdict) <= steps
        ? valid(verdict)
        : invalid(`the first wrong step is a digit from 0 (none) to ${steps}, got ${JSON.stringify(text)}`);
    }
    return verdict === 'y' || verdict === 'n'
      ? valid(verdict)
      : invalid(`a verdict ends in 'y' or 'n', got ${JSON.stringify(text)}`);
  }
}

/** The first step of working without its result: `12+56=68,68+34=102` gives `12+56=`. */
const firstStep = (working: string) => working.split(',')[0].replace(/=\d*$/, '=');

/**
 * SPC's sneaky generator: shown the task, it writes working for it as a solver would, which
 * should carry an error a critic misses. It writes a solver's text, so it starts its prompts
 * with the solver's token. SPC also shows the right solution to rewrite; the small models
 * here have 40 positions, too few for right working, the task and new working, so it writes
 * from the task alone. Its output must be working; whether it is wrong is the arena's rule
 * checker's call. Shown right working up to a step without its result (`observation.prefix`,
 * the arena's `sneakyWrites: result`: `12+34+56=12+56=`), it writes that step's result as a
 * solver would (`69`, or `69,69+34=103`: only the first number is read), SPC's rewrite of one step.
 */
export class SneakyRole implements Role {
  readonly kind = 'sneaky';
  readonly instructions = 'You are the solver. Reply with the working or answer only.';
  readonly token = 'solver';
  constructor(private readonly parseAnswer: (output: string) => Action) {}
  render(o: Observation): string {
    return typeof o.prefix === 'string' ? `${o.task.prompt}${o.prefix}` : o.task.prompt;
  }
  /** A rewritten result is at most 3 digits and what follows it (the sums here stay under 1,000). */
  maxNewTokens(o: Observation): number | undefined {
    return typeof o.prefix === 'string' ? 4 : undefined;
  }
  /** A rewritten step's result ends where a solver ends a step: the sampler stops at ',' (a last step's result ends at EOS). */
  stops(o: Observation): readonly string[] | undefined {
    return typeof o.prefix === 'string' ? [','] : undefined;
  }
  parse(output: string, o?: Observation): Action {
    const text = output.trim();
    if (typeof o?.prefix === 'string') {
      return /^(0|[1-9]\d*)$/.test(text) && Number.isSafeInteger(Number(text))
        ? valid(text)
        : invalid(`a rewritten step's result is a whole number, got ${JSON.stringify(text)}`);
    }
    const parsed = this.parseAnswer(text);
    return parsed.valid ? valid(text) : parsed;
  }
}

/**
 * Judges answers to a task: of two (pairwise) it names the better, 'A' (the first shown) or
 * 'B'; of one (pointwise) it says whether it is right, 'y' or 'n'. Anything else is an
 * invalid action. A judge that solves first is asked twice: shown the task alone it writes
 * its own answer (the action is that text), then shown its answer and the one to judge
 * (`observation.working`) it gives the verdict.
 */
export class JudgeRole implements Role {
  readonly kind = 'judge';
  readonly instructions =
    'You are the judge. Reply y or n for one answer, A or B for the better of two; shown a task alone, solve it.';
  render(o: Observation): string {
    const answers = (o.answers as string[] | undefined) ?? [];
    if (answers.length === 0) return o.task.prompt;
    // its own answer where a solver writes it, then the one judged: each digit a fixed distance from its match
    if (answers.length === 1 && typeof o.working === 'string') return `${o.task.prompt}${o.working}|${answers[0]}?`;
    if (answers.length === 1) return `${o.task.prompt}${answers[0]}?`;
    // each answer after its own copy of the task, as the solver writes it: the model reads both
    // in the form it knows (measured: 'task A x B y' left a judge from the solver base at chance)
    const [a, b] = answers.length === 2 ? answers : ['', ''];
    return `${o.task.prompt}${a}|${o.task.prompt}${b}>`;
  }
  /** The verdict is the output's last character; what comes before it is the judge's own working (JudgeLRM reasons, then judges). */
  parse(output: string, o: Observation): Action {
    const text = output.trim();
    if (((o.answers as string[] | undefined) ?? []).length === 0)
      return text ? valid(text) : invalid('an own answer is not empty');
    const verdict = text.slice(-1);
    if (((o.answers as string[] | undefined) ?? []).length === 1)
      return verdict === 'y' || verdict === 'n'
        ? valid(verdict)
        : invalid(`a verdict on one answer ends in 'y' or 'n', got ${JSON.stringify(text)}`);
    return verdict === 'A' || verdict === 'B'
      ? valid(verdict)
      : invalid(`a choice ends in 'A' or 'B', got ${JSON.stringify(text)}`);
  }
}
