import type { Stores } from '../store/stores.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Candidate } from './candidate.js';
import { fuseCandidates, type FusionOptions } from './fuse.js';
import { keywordCandidates } from './keywordCandidates.js';
import { twoStageCandidates } from './vectorCandidates.js';

/**
 * Stage 1 + 2 of the query path: two-stage Matryoshka vector search and BM25 keyword search, both
 * with the same pushed-down filter, fused (RRF by default). Vector hits below `threshold` are
 * dropped; keyword hits are kept whatever their similarity, since they matched the words.
 */
export async function hybridCandidates(
  stores: Stores,
  query: string,
  queryVector: Float32Array,
  opts: { filter: EntryFilter; candidates: number; threshold: number; keyword?: boolean; fusion?: FusionOptions; signal?: AbortSignal },
): Promise<{ fused: Candidate[]; vector: Candidate[]; keyword: Candidate[]; stage1: number }> {
  const [vector, keyword] = await Promise.all([
    twoStageCandidates(stores.table, queryVector, stores.smallVector(queryVector), {
      filter: opts.filter, candidates: opts.candidates, limit: opts.candidates, threshold: opts.threshold, signal: opts.signal,
    }),
    opts.keyword === false ? Promise.resolve([]) : keywordCandidates(stores.table, query, { filter: opts.filter, limit: opts.candidates, queryVector, signal: opts.signal }),
  ]);
  return { fused: fuseCandidates([vector.hits, keyword], opts.fusion), vector: vector.hits, keyword, stage1: vector.stage1 };
}
