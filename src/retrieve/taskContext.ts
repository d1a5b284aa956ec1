/**
 * buildTaskContext: the only place that knows the order of the retrieval stages.
 * embed → two-stage vector + keyword + mention hits, fused → seeds → graph expansion → dedupe →
 * drop superseded → filter and score on the columns in memory (+ MMR) → read the entries that fit
 * the budget → code references and golden paths.
 */
import type { JsonChat } from '../llm/chatClient.js';
import type { Embedder } from '../embed/embedder.js';
import { invalidInput, throwIfAborted } from '../model/errors.js';
import type { ContextBundle, ScoredEntry } from '../model/types.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { EntryColumns, MemoryIndex } from '../store/memoryIndex.js';
import { entryFilterOf, type SearchFilterOptions, type SearchOptions } from '../recipe/searchOptions.js';
import type { Reranker, SearchRecipe } from '../recipe/searchRecipe.js';
import { attachCode } from './attachCode.js';
import { codeForBundle } from './codeCandidates.js';
import { DEFAULTS } from '../config/defaults.js';
import { dedupeCandidates, makeHit, type Hit } from './candidate.js';
import { dropSuperseded } from './dropSuperseded.js';
import { expandThroughGraph } from './expandThroughGraph.js';
import { diversify, resolveWeights, scoreCandidates, type ScorableHit, type ScoringWeights } from './score.js';
import { ratingsForTask } from '../feedback/taskSimilarity.js';
import { fitBudget, readWithinBudget } from './readWithinBudget.js';
import { proximity } from './graphRanker.js';
import { judgeRelevance, type RelevanceJudgement } from './relevance.js';
import { cutAtEvidence } from './evidenceCut.js';
import { EVIDENCE_CUT } from '../recipe/presets.js';
import { randomBytes } from 'node:crypto';
import { hybridCandidates } from './hybridCandidates.js';
import { addKeywordScores, keywordQuery } from './keywordCandidates.js';
import { estimateSimilarity } from './estimateSimilarity.js';
import { llmRelevance } from '../llm/relevanceFilter.js';
import { capNote, EMBEDDED_CHARS, SEARCHED_CHARS } from './queryText.js';
import { capText } from '../embed/chunkText.js';
import { embedOrExplain } from './embedQuery.js';

/** What a run needs besides the recipe: none of it is data a recipe could freeze. */
export interface RecipeRun {
  signal?: AbortSignal;
  /** The chat model a recipe's LLM reranker uses. */
  chat?: JsonChat;
  /** Entries on code a change touches (contextForDiff): a fourth fused list. */
  codeHits?: Hit[];
}

/**
 * buildTaskContext's and findWithContext's options: a Pick of the one documented SearchOptions.
 * Defaults are the `context` preset's (recipe/presets.ts).
 */
export type TaskContextOptions = Pick<
  SearchOptions,
  | keyof SearchFilterOptions
  | 'projectCore'
  | 'threshold'
  | 'candidates'
  | 'keyword'
  | 'mentions'
  | 'fusion'
  | 'seeds'
  | 'depth'
  | 'relationTypes'
  | 'maxEntries'
  | 'maxTokens'
  | 'includeCode'
  | 'scoringWeights'
  | 'graphRanking'
  | 'diversity'
  | 'scoreCombination'
  | 'strict'
  | 'relevanceFloor'
  | 'evidenceCut'
  | 'llmFilter'
  | 'reranker'
  | 'signal'
> & {
  /** The former name of `scoringWeights`, still accepted (not with it). */
  weights?: Partial<ScoringWeights>;
};

/**
 * Graph reasons whose path steps through an entry that may not be named are dropped, and a hit
 * left with no reason with them: reached only through a secret, it would be there because of it.
 */
function withoutHiddenPaths(hits: Hit[], named: (id: string) => unknown): Hit[] {
  const out: Hit[] = [];
  for (const h of hits) {
    if (!h.why.some((r) => r.kind === 'graph')) {
      out.push(h);
      continue;
    }
    const why = h.why.filter((r) => r.kind !== 'graph' || r.path.every((hop) => named(hop.from) && named(hop.to)));
    if (why.length > 0) out.push(why.length === h.why.length ? h : makeHit(h.id, h.similarity, why, h));
  }
  return out;
}

/** The hits the filter lets through (graph hits are not filtered before this), each with its scoring columns. */
function withFeatures(hits: Hit[], columns: EntryColumns, filter: EntryFilter): ScorableHit[] {
  const featuresOf = columns.featuresIfPassing(filter);
  const out: ScorableHit[] = [];
  for (const h of hits) {
    const features = featuresOf(h.id);
    // A literal of one shape: spreading hits of several shapes cost ~3 µs a hit.
    if (features)
      out.push({
        id: h.id,
        similarity: h.similarity,
        why: h.why,
        fused: h.fused,
        keywordScore: h.keywordScore,
        bridgeScore: h.bridgeScore,
        features,
      });
  }
  return out;
}

/**
 * Runs a recipe with expansion or scoring (presets `find` and `context`; runRecipe.ts sends it
 * here): the bundle of what an agent should know before the task.
 */
export async function buildTaskContext(
  index: MemoryIndex,
  embedder: Embedder,
  task: string,
  recipe: SearchRecipe,
  run: RecipeRun = {},
): Promise<ContextBundle> {
  if (typeof task !== 'string' || task.trim() === '') throw invalidInput('task must be a non-empty string');
  const { signal, chat, codeHits } = run;
  if (recipe.reranker?.kind === 'llm' && !chat)
    throw invalidInput('llmFilter needs an LLM: configure llm.baseURL and llm.model (MEMCORE_LLM_BASE_URL, MEMCORE_LLM_MODEL)');
  const filter = entryFilterOf(recipe.filter, recipe.projectCore);
  const { sources } = recipe;
  const threshold = sources.vector?.threshold ?? -1;
  const graph = recipe.expansion ?? { seeds: 0, depth: 0, edgeTypes: [], ranker: proximity() };
  const scoring = recipe.scoring ?? { diversity: 0, combination: 'sum' as const };
  const asOf = recipe.filter.asOf;
  const { maxEntries, maxTokens } = recipe.budget;

  const timings: Record<string, number> = {};
  let mark = performance.now();
  const lap = (stage: string) => {
    const t = performance.now();
    timings[stage] = Math.round((t - mark) * 1000) / 1000;
    mark = t;
  };
  const notes: string[] = [];

  throwIfAborted(signal);
  const words = capText(task, SEARCHED_CHARS);
  const note = capNote(task);
  if (note) notes.push(note);
  const queryVector = await embedOrExplain(embedder, capText(task, EMBEDDED_CHARS), { strict: recipe.strict, signal, notes });
  lap('embed');
  const { fused, stage1 } = await hybridCandidates(index, words, queryVector, {
    filter,
    candidates: sources.candidates,
    threshold,
    keyword: sources.keyword,
    mentions: sources.mentions,
    fusion: recipe.fusion,
    signal,
    ...(codeHits ? { codeHits } : {}),
  });
  const judged =
    scoring.relevanceFloor === false
      ? undefined
      : judgeRelevance(sources.keyword ? await index.keywords() : undefined, keywordQuery(words), fused, {
          ...(typeof scoring.relevanceFloor === 'number' ? { floor: scoring.relevanceFloor } : {}),
          ...(filter.cores ? { groups: filter.cores } : {}),
        });
  const weak = judged !== undefined && judged.strength !== 'strong' && fused.length > 0;
  if (weak) notes.push(relevanceNote(judged));
  lap('candidates');
  const seeds = fused.slice(0, graph.seeds);
  const needsEdges = graph.ranker.needsEdges;
  // A ranker that needs edges gets them from the expansion's read, which then also covers the fused candidates: one edge read serves both.
  const expansion =
    graph.depth > 0
      ? await expandThroughGraph(index, seeds, {
          depth: graph.depth,
          edgeTypes: graph.edgeTypes,
          signal,
          ...(needsEdges ? { alsoAmong: fused.map((c) => c.id) } : {}),
        })
      : undefined;
  lap('expand');
  const columns = await index.columns();
  // Fused hits already carry a similarity (hybridCandidates); reached ones get theirs here.
  const pool = dedupeCandidates([fused, estimateSimilarity(expansion?.reached ?? [], columns, queryVector)]);
  const { kept: current, dropped: droppedAll } = await dropSuperseded(index, pool, { asOf, signal });
  // An entry of a sensitivity not asked for is not named either: not as a step of a graph path, not in a note.
  const named = columns.featuresIfPassing({ sensitivity: filter.sensitivity });
  const dropped = droppedAll.filter((d) => named(d.id) && named(d.supersededBy));
  if (dropped.length > 0)
    notes.push(
      `left out ${dropped.length} superseded entr${dropped.length === 1 ? 'y' : 'ies'}: ${dropped.map((d) => `${d.id} (by ${d.supersededBy})`).join(', ')}`,
    );
  lap('supersede');
  // Filtered and scored on the columns held in memory; rows are read only for what makes the bundle.
  const kept = withFeatures(withoutHiddenPaths(current, named), columns, filter);
  if (sources.keyword) await addKeywordScores(index, words, fused, kept, filter);
  const edges = needsEdges
    ? (expansion?.edges ??
      (await index.edgesAmong(
        kept.map((c) => c.id),
        graph.edgeTypes,
      )))
    : [];
  throwIfAborted(signal);
  const graphScores = graph.ranker.score({
    candidates: kept,
    seeds: new Map(seeds.map((s) => [s.id, s.fused ?? s.similarity])),
    edges,
    weights: resolveWeights(scoring.weights),
  });
  const effectiveness = await index.effectiveness();
  const now = (asOf ?? new Date()).getTime();
  const taskRatings = await ratingsForTask(effectiveness, kept, { task: words, vector: queryVector, embedder, now, signal });
  let scored = scoreCandidates(kept, {
    weights: scoring.weights,
    now: asOf,
    graphScores,
    combination: scoring.combination,
    effectiveness: (id, f) => effectiveness.forRanking(id, f.source, f.coreId, now),
    taskRatings: (id) => taskRatings.get(id) ?? [],
  });
  if (scoring.diversity > 0) {
    const vectors = new Map(
      scored.slice(0, maxEntries * 3).flatMap((c) => {
        const v = columns.vector(c.id);
        return v ? [[c.id, v] as const] : [];
      }),
    );
    scored = diversify(scored.slice(0, maxEntries * 3), vectors, scoring.diversity);
  }
  lap('score');
  let entries: ScoredEntry[];
  const reranker = recipe.reranker?.kind === 'llm' ? llmRelevance(chat!, recipe.reranker.options) : recipe.reranker?.reranker;
  if (reranker) {
    const offered = await readWithinBudget(async (ids) => (await index.read(ids)).map((r) => r.entry), scored, {
      maxEntries: reranker.offered,
      signal,
    });
    const reranked = await rerankOrExplain(reranker, task, offered, signal);
    entries = fitBudget(reranked.kept, maxEntries, maxTokens);
    notes.push(...reranked.notes);
    lap(recipe.reranker?.kind === 'llm' ? 'llm' : 'rerank');
  } else {
    // A reranker decides what matters itself; without one, the bundle ends where the evidence does.
    // A weak match keeps the few best, unless the caller scoped the task to cores: then it was asked
    // of them, the doubt is which entries, not whether, and the cut decides (docs/pipeline.md).
    const withEvidence = recipe.budget.evidenceCut ? cutAtEvidence(scored, EVIDENCE_CUT) : scored;
    const fewBest = recipe.budget.evidenceCut && weak && judged.strength === 'weak' && !filter.cores;
    entries = await readWithinBudget(async (ids) => (await index.read(ids)).map((r) => r.entry), withEvidence, {
      maxEntries: fewBest ? Math.min(maxEntries, EVIDENCE_CUT.weakMatchEntries) : maxEntries,
      maxTokens,
      signal,
    });
    lap('read');
  }
  const code = recipe.attachCode
    ? await attachCode(
        index,
        entries.map((s) => s.entry.id),
        signal,
      )
    : { codeRefs: [], goldenPaths: [] };
  if (recipe.attachCode) {
    const used = entries.reduce((sum, s) => sum + s.tokens, 0);
    code.codeRefs = await codeForBundle(index, words, code.codeRefs, {
      max: DEFAULTS.codeSearch.maxCodeRefs,
      ...(maxTokens !== undefined ? { tokens: Math.max(0, maxTokens - used) } : {}),
      signal,
    });
  }
  lap('code');
  if (fused.length === 0)
    notes.push(`nothing matched the task's words or reached similarity ${threshold} (searched ${stage1} vector candidates)`);
  return {
    task,
    bundleId: `b_${randomBytes(8).toString('hex')}`,
    entries,
    ...code,
    relatedDecisions: entries.filter((s) => s.entry.entryType === 'decision'),
    timings,
    cacheHit: false,
    notes,
    ...(weak && entries.length > 0 ? { lowConfidence: true as const, matchStrength: judged.strength as 'weak' | 'none' } : {}),
    ...(queryVector ? {} : { degraded: ['vectors' as const] }),
  };
}

/** Why a bundle is low-confidence, for its notes. */
function relevanceNote(j: RelevanceJudgement): string {
  const chance =
    j.share > j.floor && j.chance < 1
      ? `, but chance gives ${(j.chance * 100).toPrecision(2)}% of unrelated tasks a match as good, too many in a store of this size`
      : `, not above the ${(j.floor * 100).toFixed(0)}% chance reaches in this store`;
  const match = `the best keyword match covers ${(j.share * 100).toFixed(0)}% of the weight of its words this memory holds${chance}`;
  const held = j.known < 1 ? ` (they carry ${(j.known * 100).toFixed(0)}% of its words' weight)` : '';
  return j.strength === 'none'
    ? `low confidence, nothing relevant: no entry is named by the task, none of its words is specific to this memory, and ${match}${held}`
    : `low confidence, weak matches: no entry is named by the task and ${match}${held}; it shares words specific to this memory (${j.specific.slice(0, 5).join(', ')}), so its best entries are kept, marked as weak`;
}

/** The reranker's choice; on its failure (not the caller's abort), the offered order with a note. */
async function rerankOrExplain(
  reranker: Reranker,
  task: string,
  offered: ScoredEntry[],
  signal: AbortSignal | undefined,
): Promise<{ kept: ScoredEntry[]; notes: string[] }> {
  try {
    const { kept, notes } = await reranker.rerank(task, offered, signal);
    const known = new Set(offered.map((s) => s.entry.id));
    if (!Array.isArray(kept) || kept.some((s) => !known.has(s?.entry?.id))) throw new Error('it returned entries it was not offered');
    return { kept, notes: Array.isArray(notes) ? notes : [] };
  } catch (e) {
    if (signal?.aborted || (e instanceof Error && e.name === 'AbortError')) throw e;
    return { kept: offered, notes: [`reranker ${reranker.name} failed (${(e as Error).message}); kept the order by score`] };
  }
}
