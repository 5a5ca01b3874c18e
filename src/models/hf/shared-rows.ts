/**
 * Tied-embedding rows that a corpus never uses, trained as one row. A 2-layer Qwen3 of width 128
 * spends about 98% of a training step's products on its 151,669-row head, though a corpus of sums
 * or word problems uses a few hundred of those tokens. When every row the corpus does not use
 * holds the same vector r, the N rows' logits are all h·r, so the full softmax equals one over
 * the used rows plus a single row r whose logit is h·r + log N:
 *   log p(u) = h·e_u - logsumexp(h·e_used, h·r + log N)   (exactly, for every used u),
 * and the gradient of r is the sum of the N rows' gradients. Training that compact head is then
 * training the full model under the constraint "the unused rows stay equal" (Adam scales each
 * parameter's step by its own gradient's size, so the N rows, moved together, take the same
 * steps they would untied). The model stays an ordinary checkpoint: the shared row is copied to
 * every unused row before anything else reads the table (generation, saving). A frozen base
 * made this way (LoRA, generation, serving) computes its head on the same compact rows: its
 * full logits are the compact ones with each sharing id reading the shared row's column.
 */

/** Which rows of a [V, d] table are their own and which share one, as the compact head reads them. */
export interface SharedRows {
  /** the compact head's rows: every id with a row of its own (ascending), then the shared row's id */
  ids: Int32Array;
  /** the ids that hold the shared row (its own id included): the other ids' rows are copies of it */
  sharing: Int32Array;
  /** full id -> its compact row; the sharing ids all map to the last row */
  index: Int32Array;
}

/**
 * The shared rows of `table` ([V, d], row-major) for a corpus using the ids `used`. The table's
 * own shared rows (the largest set of equal rows, two or more: a base made this way) are kept
 * shared, less any the corpus now uses. A table with no equal rows is a fresh initialisation
 * when `fresh`: every unused row is then set, in place, to the first unused one's; otherwise it
 * is refused (a trained table's distinct rows may be tokens an earlier stage taught).
 */
export function shareRows(
  table: Float32Array,
  V: number,
  d: number,
  used: ReadonlySet<number>,
  fresh: boolean,
  where = 'embedding',
): SharedRows {
  for (const id of used)
    if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new Error(`${where}: token ${id} is outside [0, ${V})`);
  let sharing = equalRows(table, V, d).filter((id) => !used.has(id));
  if (sharing.length < 2) {
    if (!fresh)
      throw new Error(
        `${where}: no rows are shared (it was not made with sharedRows), so the unused ones cannot be trained as one; make it again with sharedRows or drop sharedRows`,
      );
    sharing = Array.from({ length: V }, (_, id) => id).filter((id) => !used.has(id));
    if (sharing.length < 2) throw new Error(`${where}: the corpus uses ${used.size} of ${V} tokens: nothing to share`);
    const first = table.slice(sharing[0] * d, sharing[0] * d + d);
    for (const id of sharing) table.set(first, id * d);
  }
  return split(V, sharing);
}

/**
 * The shared rows a [V, d] table already has (a base made with sharedRows), or undefined when
 * fewer than `least` rows are equal: what a frozen base's head computes on (HfCausalLM).
 */
export function sharedRowsOf(table: Float32Array, V: number, d: number, least = 2): SharedRows | undefined {
  const sharing = equalRows(table, V, d);
  return sharing.length >= Math.max(2, least) ? split(V, sharing) : undefined;
}

function split(V: number, sharing: number[]): SharedRows {
  const shared = new Set(sharing);
  const own = Array.from({ length: V }, (_, id) => id).filter((id) => !shared.has(id));
  const ids = Int32Array.from([...own, sharing[0]]);
  const index = new Int32Array(V).fill(own.length);
  own.forEach((id, i) => (index[id] = i));
  return { ids, sharing: Int32Array.from(sharing), index };
}

/** The largest set of rows that are bitwise equal (ascending ids), or [] when all differ. */
function equalRows(table: Float32Array, V: number, d: number): number[] {
  const bits = new Uint32Array(table.buffer, table.byteOffset, V * d);
  const byHash = new Map<number, number[]>();
  for (let id = 0; id < V; id++) {
    let h = 2166136261;
    for (let j = id * d; j < id * d + d; j++) h = Math.imul(h ^ bits[j], 16777619);
    const list = byHash.get(h >>> 0);
    if (list) list.push(id);
    else byHash.set(h >>> 0, [id]);
  }
  let best: number[] = [];
  for (const list of byHash.values()) {
    if (list.length <= best.length) continue;
    // a hash match is checked row by row against the first
    const same = list.filter((id) => rowsEqual(bits, list[0], id, d));
    if (same.length > best.length) best = same;
  }
  return best.length >= 2 ? best : [];
}

function rowsEqual(bits: Uint32Array, a: number, b: number, d: number): boolean {
  for (let j = 0; j < d; j++) if (bits[a * d + j] !== bits[b * d + j]) return false;
  return true;
}
