import type { Observable } from 'rxjs';
import { fromRun } from '../../src/core/operators/from-run.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import { invalid } from '../../src/core/role.js';
import { ownTruth, resultsAgree, rightResults, sumOperands } from '../../src/tasks/scratchpad.js';
import { hashText } from '../../src/util/hash.js';
import { Rng } from '../../src/util/rng.js';
import { plantIn } from '../critic/planters.js';
import { digitSlip } from '../judge/slips.js';
import { memoryOp } from '../../roles/memory.js';
import { arenaOptions } from '../options.js';
import { CHECK_SCOPE, firstRejected } from '../critic/protocol.js';
import { OWN_SCOPE } from '../judge/options.js';
import { bankCarry, managerView, opIsRight, rightOp, rightOpText, shownBank, type BankOp } from './bank.js';
import { fiveRolesMetrics } from './metrics.js';
import { FiveRolesOptionsSchema, type FiveRolesOptions } from './options.js';
import type { Arena, ArenaCarry, ArenaContext, EpisodeEnd } from '../../src/core/arena.js';

/** The comparison group of a showing's re-rolled manager operations (`managerRerollouts`). */
export const MANAGER_SCOPE = 'episode:memory' as const;

/**
 * All five roles in one episode, on sums worked step by step (`12+34+56=` worked as
 * `12+56=68,68+34=102`):
 * 1. the proposer writes a task (checked as `propose-solve` checks it; a kept task replayed
 *    from the bank skips this);
 * 2. the solver works it `attempts` times, each attempt filed under its own task id;
 * 3. the critic marks each attempt's errors: it solves on from the attempt's first step (its
 *    check), then says of each step alone whether the shown result agrees, y or n (SPC's step
 *    critic, as `adversarial-critic` with checkFirst and perStep); each mark carries the
 *    step's truth, which the environment's rule checker computes; with `plant`, each right
 *    attempt beyond the wrong ones also gets a twin with one step's result changed by the
 *    environment (SPC's critic sees planted errors), marked beside it; each step's marks carry
 *    their truth on as many right as wrong steps (`balanced`, within the step's comparison group);
 * 4. the judge writes its own working, then says of the attempt's answer y or n (JudgeLRM's
 *    solve-first verdict), `verdicts` times; each verdict is filed under the attempt's id with its truth, so the
 *    `peer` judge pays the solver by it (no label reaches the solver) and the `verdict` judge
 *    pays the judge; with `judgePlant`, each right attempt beyond the wrong ones also gets a
 *    slip of its answer judged after the same working, taught n, paying no one;
 * 5. the memory manager is shown the bank (the tasks it keeps, by position; `retrieve` orders it
 *    and says whether the task was found: `managerView`) and the task with
 *    the judge's verdicts and the critic's (`12+34+56=yyn:yyn`, y where the critic passed
 *    every step), and writes ADD, UPDATE i, DELETE i or NOOP. The bank keeps the episode's
 *    task (an ADD's or UPDATE's text is not read); the operations apply between iterations
 *    (the arena's `carry`) and `replay` kept tasks are played again each iteration. The
 *    manager's outcome is 1 when its operation keeps exactly what the solver got wrong (most
 *    attempts missed, by the environment's answer: `rightOp`; with `managerTruth: marks`, by
 *    most of the judge's and the critic's marks, label-free as the solver's pay), else 0; the right operation's
 *    kind is filed as its turn's truth, for an `outcome` judge's `balance`.
 * The answers the critic and judge are paid on come from the environment (its answer and
 * rule checker), as SPC's and JudgeLRM's do, on as many right as wrong attempts (`balanced`:
 * the verdicts and marks on the others carry no truth, though the judge's still pay the solver); the solver and the proposer (learnability with
 * `p: peer`) are paid only through the judge. Comparison groups: the attempts at a task; the
 * judge's verdicts; its own answers; the critic's checks; each step's marks; the proposals
 * across the batch (every seed is the same blank prompt); the manager's operations across the
 * batch (each faces its own bank and task).
 */
export class FiveRolesArena implements Arena {
  readonly kind = 'five-roles';
  readonly roles: Record<string, string>;
  readonly seedsTasks = true;
  readonly options: FiveRolesOptions;
  readonly carry: ArenaCarry;
  readonly progress = ['bank/size', 'memory/right_op'];
  private readonly limits: unknown;

  constructor(
    options: unknown,
    private readonly family: TaskFamily<unknown>,
  ) {
    this.options = arenaOptions(FiveRolesOptionsSchema, options);
    if (!family.parseProposal || family.name !== 'arithmetic')
      throw new Error(
        `arena 'five-roles' does not serve task family '${family.name}': it needs sums worked step by step (family 'arithmetic', scratchpad)`,
      );
    this.limits = family.validate(this.options.limits, 'arena.options.limits');
    if (this.options.managerRerollouts && this.options.managerCompare === 'kind')
      throw new Error(
        "arena 'five-roles': managerRerollouts compares a showing's re-rolled operations with each other; it cannot also compare them by kind (managerCompare: 'kind'): set one",
      );
    this.roles = {
      proposer: 'proposer',
      solver: 'solver',
      ...(this.options.critic ? { critic: 'critic' } : {}),
      judge: 'judge',
      memory: 'memory',
    };
    this.carry = bankCarry(this.options.bank, this.options.replay);
  }

  play(seed: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(seed, ctx, emit));
  }

  private async run(seed: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    let task: Task = seed;
    if (seed.prompt === '') {
      const proposal = await ctx.act('proposer', { task: seed }, { compare: 'batch' });
      const checked = this.check(proposal, ctx);
      if ('error' in checked) {
        emit({ ...proposal, action: invalid(checked.error) });
        return;
      }
      emit(proposal);
      task = { ...checked.task, id: `${seed.id}/task` };
    }
    const operands = sumOperands(task.prompt);
    if (!operands || task.answer === undefined)
      throw new Error(
        `arena 'five-roles': task ${task.id} is not a sum with an answer: ${JSON.stringify(task.prompt)}`,
      );
    const attempts = await Promise.all(
      Array.from({ length: this.options.attempts }, (_, k) =>
        ctx.act('solver', { task }, { compare: 'episode', task: { ...task, id: `${task.id}/a${k}` } }),
      ),
    );
    attempts.forEach(emit);
    const agrees = attempts.map((a) =>
      this.options.critic && a.action.valid ? resultsAgree(operands, a.text.trim()) : null,
    );
    // balanced teaching (as the judge arena's judgeAll, Cooper's positive and negative): the verdicts on as many
    // right as wrong attempts carry their truth, the rest none; measured, a judge and a critic taught on every
    // attempt of a solver right 0.9 of the time settled on 'y' to all within 25 iterations
    const verified = attempts.map((a) => (a.action.valid ? this.family.verify(task, a.text) : null));
    const slips = this.slips(task, verified); // judgePlant's, by attempt
    const judgeTaught = balanced([...verified, ...slips.map(() => false)]);
    // the critic's showings: the attempts, and with `plant` a planted twin of each right attempt beyond the wrong ones
    // (its working every step right and its answer too: working that stops early has right steps and a wrong answer)
    const clean = agrees.map((g) => (g ? g.every(Boolean) : null));
    const surplus = clean.filter((c) => c === true).length - clean.filter((c) => c === false).length;
    const whole = clean.flatMap((c, k) => (c && this.family.verify(task, attempts[k].text) ? [k] : []));
    const plant = this.options.plant;
    const twins =
      plant === 'none'
        ? []
        : whole.slice(0, Math.max(0, surplus)).map((k) => {
            const working = plantIn(attempts[k].text.trim(), plant, new Rng(hashText(`${task.id}/a${k}`)));
            return { id: `${task.id}/a${k}/planted`, working, agree: resultsAgree(operands, working) };
          });
    const showings = [
      ...attempts.map((a, k) => ({ id: `${task.id}/a${k}`, working: a.text.trim(), agree: agrees[k] })),
      ...twins,
    ];
    // each step's marks are paid in their own comparison group: balanced there, as many right as wrong steps
    const stepTaught = Array.from({ length: operands.length - 1 }, (_, j) =>
      balanced(showings.map((s) => (s.agree ? s.agree[j] : null))),
    );
    const critiques = showings.map((s, i) =>
      s.agree
        ? this.critic(
            task,
            s.id,
            operands,
            s.working,
            s.agree,
            stepTaught.map((t) => t[i]),
            ctx,
            emit,
          )
        : Promise.resolve('-'),
    );
    const marks = await Promise.all(
      attempts.map(async (a, k) => {
        const id = `${task.id}/a${k}`;
        const judged = a.action.valid ? await this.judge(task, id, a.action.value!, judgeTaught[k], ctx, emit) : null;
        // every slip teaches: there are no more of them than right attempts beyond the wrong ones
        const slip = slips.find((x) => x.attempt === k);
        if (judged && slip) emit(await this.ask(task, `${id}/slip`, judged.working, slip.answer, 'n', ctx));
        return { judge: judged?.mark ?? '-', critic: await critiques[k] };
      }),
    );
    await Promise.all(critiques);
    const solved =
      attempts.filter((a) => a.action.valid && this.family.verify(task, a.text)).length * 2 > attempts.length;
    const said = marks.flatMap((m) => [m.judge, m.critic]).filter((x) => x === 'y' || x === 'n');
    // what the judge and the critic say: most of their marks y (a tie is not solved, as the pretraining's truth)
    const marked = said.filter((x) => x === 'y').length * 2 > said.length;
    const paidOn = this.options.managerTruth === 'marks' ? marked : solved;
    const strings = { judge: marks.map((m) => m.judge).join(''), critic: marks.map((m) => m.critic).join('') };
    const { memory: bank, fact } = managerView(shownBank(seed), task.prompt, strings, this.options.retrieve);
    const full = bank.length >= this.options.bank;
    const shown = { id: task.id, family: task.family, prompt: task.prompt }; // the manager never sees the answer
    // the right operation's kind is the turn's truth: an `outcome` judge with `balance` weighs by it
    const truth = rightOp(task, bank, this.options.bank, paidOn);
    const observation = { task: shown, memory: bank, fact, full };
    const byKind = this.options.managerCompare === 'kind';
    const k = this.options.managerRerollouts;
    const filed = {
      compare: k ? MANAGER_SCOPE : byKind ? (`batch:${truth}` as const) : ('batch' as const),
      task: { ...task, answer: truth },
      ...(byKind ? { state: `manager:${truth}` } : {}),
    };
    const read = (t: Turn) => {
      const m = t.action.valid ? memoryOp(t.action.value!, bank) : null;
      const op: BankOp | null = m && { op: m.op, task, ...('id' in m ? { entry: m.id } : {}) };
      return { op, right: op !== null && opIsRight(op, bank, this.options.bank, paidOn) };
    };
    const turns = await Promise.all(
      Array.from({ length: Math.max(1, k) }, () => ctx.act('memory', observation, filed)),
    );
    const samples = turns.map(read);
    // re-rolled, each sample is paid its own operation's outcome, so the samples of one showing are a fair comparison
    turns.forEach((t, i) => emit(k ? { ...t, outcome: samples[i].right ? 1 : 0 } : t));
    const { op, right } = samples[0]; // the first sample is the policy's operation: the bank applies it
    if (this.options.guide && !samples.some((r) => r.right)) {
      const given = await ctx.act('memory', observation, {
        ...filed,
        given: rightOpText(task, bank, this.options.bank, paidOn),
      });
      emit({ ...given, outcome: 1 });
    }
    if (op === null) emit({ end: true, outcome: { memory: 0 }, info: { solved, marked } });
    else emit({ end: true, outcome: { memory: right ? 1 : 0 }, info: { op, solved, marked, right } });
  }

  /** The proposal as a task of the family, or why it is not one (propose-solve's checks). */
  private check(turn: Turn, ctx: ArenaContext): { task: Task } | { error: string } {
    if (!turn.action.valid || turn.action.value === null) return { error: turn.action.error ?? 'no proposal' };
    const parsed = this.family.parseProposal!(turn.action.value, this.limits);
    if ('error' in parsed) return parsed;
    if (!sumOperands(parsed.task.prompt)) return { error: `not a sum: ${parsed.task.prompt}` };
    if (ctx.isRecent?.(parsed.task.prompt)) return { error: `duplicate of a recent task: ${parsed.task.prompt}` };
    return parsed;
  }

  /**
   * The judge's own working, then its verdict on the answer, filed under the attempt's id,
   * `verdicts` times: the first verdict's mark, 'y', 'n' or '-' (invalid), and the working before it. Its own working is
   * paid when it is right working in any order (its truth is then itself, else the task's working).
   */
  private async judge(
    task: Task,
    id: string,
    answer: string,
    taught: boolean,
    ctx: ArenaContext,
    emit: (t: Turn) => void,
  ) {
    // only the first teaches the judge (its own working paid, its verdict taught as `taught` says): the others pay the
    // solver alone, so the judge learns as with one verdict (measured: with all four trained, two runs beside three
    // others were killed for memory at about 6 GB each). Paid greedily, the sampled verdicts are filed apart from the
    // attempt, so that only the greedy one pays it
    const greedy = this.options.pay === 'greedy';
    const sampledId = greedy ? `${id}/sampled` : id;
    const marks = await Promise.all(
      Array.from({ length: this.options.verdicts }, (_, k) =>
        this.verdict(task, sampledId, answer, k === 0, taught && k === 0, ctx, emit),
      ),
    );
    if (greedy) await this.verdict(task, id, answer, false, false, ctx, emit, 0);
    return marks[0];
  }

  /** One own working (paid when `paid`) and the verdict after it (judge), both at `temperature` when given: its mark and the working. */
  private async verdict(
    task: Task,
    id: string,
    answer: string,
    paid: boolean,
    taught: boolean,
    ctx: ArenaContext,
    emit: (t: Turn) => void,
    temperature?: number,
  ) {
    const at = temperature === undefined ? {} : { temperature };
    const own = await ctx.act('judge', { task, answers: [] }, { compare: OWN_SCOPE, ...at });
    const mine = own.text.trim();
    const filed = { id: `${id}/own`, family: task.family, prompt: task.prompt };
    emit({ ...own, task: paid ? { ...filed, answer: ownTruth(task, mine)! } : filed });
    const truth = this.family.verify(task, answer) ? 'y' : 'n';
    const verdict = await this.ask(task, id, mine, answer, taught ? truth : undefined, ctx, at);
    emit(verdict);
    return { mark: verdict.action.valid ? verdict.action.value! : '-', working: mine };
  }

  /** The judge's verdict on `answer` after `working`, filed under `id` with `truth` when it teaches. */
  private ask(
    task: Task,
    id: string,
    working: string,
    answer: string,
    truth: 'y' | 'n' | undefined,
    ctx: ArenaContext,
    at: { temperature?: number } = {},
  ): Promise<Turn> {
    const filed = { id, family: task.family, prompt: task.prompt, ...(truth ? { answer: truth } : {}) };
    return ctx.act('judge', { task, working, answers: [answer] }, { compare: 'episode', task: filed, ...at });
  }

  /**
   * With `judgePlant`, a slip of the answer (one digit changed) for each right attempt beyond
   * the wrong ones, so the judge is taught on as many wrong answers as right ones.
   */
  private slips(task: Task, verified: readonly (boolean | null)[]): { attempt: number; answer: string }[] {
    const kind = this.options.judgePlant;
    if (kind === 'none') return [];
    const surplus = verified.filter((v) => v === true).length - verified.filter((v) => v === false).length;
    return verified
      .flatMap((v, k) => (v ? [k] : []))
      .slice(0, Math.max(0, surplus))
      .flatMap((k) => {
        const answer = digitSlip(task.answer!, new Rng(hashText(`${task.id}/a${k}/slip`)), kind);
        return answer === undefined ? [] : [{ attempt: k, answer }];
      });
  }

  /** The critic's check, then its mark on each step: 'y' when it passes every step, 'n' when it rejects one, '-' otherwise. */
  private async critic(
    task: Task,
    id: string,
    operands: number[],
    working: string,
    agree: boolean[],
    taught: readonly boolean[],
    ctx: ArenaContext,
    emit: (t: Turn) => void,
  ) {
    const steps = operands.length - 1;
    const results = rightResults(operands, working)!;
    const check = await ctx.act(
      'critic',
      { task, working, steps, stage: 'check' },
      { compare: CHECK_SCOPE, task: { id: `${id}/check`, family: task.family, prompt: task.prompt, answer: results } },
    );
    emit(check);
    const seen = { task, working, steps, check: check.action.valid ? check.action.value! : '' };
    const marks = await Promise.all(
      agree.map((ok, k) =>
        ctx.act(
          'critic',
          { ...seen, step: k + 1 },
          {
            compare: `episode:step${k + 1}`,
            task: {
              id: `${id}/step${k + 1}`,
              family: task.family,
              prompt: task.prompt,
              ...(taught[k] ? { answer: ok ? 'y' : 'n' } : {}),
            },
          },
        ),
      ),
    );
    marks.forEach(emit);
    const first = firstRejected(marks.map((t) => (t.action.valid ? t.action.value : null)));
    return first === null ? '-' : first === '0' ? 'y' : 'n';
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    return fiveRolesMetrics(episodes, this.family);
  }
}

/**
 * Which items teach, given each one's truth (true, false, or null: not asked): the first of
 * the true and the first of the false, as many of each as the rarer has.
 */
export function balanced(truths: readonly (boolean | null)[]): boolean[] {
  const n = Math.min(truths.filter((t) => t === true).length, truths.filter((t) => t === false).length);
  const seen = { true: 0, false: 0 };
  return truths.map((t) => t !== null && seen[`${t}`]++ < n);
}

export { FiveRolesOptionsSchema, type FiveRolesOptions } from './options.js';
