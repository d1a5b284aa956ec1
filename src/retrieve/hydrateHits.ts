import { cosineSimilarity } from '../embed/embedder.js';
import { throwIfAborted } from '../model/errors.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { MemoryIndex } from '../store/memoryIndex.js';
import type { Candidate, Hit } from './candidate.js';

/**
 * Reads the entries of the hits, in the hits' order; hits the filter excludes (or deleted
 * meanwhile) drop out. With a query vector, each hit's similarity becomes the exact cosine of its
 * float vector (the query path ranked on 8-bit vectors in memory, or had none for keyword hits).
 *
 * One MemoryIndex.read: from memory while the store is held whole (only the vectors, when
 * needed, are read), else one filtered LanceDB read.
 */
export async function hydrateHits<T extends Hit>(
  index: MemoryIndex,
  hits: T[],
  opts: { filter: EntryFilter; queryVector?: Float32Array; signal?: AbortSignal },
): Promise<(T & Candidate)[]> {
  throwIfAborted(opts.signal);
  if (hits.length === 0) return [];
  const rows = new Map(
    (
      await index.read(
        hits.map((h) => h.id),
        { filter: opts.filter, withVectors: opts.queryVector !== undefined },
      )
    ).map((r) => [r.entry.id, r]),
  );
  throwIfAborted(opts.signal);
  return hits.flatMap((h) => {
    const row = rows.get(h.id);
    if (!row) return [];
    const similarity = row.vector && opts.queryVector ? cosineSimilarity(opts.queryVector, row.vector) : h.similarity;
    return [{ ...h, entry: row.entry, similarity }];
  });
}
