import { defer, type Observable } from 'rxjs';
import type { Task, Turn } from './types.js';
import type { Arena, ArenaContext } from './arena.js';

/** One solver answers the task once; the group of G episodes gives G answers per task. */
export class SolveArena implements Arena {
  readonly kind = 'solve';
  readonly roles = { solver: 'solver' };
  play(task: Task, ctx: ArenaContext): Observable<Turn> {
    return defer(() => ctx.act('solver', { task }));
  }
}
