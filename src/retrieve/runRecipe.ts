/**
 * The one executor: runs any SearchRecipe, skipping the stages it lacks. A recipe with expansion
 * or scoring makes a context bundle (taskContext.ts); any other a ranked list of current entries.
 */
import type { Embedder } from '../embed/embedder.js';
import { capText } from '../embed/chunkText.js';
import type { EntryFilter } from '../model/entryFilter.js';
import { invalidInput, throwIfAborted } from '../model/errors.js';
import type { ContextBundle, SearchHit } from '../model/types.js';
import { entryFilterOf } from '../recipe/searchOptions.js';
import type { SearchRecipe } from '../recipe/searchRecipe.js';
import type { MemoryIndex } from '../store/memoryIndex.js';
import type { Hit } from './candidate.js';
import { dropSuperseded } from './dropSuperseded.js';
import { embedOrExplain } from './embedQuery.js';
import { hybridCandidates } from './hybridCandidates.js';
import { hydrateHits } from './hydrateHits.js';
import { keywordCandidates } from './keywordCandidates.js';
import { capNote, EMBEDDED_CHARS, SEARCHED_CHARS } from './queryText.js';
import { stage1CandidatesFor } from './stage1Calibration.js';
import { buildTaskContext, type RecipeRun } from './taskContext.js';

export type { RecipeRun };
import { EXACT_ORDER_MARGIN, exactNearest, twoStageCandidates } from './vectorCandidates.js';

export interface RecipeOutcome {
  /** Best first: a list search's hits, or a context's entries. */
  hits: SearchHit[];
  /** How the hits were found: a part that was unavailable, a text cut short. */
  notes: string[];
  /** Small-vector candidates stage 1 took (0 without a two-stage vector source). */
  stage1: number;
  /** The bundle, for a recipe with expansion or scoring. */
  bundle?: ContextBundle;
}

type RankedBy = 'similarity' | 'keyword' | 'fused';

export async function runRecipe(
  index: MemoryIndex,
  embedder: Embedder,
  text: string,
  recipe: SearchRecipe,
  run: RecipeRun = {},
): Promise<RecipeOutcome> {
  if (typeof text !== 'string' || text.trim() === '') throw invalidInput('query must be a non-empty string');
  if (recipe.expansion || recipe.scoring) {
    const bundle = await buildTaskContext(index, embedder, text, recipe, run);
    return { hits: bundle.entries, notes: bundle.notes ?? [], stage1: 0, bundle };
  }
  return rankedList(index, embedder, text, recipe, run);
}

async function rankedList(
  index: MemoryIndex,
  embedder: Embedder,
  text: string,
  recipe: SearchRecipe,
  run: RecipeRun,
): Promise<RecipeOutcome> {
  const { sources } = recipe;
  const vectorSource = sources.vector;
  const signal = run.signal;
  const filter = entryFilterOf(recipe.filter, recipe.projectCore);
  const limit = recipe.budget.maxEntries;
  const smallDimensions = index.smallDimensions;
  if (vectorSource?.smallDims !== undefined && vectorSource.smallDims !== smallDimensions) {
    throw invalidInput(
      `this database stores ${smallDimensions}-d small vectors; smallDims ${JSON.stringify(vectorSource.smallDims)} needs a database opened with smallDimensions: ${JSON.stringify(vectorSource.smallDims)}`,
    );
  }
  // The calibrated count depends on the store's size: measured (and checked) before the query is embedded.
  let candidates = sources.candidates;
  if (vectorSource?.stage1 === 'calibrated') {
    candidates = await stage1CandidatesFor(index, limit);
    if (candidates < limit) throw invalidInput(`candidates (${candidates}) must be at least limit (${limit})`);
  }
  const notes: string[] = [];
  const note = capNote(text);
  if (note) notes.push(note.replace('the task', 'the query'));
  throwIfAborted(signal);
  const vector = vectorSource
    ? await embedOrExplain(embedder, capText(text, EMBEDDED_CHARS), { strict: recipe.strict, signal, notes })
    : undefined;
  const threshold = vectorSource?.threshold ?? -1;

  if (vectorSource?.stage1 === 'exact' && !sources.keyword && !sources.mentions) {
    const keep = async (hits: Hit[]) => (await dropSuperseded(index, hits, { asOf: recipe.filter.asOf, signal })).kept;
    const { hits } = vector ? await exactNearest(index, vector, { filter, limit, threshold, keep, signal }) : { hits: [] };
    return { hits: hits.map(({ entry, similarity, why }) => ({ entry, score: similarity, similarity, why })), notes, stage1: 0 };
  }

  const rankedBy: RankedBy = !vectorSource ? 'keyword' : sources.keyword || sources.mentions ? 'fused' : 'similarity';
  const words = capText(text, SEARCHED_CHARS);
  let stage1 = 0;
  const fetch = async (n: number): Promise<Hit[]> => {
    if (rankedBy === 'keyword') return keywordCandidates(index, words, { filter, limit: n, signal });
    if (rankedBy === 'similarity' && vector) {
      const r = await twoStageCandidates(index, vector, { filter, candidates: Math.max(candidates, n), limit: n, threshold, signal });
      stage1 = r.stage1;
      return r.hits;
    }
    const r = await hybridCandidates(index, words, vector, {
      filter,
      candidates: Math.max(candidates, n),
      threshold,
      keyword: sources.keyword,
      mentions: sources.mentions,
      signal,
      fusion: recipe.fusion,
    });
    stage1 = r.stage1;
    return r.fused.slice(0, n);
  };
  const hits = await firstCurrent(
    index,
    limit,
    { filter, queryVector: vector, exactOrder: recipe.exactOrder, asOf: recipe.filter.asOf, signal, rankedBy },
    fetch,
  );
  return { hits, notes, stage1 };
}

/**
 * The first `limit` hits that no newer entry supersedes (as of `asOf`). Supersession is a graph
 * fact, so the search over-fetches and asks for more only when too many hits were superseded.
 */
async function firstCurrent(
  index: MemoryIndex,
  limit: number,
  options: { filter: EntryFilter; queryVector?: Float32Array; exactOrder: boolean; asOf?: Date; signal?: AbortSignal; rankedBy: RankedBy },
  fetch: (n: number) => Promise<Hit[]>,
): Promise<SearchHit[]> {
  for (let n = limit + 16; ; n *= 4) {
    const got = await fetch(n);
    const { kept } = await dropSuperseded(index, got, { asOf: options.asOf, signal: options.signal });
    if (kept.length >= limit || got.length < n) {
      if (!options.exactOrder) {
        const read = await hydrateHits(index, kept.slice(0, limit), options);
        return read.map((h) => ({ entry: h.entry, score: rankScore(h, options.rankedBy), similarity: h.similarity, why: h.why }));
      }
      // Ranked on 8-bit vectors: near ties may be swapped, so a few more are read with their
      // exact vectors and the list is ordered by the exact cosine it reports.
      const read = await hydrateHits(index, kept.slice(0, limit + EXACT_ORDER_MARGIN), options);
      return read
        .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id))
        .slice(0, limit)
        .map(({ entry, similarity, why }) => ({ entry, score: similarity, similarity, why }));
    }
  }
}

/** The score a search's list is ordered by (SearchHit.score). */
function rankScore(h: Hit, rankedBy: RankedBy): number {
  if (rankedBy === 'fused') return h.fused ?? 0;
  if (rankedBy === 'keyword') return h.why.find((r) => r.kind === 'keyword')?.score ?? 0;
  return h.similarity;
}
