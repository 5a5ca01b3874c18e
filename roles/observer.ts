import type { Action } from '../src/core/types.js';
import { invalid, valid, type Observation, type Role } from '../src/core/role.js';

/**
 * The observer of PRCO: shown the full task (`observation.view`, the question among
 * distractors, see arenas/observer/view.ts) it writes a hint of at most `observation.budget`
 * characters, which is all the solver will see. It writes the solver's next prompt, as a
 * proposer writes a task for the solver, so it starts its prompts with the proposer's token:
 * the character bases' tokenizers have no observer token.
 */
export class ObserverRole implements Role {
  readonly kind = 'observer';
  readonly token = 'proposer';
  readonly instructions =
    'You are the observer. Write the shortest hint from which the solver can answer the marked task.';
  render(o: Observation): string {
    return `${typeof o.view === 'string' ? o.view : o.task.prompt}>`;
  }
  /** The hint (and its label) and the end of sequence: a hint cut off at the budget never parses. */
  maxNewTokens(o: Observation): number | undefined {
    return typeof o.budget === 'number' ? o.budget + 1 + (labelsOf(o) ? 2 : 0) : undefined;
  }
  /** With `observation.labels` (a labelled view's letters) a hint opens with one of them and ':'; the budget counts what follows. */
  parse(output: string, o: Observation): Action {
    const text = output.trim();
    const labels = labelsOf(o);
    if (labels && !(text.length >= 2 && labels.includes(text[0]) && text[1] === ':'))
      return invalid(
        `a hint opens with a candidate's letter (${[...labels].join(', ')}) and ':', got ${JSON.stringify(text)}`,
      );
    const body = labels ? text.slice(2) : text;
    if (body === '') return invalid('an empty hint');
    const budget = typeof o.budget === 'number' ? o.budget : Infinity;
    if (body.length > budget) return invalid(`a hint of ${body.length} characters; the budget is ${budget}`);
    return valid(text);
  }
}

const labelsOf = (o: Observation) => (typeof o.labels === 'string' ? o.labels : '');
