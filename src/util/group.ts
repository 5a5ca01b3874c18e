/** Items grouped by key, groups in first-seen order (linear time, unlike copying arrays per item). */
export function groupBy<T, K>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const members = groups.get(k);
    if (members) members.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
