/**
 * An observer base's corpus (the `observer:` section of a pretrain config): beside the solver
 * corpus, the observer role's prompt (the task among distractors, view.ts) with a hint and end
 * of sequence. With `labels: coin` the hint is a candidate drawn uniformly, the task or a
 * distractor: the base learns the format (copy one question) but not which one, so it picks
 * the marked one at chance and only the solver's success can teach it (as the judge corpus's
 * coin verdicts do). With `labels: right` the hint is always the marked task's prompt.
 */
import { z } from 'zod';
import { ObserverRole } from '../../roles/observer.js';
import { rolePrompt } from '../../src/core/prompt.js';
import type { Task } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import type { PolicyInput } from '../../src/models/types.js';
import type { Tokenizer } from '../../src/tokenizer/types.js';
import type { Rng } from '../../src/util/rng.js';
import { observerView } from './view.js';

export const ObserverCorpusSchema = z.strictObject({
  /** observer examples, as a share of the solver examples (on as many of the training tasks) */
  share: z.number().gt(0).max(1),
  /** the hint taught: a candidate at random (the format only), or the marked task's prompt */
  labels: z.enum(['coin', 'right']).default('coin'),
  /** distractors shown beside each task: the arena's option of the same name */
  distractors: z.number().int().nonnegative().default(2),
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
  const role = new ObserverRole();
  return tasks.slice(0, Math.round(o.share * tasks.length)).map((task) => {
    const view = observerView(task, family, difficulty, o.distractors);
    const hint = o.labels === 'right' ? task.prompt : view.candidates[rng.int(view.candidates.length)];
    return {
      prompt: rolePrompt(tokenizer, role, role.render({ task, view: view.text })),
      completion: [...tokenizer.encode(hint), tokenizer.eos],
    };
  });
}
