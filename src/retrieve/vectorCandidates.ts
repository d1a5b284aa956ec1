import { throwIfAborted } from '../model/errors.js';
import type { MemoryEntry } from '../model/types.js';
import type { EntryFilter } from '../model/entryFilter.js';
import { kthLowerBound } from '../kernel/topK.js';
import type { MemoryIndex, VectorHit } from '../store/memoryIndex.js';
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
  index: MemoryIndex,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; limit: number; threshold: number; keep: (hits: Hit[]) => Promise<Hit[]>; signal?: AbortSignal },
): Promise<{ hits: Candidate[]; via: 'memory' | 'lancedb' }> {
  throwIfAborted(opts.signal);
  const columns = await index.columns();
  // The residual level may still be on its way from a snapshot; if it does not come, LanceDB answers.
  if (columns.holdsExactVectors) await columns.exactReady();
  const via = columns.holdsExactVectors ? 'memory' : 'lancedb';
  // A zero vector has no cosine to anything: no query, and no entry, of one is ever a hit.
  if (!queryVector.some((x) => x !== 0)) return { hits: [], via };
  if (via === 'lancedb') return { hits: await exactNearestInLanceDb(index, queryVector, opts), via };
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
  // The entries come from memory while the store is held whole: only the vectors are read.
  const rows = await index.read(ids, { withVectors: true });
  throwIfAborted(opts.signal);
  const read = rows.flatMap(({ entry, vector }) => (vector ? [{ id: entry.id, vector, entry }] : []));
  return { hits: rankExactly(read, queryVector, opts), via: 'memory' };
}

/**
 * Hits past `limit` that a search ranked approximately (on 8-bit vectors, or LanceDB's float32
 * distances) reads to order its list by exact cosine: near ties may come swapped.
 */
export const EXACT_ORDER_MARGIN = 8;

async function exactNearestInLanceDb(
  index: MemoryIndex,
  queryVector: Float32Array,
  opts: Parameters<typeof exactNearest>[2],
): Promise<Candidate[]> {
  for (let n = opts.limit + 16; ; n *= 4) {
    const nearest = await index.nearestFull(queryVector, opts.filter, n);
    const kept = await opts.keep(nearest.map((h) => makeHit(h.id, h.similarity, [])));
    throwIfAborted(opts.signal);
    if (kept.length < opts.limit && nearest.length === n) continue;
    const ids = kept.slice(0, opts.limit + EXACT_ORDER_MARGIN).map((h) => h.id);
    const rows = ids.length === 0 ? [] : await index.read(ids, { filter: opts.filter, withVectors: true });
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
 * Two-stage Matryoshka search: the `candidates` nearest on the cheap `vector_small` (stage 1,
 * MemoryIndex.nearestSmallWhile: a scan in memory or LanceDB's search), then cosine on the full
 * vectors held in memory (EntryColumns: 8-bit, within ~0.001 of exact), so no stage reads a
 * vector from disk. `alongside` runs while stage 1 does, which in a large store is on a helper
 * thread: the keyword search then costs no time of its own.
 */
export async function twoStageCandidates(
  index: MemoryIndex,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; candidates: number; limit: number; threshold: number; signal?: AbortSignal; alongside?: () => void },
): Promise<{ hits: Hit[]; stage1: number }> {
  throwIfAborted(opts.signal);
  const columns = await index.columns();
  const stage1 = await index.nearestSmallWhile(queryVector, opts.filter, opts.candidates, opts.alongside, opts.signal);
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
