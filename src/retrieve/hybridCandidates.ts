import type { MemoryIndex } from '../store/memoryIndex.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { Hit } from './candidate.js';
import { fuseCandidates } from './fuse.js';
import type { RecipeFusion } from '../recipe/searchRecipe.js';
import { searchKeywords } from './keywordCandidates.js';
import { throwIfAborted } from '../model/errors.js';
import { mentionCandidates } from './mentionCandidates.js';
import { twoStageCandidates } from './vectorCandidates.js';
import { estimateSimilarity } from './estimateSimilarity.js';

/**
 * Stage 1 + 2 of the query path: two-stage Matryoshka vector search and BM25 keyword search, and
 * with `mentions` the entries the query names, all with the same pushed-down filter, fused (RRF by
 * default; lists in that order for `fusion.weights`). Vector hits below `threshold` are dropped;
 * keyword and mention hits are kept whatever their similarity, since they matched the words.
 * Ids only: the caller reads the rows of what it keeps (hydrateHits). Without a query vector (the
 * embedder failed) the keyword and mention lists are fused alone, with no similarity.
 */
export async function hybridCandidates(
  index: MemoryIndex,
  query: string,
  queryVector: Float32Array | undefined,
  opts: {
    filter: EntryFilter;
    candidates: number;
    threshold: number;
    keyword?: boolean;
    mentions?: boolean;
    fusion: RecipeFusion;
    signal?: AbortSignal;
    codeHits?: Hit[];
  },
): Promise<{ fused: Hit[]; vector: Hit[]; keyword: Hit[]; mentioned: Hit[]; stage1: number }> {
  const [columns, keywords] = await Promise.all([index.columns(), opts.keyword === false ? undefined : index.keywords()]);
  throwIfAborted(opts.signal);
  // The keyword search runs while the stage-1 scan does (see twoStageCandidates).
  let keywordHits: Hit[] = [];
  const searchWords =
    keywords && (() => void (keywordHits = searchKeywords(keywords, columns, query, { filter: opts.filter, limit: opts.candidates })));
  const noVectors = () => {
    searchWords?.();
    return Promise.resolve({ hits: [] as Hit[], stage1: 0 });
  };
  const vectorSearch = queryVector
    ? twoStageCandidates(index, queryVector, {
        filter: opts.filter,
        candidates: opts.candidates,
        limit: opts.candidates,
        threshold: opts.threshold,
        signal: opts.signal,
        alongside: searchWords,
      })
    : noVectors();
  const [vector, mentionHits] = await Promise.all([
    vectorSearch,
    opts.mentions
      ? mentionCandidates(index, query, { filter: opts.filter, limit: opts.candidates, signal: opts.signal })
      : Promise.resolve([]),
  ]);
  // Similarity breaks ties in the fusion, so every list's hits carry one.
  const keyword = estimateSimilarity(keywordHits, columns, queryVector);
  const mentioned = estimateSimilarity(mentionHits, columns, queryVector);
  // Being named outright is stronger evidence than either search: the mention list counts double,
  // and entries on the code a change touches (contextForDiff) three times.
  const allowed = opts.codeHits?.length ? columns.matcher(opts.filter) : undefined;
  const code = allowed
    ? estimateSimilarity(
        opts.codeHits!.filter((h) => allowed(h.id)),
        columns,
        queryVector,
      )
    : [];
  const lists = code.length > 0 ? [vector.hits, keyword, mentioned, code] : [vector.hits, keyword, mentioned];
  return { fused: fuseCandidates(lists, opts.fusion), vector: vector.hits, keyword, mentioned, stage1: vector.stage1 };
}
