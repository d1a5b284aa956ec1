import { cosineSimilarity } from '../embed/embedder.js';
import { throwIfAborted } from '../model/errors.js';
import type { EntriesTable, VectorHit } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Hit } from './candidate.js';

const asHits = (hits: VectorHit[], threshold: number): Hit[] =>
  hits
    .filter((h) => h.similarity >= threshold)
    .map((h, i) => ({ id: h.id, similarity: h.similarity, why: [{ kind: 'vector', rank: i + 1, similarity: h.similarity }], ...(h.vector ? { vector: h.vector } : {}) }));

/**
 * Exact nearest entries on the full vector, the filter pushed into LanceDB (so the limit counts
 * only matching rows), those below the similarity threshold dropped.
 */
export async function vectorCandidates(
  table: EntriesTable,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; limit: number; threshold: number; signal?: AbortSignal },
): Promise<Hit[]> {
  throwIfAborted(opts.signal);
  const hits = await table.nearest(queryVector, { filter: opts.filter, limit: opts.limit });
  throwIfAborted(opts.signal);
  return asHits(hits, opts.threshold);
}

/**
 * Two-stage Matryoshka search: `candidates` nearest on the cheap `vector_small` (one read that also
 * brings their full vectors), then exact cosine on the full vectors, in memory.
 */
export async function twoStageCandidates(
  table: EntriesTable,
  queryVector: Float32Array,
  querySmall: Float32Array,
  opts: { filter: EntryFilter; candidates: number; limit: number; threshold: number; signal?: AbortSignal },
): Promise<{ hits: Hit[]; stage1: number }> {
  throwIfAborted(opts.signal);
  // A query whose small vector is all zeros (sparse embeddings) has no cosine: stage 1 then scans the full vectors.
  const usable = querySmall.some((x) => x !== 0);
  const stage1 = await table.nearest(usable ? querySmall : queryVector, { column: usable ? 'vector_small' : 'vector', filter: opts.filter, limit: opts.candidates, withVectors: true });
  throwIfAborted(opts.signal);
  const reranked = stage1
    .map((h) => ({ id: h.id, vector: h.vector!, similarity: cosineSimilarity(queryVector, h.vector!) }))
    .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id))
    .slice(0, opts.limit);
  return { hits: asHits(reranked, opts.threshold), stage1: stage1.length };
}
