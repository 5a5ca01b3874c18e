import type { Action } from '../src/core/types.js';
import { invalid, valid, type Observation, type Role } from '../src/core/role.js';

/**
 * Plans the next step of a flow (AgentFlow's planner): shown the flow's memory, the query and
 * each step done so far (`memory`, e.g. `12+5+30` then `12+30=42`), it names the next sub-goal
 * for the executor, one addition of two numbers, `42+5`. Its prompt is the memory joined by
 * '|' and closed by '>'. It writes with the proposer's token: it proposes a task to another
 * module, so a base made for a proposer reads it.
 */
export class PlannerRole implements Role {
  readonly kind = 'planner';
  readonly token = 'proposer';
  readonly instructions = 'You are the planner. Reply with the next addition to compute, a+b, from the memory.';
  render(o: Observation): string {
    return `${((o.memory as string[] | undefined) ?? [o.task.prompt.replace(/=$/, '')]).join('|')}>`;
  }
  parse(output: string): Action {
    const text = output.trim();
    return /^\d{1,4}\+\d{1,4}$/.test(text)
      ? valid(text)
      : invalid(`a step is one addition of two numbers, a+b, got ${JSON.stringify(text)}`);
  }
}
