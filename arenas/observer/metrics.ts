/** The observer arena's metrics, from its episodes' info (hint, accuracy, reference) and turns. */
import type { Episode } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';

/**
 * `observer/accuracy`: the solver's accuracy through the hints (an invalid hint counts as
 * wrong answers), the measure of the pair; `observer/reference`: its accuracy given the
 * baseline text; `observer/utility`: their difference, the observer's mean reward;
 * `observer/valid_rate` and `observer/length` of the hints; `observer/copies`: hints that are
 * the task's prompt; `observer/hint_right`, for a family that reads tasks: hints that read as
 * a task of the family whose answer is the task's (the observer's part, whatever the solver does);
 * `observer/pointed`, with a labelled view: valid hints whose letter names the asked task.
 */
export function observerMetrics(
  episodes: readonly Episode[],
  family: TaskFamily<unknown>,
  limits: unknown,
): Record<string, number> {
  const played = episodes.filter((e) => e.info && 'hint' in e.info);
  if (played.length === 0) return {};
  const hints = played.map((e) => e.info!.hint as string | null);
  const valid = hints.filter((h): h is string => h !== null);
  const m: Record<string, number> = {
    'observer/accuracy': mean(played.map((e) => e.info!.accuracy as number)),
    'observer/reference': mean(played.map((e) => e.info!.reference as number)),
    'observer/valid_rate': valid.length / played.length,
    'observer/copies': mean(played.map((e, i) => (hints[i] === e.task.prompt ? 1 : 0))),
  };
  m['observer/utility'] = m['observer/accuracy'] - m['observer/reference'];
  if (valid.length) m['observer/length'] = mean(valid.map((h) => h.length));
  const pointed = played.filter((e) => 'pointed' in e.info!);
  if (pointed.length) m['observer/pointed'] = mean(pointed.map((e) => (e.info!.pointed ? 1 : 0)));
  if (family.parseProposal)
    m['observer/hint_right'] = mean(
      played.map((e, i) => {
        const read = hints[i] === null ? undefined : family.parseProposal!(hints[i]!, limits);
        return read && 'task' in read && read.task.answer === e.task.answer ? 1 : 0;
      }),
    );
  return m;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
