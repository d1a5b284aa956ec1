import type { MemoryEntry, Reason } from '../model/types.js';

/**
 * A ranked entry id on its way through the searches, fusion and the graph expansion: ids only,
 * so that no stage reads a row that a later stage drops (see hydrateHits).
 */
export interface Hit {
  id: string;
  /** Cosine similarity to the query (1 − distance); 0 until known. */
  similarity: number;
  why: Reason[];
  /** Rank-fusion score, set by fuseCandidates. */
  fused?: number;
  /** For a hit the keyword search did not return: the task's BM25 over it, relative to the best keyword hit (addKeywordScores). */
  keywordScore?: number;
  /**
   * For a hit the graph reached, when the task names entries: BM25 of the task's words other than
   * those names, relative to the best reached hit (addKeywordScores).
   */
  bridgeScore?: number;
}

/** A hit with its entry read. */
export interface Candidate extends Hit {
  entry: MemoryEntry;
}

/** Merges hits that share an id, keeping every reason and the best similarity. */
export function dedupeCandidates<T extends Hit>(lists: T[][]): T[] {
  const byId = new Map<string, T>();
  for (const list of lists) {
    for (const c of list) {
      const seen = byId.get(c.id);
      if (!seen) byId.set(c.id, { ...c, why: [...c.why] });
      else {
        seen.similarity = Math.max(seen.similarity, c.similarity);
        seen.why.push(...c.why);
        if (c.fused !== undefined) seen.fused = Math.max(seen.fused ?? 0, c.fused);
      }
    }
  }
  return [...byId.values()];
}
