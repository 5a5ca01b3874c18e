import type { Action } from '../src/core/types.js';
import { invalid, valid, type Observation, type Role } from '../src/core/role.js';

/**
 * Plans the next step of a flow (AgentFlow's planner): shown the flow's memory, a numbered list
 * of entries (the query's numbers, then each step done, `0:12|1:5|2:30|3:0+2=42`), it picks the
 * executor's arguments by reference: two entry indices to add, `3+1`. Its prompt is the entries,
 * each `index:entry`, joined by '|' and closed by '>'. It writes with the proposer's token: it
 * proposes a task to another module, so a base made for a proposer reads it.
 */
export class PlannerRole implements Role {
  readonly kind = 'planner';
  readonly token = 'proposer';
  readonly instructions = 'You are the planner. Reply with the two memory entries to add next, i+j, by their numbers.';
  render(o: Observation): string {
    const memory = (o.memory as string[] | undefined) ?? o.task.prompt.replace(/=$/, '').split('+');
    return `${memory.map((entry, i) => `${i}:${entry}`).join('|')}>`;
  }
  parse(output: string): Action {
    const text = output.trim();
    return /^\d{1,2}\+\d{1,2}$/.test(text)
      ? valid(text)
      : invalid(`a step is two memory entries to add, i+j, got ${JSON.stringify(text)}`);
  }
}
