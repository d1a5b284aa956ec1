import { throwIfAborted } from '../model/errors.js';
import type { MemoryEntry } from '../model/types.js';
import type { VectorHit } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { EntryColumns } from '../store/resident/entryColumns.js';
import { kthLowerBound } from '../store/resident/fullVectors.js';
import type { Stores } from '../store/stores.js';
import { cosineSimilarity } from '../embed/embedder.js';
import { makeHit, type Candidate, type Hit } from './candidate.js';

const asHits = (hits: VectorHit[], threshold: number): Hit[] =>
  hits
    .filter((h) => h.similarity >= threshold)
    .map((h, i) => makeHit(h.id, h.similarity, [{ kind: 'vector', rank: i + 1, similarity: h.similarity }]));

/**
 * Exact nearest entries on the full vector: the `limit` best that pass the filter and that `keep`
 * keeps (it drops superseded entries), those below the similarity threshold left out; each hit
 * carries its entry and its exact cosine (float64 over the stored float32 vectors), ties in id
 * order.
 *
 * While the store is held for it (EntryColumns.exactCandidates), from memory: a two-level 8-bit
 * scan whose error bounds keep every entry that could rank, `keep` on those ids, then one read of
 * the float vectors of the few that can still make the top `limit`, which ranks them exactly.
 * Otherwise a LanceDB scan (`via: 'lancedb'`), the filter pushed down so that the limit counts
 * only matching rows. Either way it asks for more while `keep` dropped too many.
 */
export async function exactNearest(
  stores: Stores,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; limit: number; threshold: number; keep: (hits: Hit[]) => Promise<Hit[]>; signal?: AbortSignal },
): Promise<{ hits: Candidate[]; via: 'memory' | 'lancedb' }> {
  throwIfAborted(opts.signal);
  const columns = await stores.columns();
  const via = columns.holdsExactVectors ? 'memory' : 'lancedb';
  // A zero vector has no cosine to anything: no query, and no entry, of one is ever a hit.
  if (!queryVector.some((x) => x !== 0)) return { hits: [], via };
  if (via === 'lancedb') return { hits: await exactNearestInLanceDb(stores, queryVector, opts), via };
  const { limit } = opts;
  let kept: { id: string; cosine: number; bound: number }[];
  for (let n = limit + 16; ; n *= 4) {
    const found = columns.exactCandidates(queryVector, opts.filter, n)!;
    const byId = new Map(found.candidates.map((c) => [c.id, c]));
    kept = (await opts.keep(found.candidates.map((c) => makeHit(c.id, c.cosine, [])))).map((h) => byId.get(h.id)!);
    throwIfAborted(opts.signal);
    // Enough kept entries are surely above every entry the scan left out, or none was left out.
    if (kept.filter((c) => c.cosine - c.bound >= found.floor).length >= limit || found.candidates.length < n) break;
  }
  const floor = kthLowerBound(kept, limit);
  const ids = kept.filter((c) => c.cosine + c.bound >= floor).map((c) => c.id);
  // The entries come from memory while the store is held whole (Stores.readEntries): only the vectors are read.
  const [vectors, entries] = await Promise.all([stores.table.vectorsOf(ids), stores.readEntries(ids)]);
  throwIfAborted(opts.signal);
  const read = entries.flatMap((entry) => {
    const vector = vectors.get(entry.id);
    return vector ? [{ id: entry.id, vector, entry }] : [];
  });
  return { hits: rankExactly(read, queryVector, opts), via: 'memory' };
}

/**
 * Hits past `limit` that a search ranked approximately (on 8-bit vectors, or LanceDB's float32
 * distances) reads to order its list by exact cosine: near ties may come swapped.
 */
export const EXACT_ORDER_MARGIN = 8;

async function exactNearestInLanceDb(
  stores: Stores,
  queryVector: Float32Array,
  opts: Parameters<typeof exactNearest>[2],
): Promise<Candidate[]> {
  for (let n = opts.limit + 16; ; n *= 4) {
    const nearest = await stores.table.nearest(queryVector, { filter: opts.filter, limit: n });
    const kept = await opts.keep(nearest.map((h) => makeHit(h.id, h.similarity, [])));
    throwIfAborted(opts.signal);
    if (kept.length < opts.limit && nearest.length === n) continue;
    const ids = kept.slice(0, opts.limit + EXACT_ORDER_MARGIN).map((h) => h.id);
    const rows = ids.length === 0 ? [] : await stores.table.read({ ...opts.filter, ids }, { withVectors: true });
    return rankExactly(
      rows.map((r) => ({ id: r.entry.id, vector: r.vector!, entry: r.entry })),
      queryVector,
      opts,
    );
  }
}

/** Rows ranked by their exact cosine to the query, ties in id order; zero vectors (no cosine) and those below the threshold left out. */
function rankExactly(
  rows: { id: string; vector: Float32Array; entry: MemoryEntry }[],
  queryVector: Float32Array,
  opts: { limit: number; threshold: number },
): Candidate[] {
  return rows
    .filter((r) => r.vector.some((x) => x !== 0))
    .map((r) => ({ entry: r.entry, similarity: cosineSimilarity(queryVector, r.vector) }))
    .filter((r) => r.similarity >= opts.threshold)
    .sort((a, b) => b.similarity - a.similarity || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0))
    .slice(0, opts.limit)
    .map((r, i) => ({ ...makeHit(r.entry.id, r.similarity, [{ kind: 'vector', rank: i + 1, similarity: r.similarity }]), entry: r.entry }));
}

/**
 * Two-stage Matryoshka search: the `candidates` nearest on the cheap `vector_small`, then cosine on
 * the full vectors held in memory (EntryColumns: 8-bit, within ~0.001 of exact), so no stage
 * reads a vector from disk.
 *
 * Stage 1, while the store's small vectors are held in memory (Stores.scanMaxEntries): a scan of
 * the 8-bit small vectors with the filter applied inside it (EntryColumns.startNearestSmall, ~1 ms
 * at 100K entries against ~4 ms for LanceDB's IVF search, which also misses some true neighbours).
 * `alongside` is called while the scan runs, which in a large store is on a helper thread: the
 * keyword search then costs no time of its own.
 *
 * Otherwise LanceDB's search, ids and distances only. LanceDB's prefilter is a pass over the
 * filter columns of the whole table (~3 ms at 100K entries), while an IVF search costs about the
 * same for any limit up to ~800. So when the filter lets through enough of the store (estimated on
 * the columns in memory), the search asks for enough unfiltered neighbours that `candidates`
 * should pass, and filters them in memory: if `candidates` of them pass, they are exactly the
 * nearest `candidates` that pass. When fewer do, or the filter is selective, the filter is pushed
 * down.
 */
export async function twoStageCandidates(
  stores: Stores,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; candidates: number; limit: number; threshold: number; signal?: AbortSignal; alongside?: () => void },
): Promise<{ hits: Hit[]; stage1: number }> {
  throwIfAborted(opts.signal);
  const querySmall = stores.smallVector(queryVector);
  const columns = await stores.columns();
  // `alongside` runs while the scan does (on a helper thread in a large store); the scan must be
  // ranked before anything can await.
  const rankScan = columns.startNearestSmall(querySmall);
  let scanned: VectorHit[] | undefined;
  try {
    opts.alongside?.();
  } finally {
    scanned = rankScan?.(opts.filter, opts.candidates);
  }
  const stage1 = scanned ?? (await lanceStage1(stores, columns, querySmall, queryVector, opts));
  throwIfAborted(opts.signal);
  const similarities = columns.similarities(
    stage1.map((h) => h.id),
    queryVector,
  );
  const reranked = stage1
    .flatMap((h, i) => (Number.isNaN(similarities[i]) ? [] : [{ id: h.id, similarity: similarities[i]! }]))
    .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id))
    .slice(0, opts.limit);
  return { hits: asHits(reranked, opts.threshold), stage1: stage1.length };
}

async function lanceStage1(
  stores: Stores,
  columns: EntryColumns,
  querySmall: Float32Array,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; candidates: number; signal?: AbortSignal },
): Promise<VectorHit[]> {
  // A query whose small vector is all zeros (sparse embeddings) has no cosine: stage 1 then searches the full vectors.
  const usable = querySmall.some((x) => x !== 0);
  const search = { column: usable ? ('vector_small' as const) : ('vector' as const) };
  const query = usable ? querySmall : queryVector;
  const unfilteredLimit = Math.ceil((1.5 * opts.candidates) / Math.max(columns.passRate(opts.filter), 1e-3));
  if (unfilteredLimit <= Math.max(800, 2 * opts.candidates)) {
    const passes = columns.matcher(opts.filter);
    const unfiltered = await stores.table.nearest(query, { ...search, limit: unfilteredLimit });
    const passed = unfiltered.filter((h) => passes(h.id)).slice(0, opts.candidates);
    // Too few passed while more rows remain: the nearest that pass may lie beyond what was fetched.
    if (passed.length === opts.candidates || unfiltered.length < unfilteredLimit) return passed;
  }
  throwIfAborted(opts.signal);
  return stores.table.nearest(query, { ...search, filter: opts.filter, limit: opts.candidates });
}
