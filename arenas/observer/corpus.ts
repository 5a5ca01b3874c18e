/**
 * An observer base's corpus (the `observer:` section of a pretrain config): beside the solver
 * corpus, the observer role's prompt (the task among distractors, view.ts) with a hint and end
 * of sequence. With `labels: coin` the hint is a candidate drawn uniformly, the task or a
 * distractor: the base learns the format (copy one question) but not which one, so it picks
 * the marked one at chance and only the solver's success can teach it (as the judge corpus's
 * coin verdicts do). With `labels: right` the hint is always the marked task's prompt. With
 * `labels: first` it is the first candidate shown, the marked one a third of the time (with two
 * distractors): a clean copy, which coin labels do not give a small model (measured: it learns
 * their mixture digit by digit, docs/observer.md), anchored by something other than the mark.
 */
import { z } from 'zod';
import { ObserverRole } from '../../roles/observer.js';
import { rolePrompt } from '../../src/core/prompt.js';
import type { Task } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import { greedyTexts } from '../../src/models/greedy.js';
import type { LanguageModel } from '../../src/models/generate.js';
import type { PolicyInput } from '../../src/models/types.js';
import type { Tokenizer } from '../../src/tokenizer/types.js';
import type { Rng } from '../../src/util/rng.js';
import { copied, observerView, type View } from './view.js';

export const ObserverCorpusSchema = z.strictObject({
  /** observer examples, as a share of the solver examples (on as many of the training tasks) */
  share: z.number().gt(0).max(1),
  /** the hint taught: a candidate at random (the format only), the marked task's prompt, or the first candidate shown */
  labels: z.enum(['coin', 'right', 'first']).default('coin'),
  /** distractors shown beside each task: the arena's option of the same name */
  distractors: z.number().int().nonnegative().default(2),
  /**
   * keep the solver corpus beside the observer examples (one model that observes and solves),
   * or teach the observer alone (a separate observer model, which never solves: every step is
   * spent on copying)
   */
  solving: z.boolean().default(true),
  /**
   * the share of examples whose hint is the marked task whatever `labels` says: a base that
   * reads the mark that often (a prior for RL to sharpen; measured: from a base at chance, RL
   * never found the mark, docs/observer.md)
   */
  marked: z.number().min(0).max(1).default(0),
  /** labelled views and hints (`b:47+25=`): the arena's option of the same name */
  labelled: z.boolean().default(false),
});
export type ObserverCorpus = z.output<typeof ObserverCorpusSchema>;

/** The observer examples of `o` on the first `share` of `tasks`, their coin labels drawn from `rng`. */
export function observerExamples(
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
  difficulty: unknown,
  tasks: readonly Task[],
  o: ObserverCorpus,
  rng: Rng,
): PolicyInput[] {
  return tasks.slice(0, Math.round(o.share * tasks.length)).map((task) => {
    const view = observerView(task, family, difficulty, o.distractors, o.labelled);
    const k =
      o.labels === 'right' || (o.marked > 0 && rng.next() < o.marked)
        ? view.at
        : o.labels === 'first'
          ? 0
          : rng.int(view.candidates.length);
    const hint = `${o.labelled ? `${view.labels[k]}:` : ''}${view.candidates[k]}`;
    return { prompt: observerPrompt(tokenizer, task, view), completion: [...tokenizer.encode(hint), tokenizer.eos] };
  });
}

/** The observer's prompt on `task` shown as `view`, as a run renders it. */
function observerPrompt(tokenizer: Tokenizer, task: Task, view: View): number[] {
  const role = new ObserverRole();
  return rolePrompt(tokenizer, role, role.render({ task, view: view.text }));
}

/** A base's observer measured on held-out views: the share of greedy hints that copy a shown sum, and the marked one. */
export interface ObserverCopies {
  /** hints that are one of the candidates shown (about 1 once the format is learned, whatever the labels) */
  copies: number;
  /** hints that are the marked task's prompt (about 1/(distractors+1) with coin or first labels, 1 with right ones) */
  marked: number;
}

/**
 * The greedy hint of `model` on each task's view (the observer's prompt, as a run renders it),
 * read as the arena reads it (trimmed): the stopping measure of an observer base, whose coin or
 * first labels teach it to copy a candidate, not the asked one.
 */
export function observerCopies(
  model: LanguageModel,
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
  difficulty: unknown,
  tasks: readonly Task[],
  o: ObserverCorpus,
): ObserverCopies {
  if (tasks.length === 0) return { copies: 0, marked: 0 };
  const views = tasks.map((task) => observerView(task, family, difficulty, o.distractors, o.labelled));
  const label = o.labelled ? tokenizer.encode('a:').length : 0;
  const longest = label + Math.max(...views.flatMap((v) => v.candidates.map((c) => tokenizer.encode(c).length)));
  const prompts = tasks.map((task, i) => observerPrompt(tokenizer, task, views[i]));
  return copyShares(tasks, views, greedyTexts(model, tokenizer, prompts, longest + 1));
}

/**
 * The shares of `hints` (one per task, read trimmed as the observer role reads them) that copy a
 * candidate of its view (labelled: the one its letter names), and the task's own prompt.
 */
export function copyShares(tasks: readonly Task[], views: readonly View[], hints: readonly string[]): ObserverCopies {
  if (hints.length !== tasks.length || views.length !== tasks.length)
    throw new Error(`observer copies: ${hints.length} hints and ${views.length} views for ${tasks.length} tasks`);
  const picks = hints.map((h, i) => copied(h.trim(), views[i]));
  const share = (hit: (k: number, i: number) => boolean) =>
    picks.filter((k, i) => k !== undefined && hit(k, i)).length / tasks.length;
  return { copies: share(() => true), marked: share((k, i) => k === views[i].at) };
}
