import { cosineSimilarity } from '../embed/embedder.js';
import { throwIfAborted } from '../model/errors.js';
import type { EntriesTable } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Candidate, Hit } from './candidate.js';

/**
 * Reads the entries of the hits in one filtered LanceDB read, in the hits' order; hits the filter
 * excludes (or deleted meanwhile) drop out. With a query vector, full vectors come along for hits
 * that have none, and their similarity is filled in (keyword, mention and graph hits).
 */
export async function hydrateHits<T extends Hit>(
  table: EntriesTable,
  hits: T[],
  opts: { filter: EntryFilter; queryVector?: Float32Array; signal?: AbortSignal },
): Promise<(T & Candidate)[]> {
  throwIfAborted(opts.signal);
  if (hits.length === 0) return [];
  const withVectors = opts.queryVector !== undefined && hits.some((h) => !h.vector);
  const rows = new Map((await table.read({ ...opts.filter, ids: hits.map((h) => h.id) }, { withVectors })).map((r) => [r.entry.id, r]));
  throwIfAborted(opts.signal);
  return hits.flatMap((h) => {
    const row = rows.get(h.id);
    if (!row) return [];
    const vector = h.vector ?? row.vector;
    const similarity = h.vector || !vector || !opts.queryVector ? h.similarity : cosineSimilarity(opts.queryVector, vector);
    return [{ ...h, entry: row.entry, similarity, ...(vector ? { vector } : {}) }];
  });
}
