import type { Action } from './types.js';
import type { AnswerParser, Observation, Role } from './role.js';

/** Answers a task: sees the task's prompt, and its output is parsed by the task family. */
export class SolverRole implements Role {
  readonly kind = 'solver';
  readonly instructions = 'You are the solver. Reply with the answer only.';
  readonly answersTasks = true;
  constructor(private readonly parseAnswer: AnswerParser) {}
  render(o: Observation): string {
    return o.task.prompt;
  }
  parse(output: string): Action {
    return this.parseAnswer(output);
  }
}
