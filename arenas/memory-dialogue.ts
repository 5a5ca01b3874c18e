import type { Observable } from 'rxjs';
import { fromRun } from '../src/core/operators/from-run.js';
import type { Episode, Task, Turn } from '../src/core/types.js';
import { answerFrom, factsAfter, readDialogue, readFact } from '../src/tasks/dialogue.js';
import type { TaskFamily } from '../src/core/task-family.js';
import { hashText } from '../src/util/hash.js';
import { Rng } from '../src/util/rng.js';
import { MemoryBank, MemoryOpError } from '../memory/bank.js';
import { memoryOp } from '../roles/memory.js';
import { invalid, type Observation } from '../src/core/role.js';
import { z } from 'zod';
import { arenaOptions, positiveInt, rerolloutCount } from './options.js';
import type { Arena, ArenaContext, EpisodeEnd } from '../src/core/arena.js';
import { memoryMetrics } from './memory-metrics.js';
import { ruleContext } from './memory-rules.js';

export const MANAGERS = ['model', 'always-add', 'keep-last', 'none', 'rule'] as const;

export const MemoryDialogueOptionsSchema = z.strictObject({
  // who edits the bank: the `memory` role's model, or a baseline (ADD every turn until full; ADD and drop the oldest
  // when full; nothing), or the rule manager (it reads each turn's slot: a ceiling, not a heuristic a model could be)
  manager: z.enum(MANAGERS).default('model'),
  maxEntries: positiveInt().default(8), // most entries the bank holds: an ADD beyond it is invalid
  maxEntryChars: positiveInt().default(16), // longest entry text: a longer one is invalid (a dialogue turn is at most 13 characters), so every prompt fits the model
  retrieve: positiveInt().default(3), // entries retrieved (BM25) for the manager and the answer agent
  rerollouts: rerolloutCount(), // 0: each manager turn earns its episode's QA accuracy; G >= 2: Memory-R2's local re-rollouts, G operations from one state, each scored on its own fork
  probes: z.number().int().nonnegative().default(1), // re-rollouts: probe questions on each fork besides the turn's own fact
  invalid: z.number().default(-1), // the outcome of an invalid operation (malformed, or refused by the bank)
});
export type MemoryDialogueOptions = z.output<typeof MemoryDialogueOptionsSchema>;

/**
 * A memory manager and an answer agent over a dialogue (Memory-R1): the manager sees each
 * turn with the entries it retrieves and emits one operation on the bank; after the last
 * session the answer agent answers each question from the entries retrieved for it. The
 * answers' accuracy is the outcome of both roles (`outcome` judge); each answer's truth is
 * its turn's task answer (`verdict` judge, role answer).
 *
 * With `rerollouts: G`, each manager step samples G operations from the same bank state,
 * applies each to a fork, and scores each by the answer agent's accuracy on probe questions
 * asked of its fork at once (the turn's own fact and `probes` facts mentioned so far): the
 * G operations form one comparison group, a fair comparison from one state (Memory-R2's
 * point: once rollouts edit memory differently, they no longer share a state). The
 * dialogue goes on from the first operation's fork, a sample of the policy.
 */
export class MemoryDialogueArena implements Arena {
  readonly kind = 'memory-dialogue';
  readonly roles: Record<string, string>;
  readonly options: MemoryDialogueOptions;

  constructor(options: unknown, family: TaskFamily<unknown>) {
    this.options = arenaOptions(MemoryDialogueOptionsSchema, options);
    if (family.name !== 'dialogue')
      throw new Error(
        `arena 'memory-dialogue' does not serve task family '${family.name}': it needs dialogues (family 'dialogue')`,
      );
    this.roles = this.options.manager === 'model' ? { memory: 'memory', answer: 'answer' } : { answer: 'answer' };
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    const dialogue = readDialogue(task);
    let clock = 0;
    let bank = new MemoryBank(
      undefined,
      { maxEntries: this.options.maxEntries, maxEntryChars: this.options.maxEntryChars },
      () => clock,
    );
    const said: string[] = [];
    const rng = new Rng(hashText(task.id));
    for (const text of dialogue.sessions.flat()) {
      clock += 1;
      said.push(text);
      if (this.options.manager === 'rule') await this.manage(bank, text, task, ruleContext, 'group');
      else if (this.options.manager !== 'model') this.baseline(bank, text);
      else if (this.options.rerollouts) bank = await this.reroll(bank, text, said, rng, task, ctx, emit);
      else emit(await this.manage(bank, text, task, ctx, 'group'));
    }
    const answers = await Promise.all(
      dialogue.questions.map((q, i) => this.ask(bank, q.text, q.answer, `${task.id}/q${i}`, task, ctx)),
    );
    answers.forEach(emit);
    const accuracy = answers.filter((t, i) => t.action.value === dialogue.questions[i].answer).length / answers.length;
    emit({
      end: true,
      outcome: { ...(this.options.manager === 'model' ? { memory: accuracy } : {}), answer: accuracy },
      info: { bank_size: bank.size, bank: bank.entries.map((e) => e.text) },
    });
  }

  /** One manager turn on `bank`: its operation applied, or the turn made invalid (with the invalid outcome) when malformed or refused. */
  private async manage(
    bank: MemoryBank,
    text: string,
    task: Task,
    ctx: ArenaContext,
    compare: Turn['compare'],
  ): Promise<Turn> {
    const { ids, observation } = this.observe(bank, text, task);
    return this.apply(bank, await ctx.act('memory', observation, { compare }), ids);
  }

  /** What the manager is shown of a turn: the entries retrieved for it (their ids, to map positions back) and whether the bank is full. */
  private observe(bank: MemoryBank, text: string, task: Task): { ids: string[]; observation: Observation } {
    const shown = bank.retrieve(text, this.options.retrieve);
    return {
      ids: shown.map((e) => e.id),
      observation: { task, memory: shown.map((e) => e.text), fact: text, full: bank.size >= this.options.maxEntries },
    };
  }

  private apply(bank: MemoryBank, turn: Turn, ids: string[]): Turn {
    if (turn.action.valid) {
      try {
        bank.apply(memoryOp(turn.action.value!, ids));
      } catch (e) {
        if (!(e instanceof MemoryOpError)) throw e;
        turn.action = invalid(e.message);
      }
    }
    if (!turn.action.valid) turn.outcome = this.options.invalid;
    return turn;
  }

  /** Memory-R2's local re-rollouts: G operations from one state, each on its own fork, each scored by probes of its fork; returns the first fork. */
  private async reroll(
    bank: MemoryBank,
    text: string,
    said: string[],
    rng: Rng,
    task: Task,
    ctx: ArenaContext,
    emit: (x: Turn) => void,
  ): Promise<MemoryBank> {
    const step = said.length;
    const { ids, observation } = this.observe(bank, text, task);
    const forks = Array.from({ length: this.options.rerollouts }, () => bank.fork());
    const alternatives = await Promise.all(
      forks.map(() => ctx.act('memory', observation, { compare: `episode:s${step}` })),
    );
    alternatives.forEach((t, k) => this.apply(forks[k], t, ids));
    const mentioned = [...new Set(said.map((t) => readFact(t)?.slot).filter((s): s is string => s !== undefined))];
    const own = readFact(text)?.slot;
    const slots = [
      ...(own ? [own] : []),
      ...Array.from(
        { length: Math.min(this.options.probes, mentioned.length) },
        () => mentioned[rng.int(mentioned.length)],
      ),
    ];
    const facts = factsAfter(said);
    // every fork's probes in one round, so they share the forward passes
    const probes = await Promise.all(
      forks.map((fork) =>
        Promise.all(
          slots.map((s, i) =>
            this.ask(fork, `${s}?`, answerFrom(facts, `${s}?`), `${task.id}/s${step}/p${i}`, task, ctx),
          ),
        ),
      ),
    );
    for (const [k, turn] of alternatives.entries()) {
      if (turn.action.valid && slots.length)
        turn.outcome = probes[k].filter((p) => p.action.value === p.task!.answer).length / slots.length;
      emit(turn);
      probes[k].forEach(emit);
    }
    return forks[0];
  }

  /** The answer agent on one question, from the entries retrieved for it; its turn's task carries the truth. */
  private ask(
    bank: MemoryBank,
    question: string,
    truth: string,
    id: string,
    task: Task,
    ctx: ArenaContext,
  ): Promise<Turn> {
    const shown = bank.retrieve(question, this.options.retrieve);
    const asked: Task = { id, family: task.family, prompt: question, answer: truth };
    return ctx.act('answer', { task, memory: shown.map((e) => e.text), question }, { task: asked, compare: 'group' });
  }

  /** The heuristic managers: ADD every turn while there is room; ADD and drop the oldest entry when full; nothing. */
  private baseline(bank: MemoryBank, text: string): void {
    const { manager, maxEntries } = this.options;
    if (manager === 'none') return;
    if (bank.size >= maxEntries) {
      if (manager === 'always-add') return;
      bank.apply({ op: 'DELETE', id: bank.entries[0].id });
    }
    bank.apply({ op: 'ADD', text });
  }

  /** The longest each role can be shown: `retrieve` entries of the longest text allowed, beside each turn (the manager) or question (the answer agent). */
  observations(task: Task): Array<{ role: string; observation: Observation }> {
    const d = readDialogue(task);
    const turns = d.sessions.flat();
    const memory = Array.from({ length: this.options.retrieve }, () => 'x'.repeat(this.options.maxEntryChars));
    return [
      ...(this.roles.memory ? turns.map((fact) => ({ role: 'memory', observation: { task, memory, fact } })) : []),
      ...d.questions.map((q) => ({ role: 'answer', observation: { task, memory, question: q.text } })),
    ];
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    return memoryMetrics(episodes);
  }
}
