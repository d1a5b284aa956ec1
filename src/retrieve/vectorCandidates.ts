import { throwIfAborted } from '../model/errors.js';
import type { EntriesTable } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Candidate } from './candidate.js';

/**
 * Nearest entries to the query vector with the filter pushed into LanceDB (so the limit counts
 * only matching rows), dropping those below the similarity threshold.
 */
export async function vectorCandidates(
  table: EntriesTable,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; limit: number; threshold: number; signal?: AbortSignal },
): Promise<Candidate[]> {
  throwIfAborted(opts.signal);
  const hits = await table.nearest(queryVector, { filter: opts.filter, limit: opts.limit });
  throwIfAborted(opts.signal);
  return hits
    .filter((h) => h.similarity >= opts.threshold)
    .map((h, i) => ({ entry: h.entry, similarity: h.similarity, why: [{ kind: 'vector', rank: i + 1, similarity: h.similarity }] }));
}
