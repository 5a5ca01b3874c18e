import type { Observable } from 'rxjs';
import { fromRun } from '../../src/core/operators/from-run.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import type { Arena, ArenaContext, EpisodeEnd } from '../../src/core/arena.js';
import { arenaOptions } from '../options.js';
import { ObserverArenaOptionsSchema, type ObserverArenaOptions } from './options.js';
import { observerView, shownText, type View } from './view.js';
import { observerMetrics } from './metrics.js';

/**
 * Observer and solver (PRCO): the observer sees the full task (its prompt among
 * `distractors` other tasks of the family, the task marked: view.ts) and writes a hint of at
 * most `budget` characters; the solver sees the hint alone, never the task, and answers it
 * `attempts` times. The solver's answers are checked against the task's answer (the
 * `verifier` judge pays them; each answer is filed on a task whose prompt is the hint).
 *
 * The observer's utility, its episode outcome (the `outcome` judge pays it):
 *
 *   u = (1/K) Σ_k 1[solver answer k to the hint is right] − (1/K) Σ_k 1[solver answer k to the baseline text is right]
 *
 * with K = `attempts`; an invalid hint (empty, over the budget, cut off) is never shown to the
 * solver and counts as K wrong answers. The baseline text is the view cut to `budget`
 * characters (`baseline: cut`: what a summary without an observer gives the solver) or none
 * (`baseline: none`: its accuracy is taken as 0). The baseline's answers are measured, not
 * trained on (they would teach the solver to answer cut text). Within a group of hints on one
 * task the baseline text is the same and its term varies only by the solver's sampling in
 * each episode, so a group-normalised advantage (GRPO) sees mostly the first term; it sets
 * the utility's sign, and what a non-group estimator learns from. With `labelled` the view
 * names each candidate by a letter and the solver is shown the hint after its letter.
 *
 * Comparison groups: the observer's hints of the G episodes on one task; the solver's answers to one hint.
 */
export class ObserverArena implements Arena {
  readonly kind = 'observer';
  readonly roles = { observer: 'observer', solver: 'solver' };
  readonly progress = ['observer/accuracy'];
  readonly options: ObserverArenaOptions;
  private readonly difficulty: unknown;

  constructor(
    options: unknown,
    private readonly family: TaskFamily<unknown>,
  ) {
    this.options = arenaOptions(ObserverArenaOptionsSchema, options);
    this.difficulty = family.validate(this.options.difficulty, 'arena.options.difficulty');
  }

  /** The observer's view, its longest; the solver is shown at most `budget` characters. */
  observations(task: Task) {
    return [{ role: 'observer', observation: this.observation(task, this.view(task)) }];
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    if (task.answer === undefined)
      throw new Error(`arena 'observer': task ${task.id} has no answer; the solver's success needs one`);
    const { budget, attempts, baseline } = this.options;
    const view = this.view(task);
    const observer = await ctx.act('observer', this.observation(task, view), { compare: 'group' });
    emit(observer);
    const hint = observer.action.valid ? shownText(observer.action.value!, view.labels) : null;
    // the solver is shown a task whose prompt is the text and nothing else; the answer is filed for the verifier only
    const answers = (text: string, tag: string) =>
      Promise.all(
        Array.from({ length: attempts }, () =>
          ctx.act(
            'solver',
            { task: { id: `${task.id}/${tag}`, family: task.family, prompt: text } },
            {
              compare: 'episode',
              task: { id: `${task.id}/${tag}`, family: task.family, prompt: text, answer: task.answer },
            },
          ),
        ),
      );
    const [given, base] = await Promise.all([
      hint === null ? Promise.resolve([]) : answers(hint, 'hint'),
      baseline === 'cut' ? answers(view.plain.slice(0, budget), 'cut') : Promise.resolve([]),
    ]);
    given.forEach(emit);
    const right = (t: Turn) => (t.action.valid && this.family.verify(t.task!, t.text) ? 1 : 0);
    const share = (ts: Turn[]) => ts.reduce((s, t) => s + right(t), 0) / attempts;
    const accuracy = share(given);
    const reference = share(base);
    // labelled: whether the hint's letter names the asked task, the observer's choice apart from its copying
    const pointed = view.labels && hint !== null ? { pointed: observer.action.value![0] === view.labels[view.at] } : {};
    emit({ end: true, outcome: { observer: accuracy - reference }, info: { hint, accuracy, reference, ...pointed } });
  }

  private view(task: Task): View {
    return observerView(task, this.family, this.difficulty, this.options.distractors, this.options.labelled);
  }

  /** What the observer is shown: the view (labelled or not), the budget, a labelled view's letters. */
  private observation(task: Task, view: View) {
    return { task, view: view.text, budget: this.options.budget, ...(view.labels && { labels: view.labels }) };
  }

  /** The observer's hints and the solver's success through them (observer/*). */
  metrics(episodes: readonly Episode[]): Record<string, number> {
    return observerMetrics(episodes, this.family, this.difficulty);
  }
}

export { ObserverArenaOptionsSchema, type ObserverArenaOptions } from './options.js';
