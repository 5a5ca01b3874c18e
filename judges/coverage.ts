import type { BatchRewards, Episode, Task } from '../src/core/types.js';
import { nullRewards, roleSet } from '../src/core/judge-common.js';
import { proposals } from './proposer-common.js';
import type { Judge, RoleOption } from '../src/core/judge.js';

export interface CoverageOptions {
  role?: RoleOption;
  solver?: RoleOption;
  name?: string;
}

/**
 * A coverage term for proposers: `1 - n_cell / B`, where B is the number of valid proposals
 * in the batch and n_cell those in this proposal's difficulty cell (the family's own measure),
 * so a proposer that piles onto one kind of task earns less for it. Invalid proposals and
 * other roles get null (the proposer's main judge prices invalidity).
 */
export class CoverageJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  private readonly solvers: ReadonlySet<string>;

  constructor(
    private readonly measure: (task: Task) => Record<string, number>,
    o: CoverageOptions = {},
  ) {
    this.name = o.name ?? 'coverage';
    if (typeof measure !== 'function') throw new Error(`judge '${this.name}': needs the task family's measure`);
    this.roles = roleSet(o.role ?? 'proposer', this.name);
    this.solvers = roleSet(o.solver ?? 'solver', this.name);
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    const cells = proposals(batch, this.roles).flatMap(({ e, t }) => {
      const task = batch[e].turns.find((x) => this.solvers.has(x.role) && x.task)?.task;
      return task ? [{ e, t, cell: JSON.stringify(this.measure(task)) }] : [];
    });
    const count = new Map<string, number>();
    for (const { cell } of cells) count.set(cell, (count.get(cell) ?? 0) + 1);
    for (const { e, t, cell } of cells) rewards[e][t] = 1 - count.get(cell)! / cells.length;
    return rewards;
  }
}
