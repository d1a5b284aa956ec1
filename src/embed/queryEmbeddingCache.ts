import { LRUCache } from 'lru-cache';
import type { Embedder } from './embedder.js';

/**
 * Wraps an embedder for queries: a repeated query text is embedded once. Kept separate from
 * ingest, whose large batches would only evict useful query vectors.
 */
export function withQueryCache(embedder: Embedder, max = 1000): Embedder {
  const cache = new LRUCache<string, Float32Array>({ max });
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    truncatable: embedder.truncatable,
    // The wrapped model's optional traits pass through: a store opened with the wrapper checks them.
    ...(embedder.matryoshkaDimensions ? { matryoshkaDimensions: embedder.matryoshkaDimensions } : {}),
    ...(embedder.cacheVectors !== undefined ? { cacheVectors: embedder.cacheVectors } : {}),
    async embed(texts, signal) {
      const missing = [...new Set(texts.filter((t) => !cache.has(t)))];
      if (missing.length > 0) {
        const vectors = await embedder.embed(missing, signal);
        missing.forEach((t, i) => cache.set(t, vectors[i]!));
      }
      return texts.map((t) => cache.get(t)!);
    },
  };
}
