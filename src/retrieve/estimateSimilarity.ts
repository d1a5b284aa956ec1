import type { EntryColumns } from '../store/memoryIndex.js';
import { makeHit, type Hit } from './candidate.js';

/**
 * Fills in the similarity of hits that no vector stage measured (keyword, mention and graph hits)
 * from the 8-bit vectors held in memory (within ~0.001 of the exact cosine), at no read.
 */
export function estimateSimilarity(hits: readonly Hit[], columns: EntryColumns, queryVector: Float32Array | undefined): Hit[] {
  if (!queryVector) return [...hits];
  const similarities = columns.similarities(
    hits.map((h) => h.id),
    queryVector,
  );
  return hits.map((h, i) => makeHit(h.id, Number.isNaN(similarities[i]) ? h.similarity : similarities[i]!, h.why, h));
}
