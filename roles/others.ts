import type { Action } from '../src/core/types.js';
import { invalid, valid, type Observation, type Role } from './types.js';

/** Writes a new task for the solver: its output must look like a task prompt ending in '='. */
export class ProposerRole implements Role {
  readonly kind = 'proposer';
  render(o: Observation): string {
    return `new ${o.task.family}:`;
  }
  parse(output: string): Action {
    const text = output.trim();
    if (!/^[^=]+=$/.test(text)) return invalid(`a proposed task is text ending in one '=', got ${JSON.stringify(text)}`);
    return valid(text);
  }
}

/** Says whether an answer is right: sees the task and the answer, outputs 'y' or 'n'. */
export class CriticRole implements Role {
  readonly kind = 'critic';
  render(o: Observation): string {
    return `${o.task.prompt}${String(o.answer ?? '')}?`;
  }
  parse(output: string): Action {
    const text = output.trim();
    return text === 'y' || text === 'n' ? valid(text) : invalid(`a verdict is 'y' or 'n', got ${JSON.stringify(text)}`);
  }
}

/**
 * Judges answers to a task: of two (pairwise) it names the better, 'A' (the first shown) or
 * 'B'; of one (pointwise) it says whether it is right, 'y' or 'n'. Anything else is an
 * invalid action.
 */
export class JudgeRole implements Role {
  readonly kind = 'judge';
  render(o: Observation): string {
    const answers = (o.answers as string[] | undefined) ?? [];
    if (answers.length === 1) return `${o.task.prompt}${answers[0]}?`;
    // each answer after its own copy of the task, as the solver writes it: the model reads both
    // in the form it knows (measured: 'task A x B y' left a judge from the solver base at chance)
    const [a, b] = answers.length === 2 ? answers : ['', ''];
    return `${o.task.prompt}${a}|${o.task.prompt}${b}>`;
  }
  /** The verdict is the output's last character; what comes before it is the judge's own working (JudgeLRM reasons, then judges). */
  parse(output: string, o: Observation): Action {
    const text = output.trim();
    const verdict = text.slice(-1);
    if (((o.answers as string[] | undefined) ?? []).length === 1) return verdict === 'y' || verdict === 'n' ? valid(verdict) : invalid(`a verdict on one answer ends in 'y' or 'n', got ${JSON.stringify(text)}`);
    return verdict === 'A' || verdict === 'B' ? valid(verdict) : invalid(`a choice ends in 'A' or 'B', got ${JSON.stringify(text)}`);
  }
}

/**
 * Edits an external memory bank (Memory-R1's operations): `ADD text`, `UPDATE i text`,
 * `DELETE i` or `NOOP`, where i indexes the bank it was shown.
 */
export class MemoryManagerRole implements Role {
  readonly kind = 'memory';
  render(o: Observation): string {
    const bank = (o.memory as string[] | undefined) ?? [];
    return `${bank.map((m, i) => `${i}:${m}`).join(';')}|${String(o.fact ?? o.task.prompt)}>`;
  }
  parse(output: string, o: Observation): Action {
    const text = output.trim();
    const size = ((o.memory as string[] | undefined) ?? []).length;
    const m = /^(ADD|UPDATE|DELETE|NOOP)(?: (\d+))?(?: (.+))?$/.exec(text);
    if (!m) return invalid(`expected ADD|UPDATE|DELETE|NOOP, got ${JSON.stringify(text)}`);
    const [, op, index, body] = m;
    const needsIndex = op === 'UPDATE' || op === 'DELETE';
    if (needsIndex && (index === undefined || Number(index) >= size)) return invalid(`${op} needs an index below ${size}`);
    if ((op === 'ADD' || op === 'UPDATE') && !body) return invalid(`${op} needs text`);
    if (op === 'NOOP' && (index !== undefined || body)) return invalid('NOOP takes no arguments');
    return valid(text);
  }
}
