import { cosineSimilarity } from '../embed/embedder.js';
import { throwIfAborted } from '../model/errors.js';
import type { EntriesTable } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Candidate, Hit } from './candidate.js';

/**
 * Reads the entries of the hits in one filtered LanceDB read, in the hits' order; hits the filter
 * excludes (or deleted meanwhile) drop out. With a query vector, the full vectors come along and
 * each hit's similarity is the exact cosine (the query path ranked on 8-bit vectors in memory, or
 * had none for keyword hits).
 */
export async function hydrateHits<T extends Hit>(
  table: EntriesTable,
  hits: T[],
  opts: { filter: EntryFilter; queryVector?: Float32Array; signal?: AbortSignal },
): Promise<(T & Candidate)[]> {
  throwIfAborted(opts.signal);
  if (hits.length === 0) return [];
  const rows = new Map((await table.read({ ...opts.filter, ids: hits.map((h) => h.id) }, { withVectors: opts.queryVector !== undefined })).map((r) => [r.entry.id, r]));
  throwIfAborted(opts.signal);
  return hits.flatMap((h) => {
    const row = rows.get(h.id);
    if (!row) return [];
    const similarity = row.vector && opts.queryVector ? cosineSimilarity(opts.queryVector, row.vector) : h.similarity;
    return [{ ...h, entry: row.entry, similarity }];
  });
}
