/**
 * A reward function as a judge, as TRL's `reward_funcs` take one: a module exports
 * `(prompts, completions, fields) => (number | null)[]` (or a Promise of it), and a config
 * names it with a weight beside the built-in judges:
 *
 *   judges:
 *     - kind: verifier
 *     - kind: function
 *       weight: 0.2
 *       options: { module: ./rewards.ts, export: brevity }
 *
 * Each batch, it gets one row per turn of its roles: the task's prompt, the turn's text, and
 * the task's fields (the dataset row's other columns, as TRL passes a dataset's columns)
 * with `answer` and `id`. A null reward abstains. A throw, a result of the wrong length or a
 * value neither a finite number nor null is an error naming the module, the function and
 * the row: a broken reward must never pass as a low one.
 */
import type { Episode, BatchRewards, Reward } from '../src/core/types.js';
import { taskOf } from '../src/core/groups.js';
import { nullRewards, roleSet } from '../src/core/judge-common.js';
import type { Judge, RoleOption } from '../src/core/judge.js';
import { importPlugin } from '../src/plugins/load.js';

/** A reward function: one reward (or null) per completion. */
export type RewardFunction = (
  prompts: string[],
  completions: string[],
  fields: Record<string, unknown>[],
) => Reward[] | Promise<Reward[]>;

/** Options for {@link FunctionJudge}. */
export interface FunctionOptions {
  /** the module: a path from the working directory, or a package */
  module: string;
  /** the export that is the function (default: the default export, else the module's only function) */
  export?: string;
  role?: RoleOption;
  /** judge name (default: the export's name) */
  name?: string;
}

/** The function `o.export` (or the default, or the only function) of `mod`; throws naming what is there. */
export function pickFunction(
  mod: Record<string, unknown>,
  o: Pick<FunctionOptions, 'module' | 'export'>,
): RewardFunction {
  const where = `reward module ${o.module}`;
  const functions = Object.entries(mod).filter(([, v]) => typeof v === 'function');
  let fn: unknown;
  if (o.export !== undefined) fn = mod[o.export];
  else if (typeof mod.default === 'function') fn = mod.default;
  else if (functions.length === 1) fn = functions[0][1];
  else
    throw new Error(
      `${where}: say which function with option 'export'; it exports ${functions.map(([k]) => k).join(', ') || 'no functions'}`,
    );
  if (typeof fn !== 'function')
    throw new Error(
      `${where}: ${o.export === undefined ? 'the default export' : `'${o.export}'`} is not a function; functions: ${functions.map(([k]) => k).join(', ') || 'none'}`,
    );
  return fn as RewardFunction;
}

export class FunctionJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  private fn?: RewardFunction;
  private readonly label: string;

  constructor(private readonly o: FunctionOptions) {
    this.name = o.name ?? o.export ?? 'function';
    this.roles = roleSet(o.role, this.name);
    this.label = `judge '${this.name}' (${o.module}${o.export ? `#${o.export}` : ''})`;
  }

  async ready(): Promise<void> {
    if (this.fn) return;
    let mod: Record<string, unknown>;
    try {
      mod = await importPlugin(this.o.module);
    } catch (e) {
      throw new Error(`${this.label}: cannot load: ${(e as Error).message.split('\n')[0]}`, { cause: e });
    }
    this.fn = pickFunction(mod, this.o);
  }

  async score(batch: readonly Episode[]): Promise<BatchRewards> {
    await this.ready();
    const rewards = nullRewards(batch);
    const at: { e: number; t: number }[] = [];
    const prompts: string[] = [];
    const completions: string[] = [];
    const fields: Record<string, unknown>[] = [];
    batch.forEach((ep, e) =>
      ep.turns.forEach((turn, t) => {
        if (!this.roles.has(turn.role)) return;
        const task = taskOf(ep, turn);
        at.push({ e, t });
        prompts.push(task.prompt);
        completions.push(turn.text);
        fields.push({ ...task.fields, id: task.id, ...(task.answer !== undefined ? { answer: task.answer } : {}) });
      }),
    );
    if (at.length === 0) return rewards;
    let out: unknown;
    try {
      out = await this.fn!(prompts, completions, fields);
    } catch (e) {
      throw new Error(`${this.label}: threw on a batch of ${at.length} rows: ${(e as Error)?.message ?? String(e)}`, {
        cause: e,
      });
    }
    if (!Array.isArray(out))
      throw new Error(`${this.label}: must return an array of ${at.length} rewards, got ${typeof out}`);
    if (out.length !== at.length)
      throw new Error(`${this.label}: returned ${out.length} rewards for ${at.length} rows`);
    out.forEach((r: unknown, i) => {
      if (r !== null && (typeof r !== 'number' || !Number.isFinite(r))) {
        const { e, t } = at[i];
        throw new Error(
          `${this.label}: row ${i} (episode ${batch[e].id}, turn ${t}): reward must be a finite number or null, got ${String(r)}`,
        );
      }
      rewards[at[i].e][at[i].t] = r as Reward;
    });
    return rewards;
  }
}
