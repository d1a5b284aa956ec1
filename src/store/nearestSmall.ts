import { throwIfAborted } from '../model/errors.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { EntriesTable, VectorHit } from './lance/entriesTable.js';
import type { EntryColumns } from './resident/entryColumns.js';

/**
 * Stage 1 of the two-stage search (MemoryIndex.nearestSmallWhile).
 *
 * While the store's small vectors are held in memory (Stores.scanMaxEntries): a scan of the 8-bit
 * small vectors with the filter applied inside it (EntryColumns.startNearestSmall, ~1 ms at 100K
 * entries against ~4 ms for LanceDB's IVF search, which also misses some true neighbours).
 * `sideWork` is called while the scan runs, which in a large store is on a helper thread; the
 * scan is ranked before anything awaits, which is why the two are one call.
 *
 * Otherwise LanceDB's search, ids and distances only. LanceDB's prefilter is a pass over the
 * filter columns of the whole table (~3 ms at 100K entries), while an IVF search costs about the
 * same for any limit up to ~800. So when the filter lets through enough of the store (estimated on
 * the columns in memory), the search asks for enough unfiltered neighbours that `k` should pass,
 * and filters them in memory: if `k` of them pass, they are exactly the nearest `k` that pass.
 * When fewer do, or the filter is selective, the filter is pushed down.
 */
export async function nearestSmallWhile(
  table: EntriesTable,
  columns: EntryColumns,
  querySmall: Float32Array,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; k: number; sideWork?: () => void; signal?: AbortSignal },
): Promise<VectorHit[]> {
  const rankScan = columns.startNearestSmall(querySmall);
  let scanned: VectorHit[] | undefined;
  try {
    opts.sideWork?.();
  } finally {
    scanned = rankScan?.(opts.filter, opts.k);
  }
  if (scanned) return scanned;
  // A query whose small vector is all zeros (sparse embeddings) has no cosine: stage 1 then searches the full vectors.
  const usable = querySmall.some((x) => x !== 0);
  const search = { column: usable ? ('vector_small' as const) : ('vector' as const) };
  const query = usable ? querySmall : queryVector;
  const unfilteredLimit = Math.ceil((1.5 * opts.k) / Math.max(columns.passRate(opts.filter), 1e-3));
  if (unfilteredLimit <= Math.max(800, 2 * opts.k)) {
    const passes = columns.matcher(opts.filter);
    const unfiltered = await table.nearest(query, { ...search, limit: unfilteredLimit });
    const passed = unfiltered.filter((h) => passes(h.id)).slice(0, opts.k);
    // Too few passed while more rows remain: the nearest that pass may lie beyond what was fetched.
    if (passed.length === opts.k || unfiltered.length < unfilteredLimit) return passed;
  }
  throwIfAborted(opts.signal);
  return table.nearest(query, { ...search, filter: opts.filter, limit: opts.k });
}
