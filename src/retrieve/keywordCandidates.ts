import { cosineSimilarity } from '../embed/embedder.js';
import { throwIfAborted } from '../model/errors.js';
import type { EntriesTable } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Candidate } from './candidate.js';

/**
 * BM25 full-text hits over title + content (LanceDB's native index), filter pushed down. With a
 * query vector the hits' vectors are read in the same query and their similarity filled in.
 */
export async function keywordCandidates(
  table: EntriesTable,
  query: string,
  opts: { filter: EntryFilter; limit: number; queryVector?: Float32Array; signal?: AbortSignal },
): Promise<Candidate[]> {
  throwIfAborted(opts.signal);
  const hits = await table.fullText(query, { filter: opts.filter, limit: opts.limit, withVectors: opts.queryVector !== undefined });
  throwIfAborted(opts.signal);
  const best = hits[0]?.score || 1;
  return hits.map((h, i) => ({
    entry: h.entry,
    similarity: opts.queryVector && h.vector ? cosineSimilarity(opts.queryVector, h.vector) : 0,
    why: [{ kind: 'keyword', rank: i + 1, score: h.score / best, bm25: h.score }],
    ...(h.vector ? { vector: h.vector } : {}),
  }));
}
