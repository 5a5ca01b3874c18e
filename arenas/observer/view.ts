/** What the observer of the observer arena sees: the task among distractors, the task marked. */
import type { Task } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import { hashText } from '../../src/util/hash.js';
import { Rng } from '../../src/util/rng.js';

/** The mark after the task's prompt among the candidates. */
export const MARK = '*';

/** The letters that name a labelled view's candidates, in the order shown (`a:83+19=,b:47+25=*`). */
export const LABELS = 'abcdefghi';

export interface View {
  /** the candidates' prompts joined by ',', the task's followed by MARK: `83+19=,47+25=*,61+30=`; labelled, each after its letter: `a:83+19=,b:47+25=*,c:61+30=` */
  text: string;
  /** the same without labels (what the cut baseline cuts) */
  plain: string;
  /** the letters naming the candidates when labelled ('abc'), else '' */
  labels: string;
  /** the candidates' prompts in the order shown */
  candidates: string[];
  /** the task's position among them */
  at: number;
}

/**
 * The task's prompt among `distractors` other prompts of the family at `difficulty`, drawn
 * (with their order) from the task id, so a task is shown the same way in every run and in
 * the pretraining corpus. A distractor never repeats the task's prompt or another's.
 */
export function observerView(
  task: Task,
  family: TaskFamily<unknown>,
  difficulty: unknown,
  distractors: number,
  labelled = false,
): View {
  const rng = new Rng(hashText(`view:${task.id}`));
  const prompts = [task.prompt];
  for (let i = 0, tries = 0; i < distractors; tries++) {
    if (tries > 100 * (distractors + 1))
      throw new Error(
        `observer view: cannot draw ${distractors} distinct distractors for ${JSON.stringify(task.prompt)}`,
      );
    const p = family.generate(rng, difficulty, i).prompt;
    if (!prompts.includes(p)) (prompts.push(p), i++);
  }
  const at = rng.int(prompts.length);
  const candidates = prompts.slice(1);
  candidates.splice(at, 0, task.prompt);
  const marked = candidates.map((p, i) => (i === at ? `${p}${MARK}` : p));
  const labels = labelled ? LABELS.slice(0, candidates.length) : '';
  const text = labelled ? marked.map((p, i) => `${labels[i]}:${p}`).join(',') : marked.join(',');
  return { text, plain: marked.join(','), labels, candidates, at };
}

/**
 * What the solver is shown of a hint: with a labelled view, the text after the hint's leading
 * label (`b:47+25=` shows `47+25=`; the observer role refuses a hint without one), else the hint.
 */
export function shownText(hint: string, labels: string): string {
  return labels ? hint.slice(2) : hint;
}

/** Whether `hint` copies a candidate of `view` exactly (labelled: the candidate its label names), and which one. */
export function copied(hint: string, view: View): number | undefined {
  if (!view.labels) {
    const k = view.candidates.indexOf(hint);
    return k < 0 ? undefined : k;
  }
  const k = view.labels.indexOf(hint[0]);
  return k >= 0 && hint[1] === ':' && hint.slice(2) === view.candidates[k] ? k : undefined;
}
