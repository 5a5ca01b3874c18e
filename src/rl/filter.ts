/**
 * DAPO dynamic sampling: drop groups whose rewards carry no learning signal.
 * With group-relative advantages, a group whose rewards are all equal gets
 * zero advantage everywhere, so it only dilutes the batch.
 */
import type { GroupId } from './advantages.js';

/** Options for {@link keepGroupsWithVariance}. */
export interface KeepGroupsOptions {
  /**
   * Keep groups of one sample. Default false: a single reward has no spread,
   * so it is dropped. verl's DAPO recipe (`kept_prompt_uids`: `std > 0 or
   * len == 1`) keeps them; pass true to match verl.
   */
  keepSingletons?: boolean;
}

/**
 * Indices (ascending, i.e. original order) of the samples whose group's
 * rewards are not all equal — the filter of DAPO's dynamic sampling (verl
 * `recipe/dapo` trainer, `filter_groups`).
 *
 * verl tests `np.std(group) > 0`; here the test is exact inequality of the
 * rewards, which is the same for finite values but immune to round-off
 * (np.std of three copies of 0.1 can come out as ~1e-17 and pass). Groups of
 * one are dropped unless `keepSingletons` (see {@link KeepGroupsOptions}).
 * A group containing NaN counts as varied (NaN !== NaN), so it is kept and
 * the problem surfaces downstream instead of being silently discarded.
 */
export function keepGroupsWithVariance(
  groupIds: readonly GroupId[],
  rewards: readonly number[],
  { keepSingletons = false }: KeepGroupsOptions = {},
): number[] {
  if (groupIds.length !== rewards.length) {
    throw new Error(`keepGroupsWithVariance: ${groupIds.length} ids for ${rewards.length} rewards`);
  }
  const first = new Map<GroupId, number>();
  const size = new Map<GroupId, number>();
  const varied = new Set<GroupId>();
  groupIds.forEach((id, i) => {
    size.set(id, (size.get(id) ?? 0) + 1);
    const r0 = first.get(id);
    if (r0 === undefined) first.set(id, rewards[i]);
    else if (rewards[i] !== r0) varied.add(id);
  });
  const keep = (id: GroupId) => varied.has(id) || (keepSingletons && size.get(id) === 1);
  return groupIds.flatMap((id, i) => (keep(id) ? [i] : []));
}
