import type { Action } from '../src/core/types.js';
import type { MemoryOp } from '../src/core/memory-op.js';
import { invalid, valid, type Observation, type Role } from '../src/core/role.js';

/** The entries a role was shown, as `0:text;1:text`: a position is how it names one. */
function shownEntries(o: Observation): string {
  return ((o.memory as string[] | undefined) ?? []).map((m, i) => `${i}:${m}`).join(';');
}

/**
 * Edits an external memory bank (Memory-R1's operations): `ADD text`, `UPDATE i text`,
 * `DELETE i` or `NOOP`, where i is the position of an entry it was shown (`memory`, the
 * retrieved entries) and the new dialogue turn is `fact`. When the arena says the bank is
 * `full`, an ADD is invalid: the manager must make room or let the turn go.
 */
export class MemoryManagerRole implements Role {
  readonly kind = 'memory';
  readonly instructions = 'You are the memory manager. Reply ADD text, UPDATE i text, DELETE i, or NOOP.';
  render(o: Observation): string {
    return `${shownEntries(o)}|${String(o.fact ?? o.task.prompt)}>`;
  }
  parse(output: string, o: Observation): Action {
    const text = output.trim();
    const size = ((o.memory as string[] | undefined) ?? []).length;
    const m = /^(ADD|UPDATE|DELETE|NOOP)(?: (\d+))?(?: (.+))?$/.exec(text);
    if (!m) return invalid(`expected ADD|UPDATE|DELETE|NOOP, got ${JSON.stringify(text)}`);
    const [, op, index, body] = m;
    const needsIndex = op === 'UPDATE' || op === 'DELETE';
    if (needsIndex && (index === undefined || Number(index) >= size))
      return invalid(`${op} needs an index below ${size}`);
    if (!needsIndex && index !== undefined && op !== 'ADD') return invalid(`${op} takes no index`);
    if ((op === 'ADD' || op === 'UPDATE') && !body) return invalid(`${op} needs text`);
    if (op === 'DELETE' && body) return invalid('DELETE takes only an index');
    if (op === 'NOOP' && (index !== undefined || body)) return invalid('NOOP takes no arguments');
    if (op === 'ADD' && o.full === true) return invalid('ADD on a full bank: UPDATE or DELETE an entry, or NOOP');
    return valid(text);
  }
}

/** The bank operation a valid manager action names, its positions mapped to the ids of the entries shown. */
export function memoryOp(action: string, shownIds: readonly string[]): MemoryOp {
  const m = /^(ADD|UPDATE|DELETE|NOOP)(?: (\d+))?(?: (.+))?$/.exec(action.trim());
  if (!m) throw new Error(`memoryOp: not a manager action: ${JSON.stringify(action)}`);
  const [, op, index, body] = m;
  // 'ADD 3 cats': a number right after ADD is part of the text
  if (op === 'ADD') return { op, text: index === undefined ? body : `${index}${body ? ` ${body}` : ''}` };
  if (op === 'NOOP') return { op };
  const id = shownIds[Number(index)];
  if (id === undefined)
    throw new Error(`memoryOp: position ${index} is not among the ${shownIds.length} entries shown`);
  return op === 'UPDATE' ? { op, id, text: body } : { op: 'DELETE', id };
}

/**
 * Answers a question from retrieved memory (Memory-R1's answer agent): it sees the entries
 * (`memory`) and the `question`, selects the entry it answers from, and answers: `i:answer`,
 * or `-:answer` when it uses none (say `-:unknown`). The action's value is the answer alone.
 * It writes with the solver's token: answering is what a solver does.
 */
export class AnswerRole implements Role {
  readonly kind = 'answer';
  readonly instructions = 'You answer from the memory entries. Reply i:answer, or -:answer when none helps.';
  readonly token = 'solver';
  render(o: Observation): string {
    return `${shownEntries(o)}|${String(o.question ?? o.task.prompt)}>`;
  }
  parse(output: string, o: Observation): Action {
    const text = output.trim();
    const m = /^(\d+|-):([a-z]+)$/.exec(text);
    if (!m) return invalid(`expected 'i:answer' or '-:answer', got ${JSON.stringify(text)}`);
    const size = ((o.memory as string[] | undefined) ?? []).length;
    if (m[1] !== '-' && Number(m[1]) >= size) return invalid(`selected entry ${m[1]}, but ${size} were shown`);
    return valid(m[2]);
  }
}
