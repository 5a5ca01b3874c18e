/** What the observer of the observer arena sees: the task among distractors, the task marked. */
import type { Task } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import { hashText } from '../../src/util/hash.js';
import { Rng } from '../../src/util/rng.js';

/** The mark after the task's prompt among the candidates. */
export const MARK = '*';

export interface View {
  /** the candidates' prompts joined by ',', the task's followed by MARK: `83+19=,47+25=*,61+30=` */
  text: string;
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
export function observerView(task: Task, family: TaskFamily<unknown>, difficulty: unknown, distractors: number): View {
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
  return { text: candidates.map((p, i) => (i === at ? `${p}${MARK}` : p)).join(','), candidates, at };
}
