import type { EntryColumns } from '../store/resident/entryColumns.js';
import type { Hit } from './candidate.js';

/**
 * Fills in the similarity of hits that no vector stage measured (keyword, mention and graph hits)
 * from the 8-bit vectors held in memory (within ~0.001 of the exact cosine), at no read.
 */
export function estimateSimilarity<T extends Hit>(hits: T[], columns: EntryColumns, queryVector: Float32Array): T[] {
  const similarities = columns.similarities(hits.map((h) => h.id), queryVector);
  return hits.map((h, i) => ({ ...h, similarity: Number.isNaN(similarities[i]) ? h.similarity : similarities[i]! }));
}
