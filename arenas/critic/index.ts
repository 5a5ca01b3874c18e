import type { Observable } from 'rxjs';
import { fromRun } from '../../src/core/operators/from-run.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import {
  firstWrongStep,
  plantError,
  resultsAgree,
  rightResults,
  scratchpadTarget,
  stepResults,
  sumOperands,
} from '../../src/tasks/scratchpad.js';
import { hashText } from '../../src/util/hash.js';
import { Rng } from '../../src/util/rng.js';
import { invalid } from '../../src/core/role.js';
import { arenaOptions } from '../options.js';
import { CriticArenaOptionsSchema, type CriticArenaOptions } from './options.js';
import { criticMetrics } from './metrics.js';
import { plantIn } from './planters.js';
import { CHECK_SCOPE, firstRejected } from './protocol.js';
import type { ActOptions, Arena, ArenaContext, EpisodeEnd } from '../../src/core/arena.js';

/**
 * Self-Play Critic (SPC): a step critic against a sneaky generator, on sums worked step by
 * step (`12+34+56=` worked as `12+56=68,68+34=102`). The environment writes right working
 * (an operand order drawn from the task id). The sneaky role writes working of its own
 * (see SneakyRole for why it is not shown the right working); the rule checker (src/tasks/scratchpad.ts, never the model) must find a wrong
 * step in it, or the attempt is invalid and costs `penalty`. The critic, shown working,
 * names its first wrong step or '0' for none, `verdicts` times on the planted working and as
 * often on the right working, so that naming a step blindly does not pay.
 *
 * Zero-sum rewards, as SPC: a critic verdict on the planted working is +1 when it names the
 * first wrong step and -1 otherwise (an invalid verdict too), and the sneaky role's outcome
 * is minus the mean of those, so it wins +1 when every verdict misses. On the right working
 * the critic earns +1 or -1 alone. The critic's rewards come from the `verdict` judge (each
 * verdict's turn, or with `perStep` each step's answer, carries its truth as its task's
 * answer), the sneaky role's from `outcome`, computed on the verdicts (per step: the first
 * step rejected). With `corrupter: random | slip` the environment plants the error and only
 * the critic acts. With `checkFirst` each verdict follows the critic's own check, the
 * working solved on, and a sneaky attempt whose first wrong step such a check cannot see (a
 * misread operand with a right sum, where right working from the shown first step agrees) is
 * invalid: the game is about errors the critic can find. The verdicts are kept in the
 * episode's info (`verdicts: { planted, right }`, null for an invalid one).
 */
export class AdversarialCriticArena implements Arena {
  readonly kind = 'adversarial-critic';
  readonly roles: Record<string, string>;
  readonly options: CriticArenaOptions;

  /** `given`: the wrong working of each task by its id, for `corrupter: given` */
  constructor(
    options: unknown,
    family: TaskFamily<unknown>,
    private readonly given?: ReadonlyMap<string, string>,
  ) {
    this.options = arenaOptions(CriticArenaOptionsSchema, options);
    if (this.options.corrupter === 'given' && !given)
      throw new Error(
        "arena.options.corrupter: 'given' is for the critic evaluator, whose data file carries each task's working",
      );
    if (family.name !== 'arithmetic')
      throw new Error(
        `arena 'adversarial-critic' does not serve task family '${family.name}': it needs sums worked step by step (family 'arithmetic')`,
      );
    this.roles = {
      ...(this.options.corrupter === 'sneaky' ? { sneaky: 'sneaky' } : {}),
      critic: 'critic',
      ...(this.options.checker ? { checker: 'critic' } : {}),
    };
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    const operands = sumOperands(task.prompt);
    if (!operands || operands.length < 2 || operands.length > 10)
      throw new Error(
        `arena 'adversarial-critic': task ${task.id} is not a sum of 2 to 10 operands: ${JSON.stringify(task.prompt)}`,
      );
    const rng = new Rng(hashText(task.id));
    const right = scratchpadTarget(operands, rng);
    const steps = operands.length - 1;
    let planted: string | null;
    if (this.options.corrupter === 'sneaky') {
      const rewrite = this.options.sneakyWrites === 'result';
      const at = rewrite ? 1 + rng.int(steps) : 0;
      // shown right working up to step `at` without its result, it writes that result
      const prefix = right.split(',').slice(0, at).join(',').replace(/=\d+$/, '=');
      const attempt = await ctx.act('sneaky', rewrite ? { task, prefix } : { task }, { compare: 'group' });
      if (rewrite && attempt.action.valid) {
        const value = Number(attempt.action.value);
        const result = Number(stepResults(right)![at - 1]);
        if (value === result) attempt.action = invalid(`step ${at}'s result ${value} is right: nothing was planted`);
        else attempt.action = { ...attempt.action, value: plantError(right, at, value) };
      }
      const check = attempt.action.valid ? firstWrongStep(operands, attempt.action.value!) : null;
      const seen =
        check && 'first' in check && this.options.checkFirst
          ? resultsAgree(operands, attempt.action.value!)!.indexOf(false) + 1
          : 0;
      if (check && 'first' in check && check.first === 0)
        attempt.action = invalid('the rule checker finds no wrong step: nothing was planted');
      else if (check && 'error' in check) attempt.action = invalid(check.error);
      else if (check && this.options.checkFirst && seen !== check.first) {
        attempt.action = invalid(
          `the first wrong step is ${check.first}, but right working from the shown first step first differs ` +
            `${seen ? `at step ${seen}` : 'nowhere'} (a misread operand with a right sum): a critic that checks cannot see it`,
        );
      }
      emit(attempt);
      if (!attempt.action.valid) {
        emit({ end: true, outcome: { sneaky: -this.options.penalty }, info: { planted: null } });
        return;
      }
      planted = attempt.action.value;
    } else if (this.options.corrupter === 'given') {
      planted = this.given?.get(task.id) ?? null;
      const check = planted === null ? null : firstWrongStep(operands, planted);
      if (!check || !('first' in check) || check.first === 0)
        throw new Error(
          `arena 'adversarial-critic': task ${task.id} has no given working with a wrong step${check && 'error' in check ? ` (${check.error})` : ''}`,
        );
    } else planted = plantIn(right, this.options.corrupter, rng);
    const truth = String((firstWrongStep(operands, planted!) as { first: number }).first);
    /** the critic's verdicts on one showing, `verdicts` times: a step, '0', or null for an invalid one */
    const ask = async (working: string, answer: string, showing: string): Promise<(string | null)[]> => {
      const judged: Task = { id: `${task.id}/${showing}`, family: task.family, prompt: task.prompt, answer };
      const results = rightResults(operands, working)!;
      const rightSteps = results.split(',');
      const checked: Task = {
        id: `${task.id}/${showing}/check`,
        family: task.family,
        prompt: task.prompt,
        answer: results,
      };
      const verdict = async (): Promise<string | null> => {
        if (!this.options.checkFirst)
          return own(await ctx.act('critic', { task, working, steps }, { compare: 'episode', task: judged }));
        const check = await ctx.act(
          this.options.checker ? 'checker' : 'critic',
          { task, working, steps, stage: 'check' },
          { compare: CHECK_SCOPE, task: checked },
        );
        emit(check);
        const seen = { task, working, steps, check: check.action.valid ? check.action.value! : '' };
        if (!this.options.perStep) return own(await ctx.act('critic', seen, { compare: 'episode', task: judged }));
        const mine = check.action.valid ? check.action.value!.split(',') : [];
        const answered = await Promise.all(
          resultsAgree(operands, working)!.map(async (agrees, k) => {
            const filed: ActOptions & { task: Task } = {
              compare:
                this.options.stepGroups === 'showing' ? `episode:${showing}:step${k + 1}` : `episode:step${k + 1}`,
              task: {
                id: `${task.id}/${showing}/step${k + 1}`,
                family: task.family,
                prompt: task.prompt,
                answer: agrees ? 'y' : 'n',
              },
            };
            const mark = await ctx.act('critic', { ...seen, step: k + 1 }, filed);
            const missed = !(mark.action.valid && mark.action.value === filed.task.answer);
            const guided = this.options.guide && missed && mine[k] === rightSteps[k];
            return {
              mark,
              given: guided
                ? await ctx.act('critic', { ...seen, step: k + 1 }, { ...filed, given: filed.task.answer! })
                : undefined,
            };
          }),
        );
        for (const { mark, given } of answered) [mark, given].forEach((t) => t && emit(t));
        return firstRejected(answered.map(({ mark: t }) => (t.action.valid ? t.action.value : null)));
      };
      return Promise.all(Array.from({ length: this.options.verdicts }, verdict));
    };
    /** a verdict turn's verdict, emitted */
    const own = (t: Turn): string | null => {
      emit(t);
      return t.action.valid ? t.action.value : null;
    };
    // the order of the two showings is drawn, so the critic cannot learn it from the turn order
    const showings: [string, string, 'planted' | 'right'][] = [
      [planted!, truth, 'planted'],
      [right, '0', 'right'],
    ];
    if (rng.next() < 0.5) showings.reverse();
    const verdicts: Record<string, (string | null)[]> = {};
    for (const [working, answer, showing] of showings) verdicts[showing] = await ask(working, answer, showing);
    const critic =
      verdicts.planted.map((v) => (v === truth ? 1 : -1) as number).reduce((a, b) => a + b, 0) /
      verdicts.planted.length;
    emit({
      end: true,
      ...(this.options.corrupter === 'sneaky' ? { outcome: { sneaky: -critic } } : {}),
      info: { planted, truth, verdicts },
    });
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    return criticMetrics(episodes);
  }
}

export { CriticArenaOptionsSchema, type CriticArenaOptions } from './options.js';
export { firstRejected } from './protocol.js';
