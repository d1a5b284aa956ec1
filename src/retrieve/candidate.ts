import type { MemoryEntry, Reason } from '../model/types.js';

/** An entry on its way through the retrieval stages. */
export interface Candidate {
  entry: MemoryEntry;
  /** Cosine similarity to the query (1 − distance); 0 until known. */
  similarity: number;
  why: Reason[];
  /** Full vector, when a stage read it (exact rerank, MMR). */
  vector?: Float32Array;
  /** Rank-fusion score, set by fuseCandidates. */
  fused?: number;
}

/** Merges candidates that share an id, keeping every reason, the best similarity and any vector. */
export function dedupeCandidates(lists: Candidate[][]): Candidate[] {
  const byId = new Map<string, Candidate>();
  for (const list of lists) {
    for (const c of list) {
      const seen = byId.get(c.entry.id);
      if (!seen) byId.set(c.entry.id, { ...c, why: [...c.why] });
      else {
        seen.similarity = Math.max(seen.similarity, c.similarity);
        seen.why.push(...c.why);
        seen.vector ??= c.vector;
        if (c.fused !== undefined) seen.fused = Math.max(seen.fused ?? 0, c.fused);
      }
    }
  }
  return [...byId.values()];
}
