/**
 * buildTaskContext: the only place that knows the order of the retrieval stages.
 * embed → two-stage vector + keyword + mention hits, fused → seeds → graph expansion → dedupe →
 * drop superseded → filter and score on the columns in memory (+ MMR) → read the entries that fit
 * the budget → code references and golden paths.
 */
import type { Embedder } from '../embed/embedder.js';
import { invalidInput, MemcoreError, throwIfAborted } from '../model/errors.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import {
  CONFIDENCE_LEVELS,
  ENTRY_EDGE_TYPES,
  SENSITIVITY_LEVELS,
  type Confidence,
  type ContextBundle,
  type EntryEdgeType,
  type ScoredEntry,
  type Sensitivity,
} from '../model/types.js';
import type { Stores } from '../store/stores.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { EntryColumns } from '../store/resident/entryColumns.js';
import { attachCode } from './attachCode.js';
import { dedupeCandidates, makeHit, type Hit } from './candidate.js';
import { dropSuperseded } from './dropSuperseded.js';
import { expandThroughGraph } from './expandThroughGraph.js';
import {
  checkWeights,
  diversify,
  resolveWeights,
  SCORE_COMBINATIONS,
  scoreCandidates,
  type ScorableHit,
  type ScoreCombination,
  type ScoringWeights,
} from './score.js';
import { fitBudget, readWithinBudget } from './readWithinBudget.js';
import { personalizedPageRank } from './personalizedPageRank.js';
import { FUSION_OPTIONS, type FusionOptions } from './fuse.js';
import { judgeRelevance } from './relevance.js';
import { randomBytes } from 'node:crypto';
import { hybridCandidates } from './hybridCandidates.js';
import { addKeywordScores, keywordQuery } from './keywordCandidates.js';
import { estimateSimilarity } from './estimateSimilarity.js';
import type { JsonChat } from '../llm/chatClient.js';
import { filterByRelevance, RELEVANCE_FILTER_OPTIONS, type RelevanceFilterOptions } from '../llm/relevanceFilter.js';
import { capNote, EMBEDDED_CHARS, SEARCHED_CHARS } from './queryText.js';
import { capText } from '../embed/chunkText.js';

/** Filters shared by every search. */
export interface SearchFilterOptions {
  /** Only these memory cores. Default: all. */
  cores?: string[];
  /** Only these entry types (lesson, decision, …). */
  entryTypes?: string[];
  /** At least this confidence. */
  minConfidence?: Confidence;
  /** Entries carrying at least one of these tags. */
  tags?: string[];
  /** Sensitivity levels allowed. Default `['public', 'internal']`: secrets only when asked for. */
  sensitivity?: Sensitivity[];
  /** Importance at least this (1–10). */
  minImportance?: number;
  /** Only entries created at or after this time. */
  createdAfter?: Date;
  /** Only entries created before this time. */
  createdBefore?: Date;
  /**
   * Answer as the memory stood at this time: entries in effect then (from `valid_from`, or from
   * `created_at` when it has none, until `valid_to`), and superseded ones whose successor took
   * effect later. Default now. docs/api.md, "Time", has the table of cases.
   */
  asOf?: Date;
}

export const SEARCH_FILTER_OPTIONS = optionNames<SearchFilterOptions>()([
  'cores',
  'entryTypes',
  'minConfidence',
  'tags',
  'sensitivity',
  'minImportance',
  'createdAfter',
  'createdBefore',
  'asOf',
]);

export interface TaskContextOptions extends SearchFilterOptions {
  /** A core always searched besides `cores` (the project's own memory). */
  projectCore?: string;
  /** Minimum cosine similarity (1 − cosine distance) for a vector hit. Default 0.2. */
  threshold?: number;
  /** Stage-1 over-retrieval: vector_small candidates and keyword hits. Default 100. */
  candidates?: number;
  /** Use BM25 keyword search beside vectors. Default true. */
  keyword?: boolean;
  /** Entries whose title or alias the task names join the candidates (a third fused list). Default true. */
  mentions?: boolean;
  /** How the vector, keyword and mention lists are fused. Default RRF (k 60), weights [1, 1, 2]. */
  fusion?: FusionOptions;
  /** Best fused hits that seed the graph expansion. Default 4. */
  seeds?: number;
  /** Hops from a seed. Default 2 (0 turns expansion off). */
  depth?: number;
  /** Entry edges to expand over. Default RELATED and DEPENDS_ON. */
  relationTypes?: EntryEdgeType[];
  /** Entries in the bundle at most. Default 12. */
  maxEntries?: number;
  /** Token budget for entry text (title + content, ≈ 4 chars a token). Default: none. */
  maxTokens?: number;
  /** Attach code references and golden paths. Default true. */
  includeCode?: boolean;
  /** Override scoring weights (see ScoringWeights). */
  scoringWeights?: Partial<ScoringWeights>;
  /** The former name of `scoringWeights`, still accepted (not with it). */
  weights?: Partial<ScoringWeights>;
  /**
   * How the graph counts in the score: 'pagerank' (default: personalised PageRank from the seeds
   * over the candidates' subgraph, so an entry several seeds reach ranks higher) or 'proximity'
   * (seed similarity decayed per hop and edge type).
   */
  graphRanking?: 'proximity' | 'pagerank';
  /** MMR diversity, 0 (off, default) to 1. */
  diversity?: number;
  /**
   * How importance and recency meet the evidence that an entry is relevant (similarity, keywords,
   * mentions, graph, confidence): 'sum' (default) adds them as weighted terms
   * (`scoringWeights.importance`, `scoringWeights.recency`); 'product' multiplies relevance by importance
   * (1–10 as 0.1–1) and by recency (1 when new, halving every `scoringWeights.recencyHalfLifeDays`), the
   * generative-agents form, in which an old or trivial entry needs far more evidence to rank.
   * The product equalled the sum on three development sets and lost 3.9 R@10 on LoCoMo, whose
   * entries carry dates (docs/evaluation.md).
   */
  scoreCombination?: ScoreCombination;
  /**
   * When the embedder fails (a server down, a timeout), throw rather than answer from keywords,
   * mentions and the graph with a note that vectors were unavailable. Default false.
   */
  strict?: boolean;
  /**
   * When no entry is named by the task (or on code a change touches), the share of the task's
   * keyword weight its best keyword hit must match for the bundle to count as relevant; below it
   * the bundle is `lowConfidence` and its prompt block says there is no relevant memory. Default:
   * the share chance reaches in this store, measured on it (retrieve/relevance.ts). `false`: never.
   */
  relevanceFloor?: number | false;
  /**
   * Let an LLM keep the entries that matter: the best `overRetrieve` (50) by score are offered,
   * at most `maxSelect` (10) kept in the model's order. Any failure falls back to the top by score
   * with a note. `true` uses the engine's configured LLM.
   */
  llmFilter?: boolean | RelevanceFilterOptions;
  signal?: AbortSignal;
}

export const TASK_CONTEXT_OPTIONS = optionNames<TaskContextOptions>()([
  ...(SEARCH_FILTER_OPTIONS as (keyof SearchFilterOptions)[]),
  'projectCore',
  'threshold',
  'candidates',
  'keyword',
  'mentions',
  'fusion',
  'seeds',
  'depth',
  'relationTypes',
  'maxEntries',
  'maxTokens',
  'includeCode',
  'scoringWeights',
  'weights',
  'graphRanking',
  'diversity',
  'scoreCombination',
  'strict',
  'relevanceFloor',
  'llmFilter',
  'signal',
]);

function positiveInt(name: string, v: unknown, fallback: number, min = 1, max = 10_000): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw invalidInput(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return v;
}

function stringList(name: string, v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s === ''))
    throw invalidInput(`${name} must be a list of non-empty strings`);
  return v as string[];
}

function oneOf<T extends string>(name: string, v: unknown, allowed: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if (!allowed.includes(v as T)) throw invalidInput(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

function date(name: string, v: unknown): Date | undefined {
  if (v === undefined) return undefined;
  if (!(v instanceof Date) || Number.isNaN(v.getTime())) throw invalidInput(`${name} must be a valid Date, got ${JSON.stringify(v)}`);
  return v;
}

/** The sensitivity levels a read may return: default public and internal, secrets only when asked for. */
export function resolveSensitivity(v: unknown): Sensitivity[] {
  if (v === undefined) return ['public', 'internal'];
  if (!Array.isArray(v)) throw invalidInput(`sensitivity must be a list of ${SENSITIVITY_LEVELS.join(', ')}`);
  v.forEach((s) => oneOf('sensitivity', s, SENSITIVITY_LEVELS));
  return v as Sensitivity[];
}

/** Validates the filter options and turns them into a store filter. */
export function resolveFilter(o: SearchFilterOptions, extraCore?: string): EntryFilter {
  const asOf = date('asOf', o.asOf);
  const createdAfter = date('createdAfter', o.createdAfter);
  const createdBefore = date('createdBefore', o.createdBefore);
  if (createdAfter && createdBefore && createdBefore.getTime() <= createdAfter.getTime())
    throw invalidInput('createdBefore must be later than createdAfter');
  const minImportance = o.minImportance === undefined ? undefined : positiveInt('minImportance', o.minImportance, 1, 1, 10);
  const cores = stringList('cores', o.cores);
  const sensitivity = resolveSensitivity(o.sensitivity);
  return {
    ...(cores ? { cores: extraCore ? [...cores, extraCore] : cores } : {}),
    ...(o.entryTypes ? { entryTypes: stringList('entryTypes', o.entryTypes)! } : {}),
    ...(o.minConfidence !== undefined ? { minConfidence: oneOf('minConfidence', o.minConfidence, CONFIDENCE_LEVELS)! } : {}),
    ...(o.tags ? { tags: stringList('tags', o.tags)! } : {}),
    sensitivity,
    ...(minImportance !== undefined ? { minImportance } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    validAt: asOf ?? new Date(),
  };
}

export function resolveThreshold(v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !(v >= -1 && v <= 1))
    throw invalidInput(`threshold is a cosine similarity from -1 to 1, got ${JSON.stringify(v)}`);
  return v;
}

/** Every option resolved and checked, so a bad value fails before any I/O. */
export function resolveTaskContextOptions(
  o: TaskContextOptions,
  where = 'buildTaskContext',
  allowed: readonly string[] = TASK_CONTEXT_OPTIONS,
) {
  checkOptionNames(where, o, allowed);
  checkOptionNames(`${where}.fusion`, o.fusion, FUSION_OPTIONS);
  if (o.weights !== undefined && o.scoringWeights !== undefined)
    throw invalidInput(`${where}: give scoringWeights (weights is its former name), not both`);
  const scoringWeights = o.scoringWeights ?? o.weights;
  if (scoringWeights !== undefined)
    checkWeights(`${where}.${o.scoringWeights !== undefined ? 'scoringWeights' : 'weights'}`, scoringWeights);
  if (o.llmFilter !== undefined && typeof o.llmFilter === 'object')
    checkOptionNames(`${where}.llmFilter`, o.llmFilter, RELEVANCE_FILTER_OPTIONS);
  if (o.strict !== undefined && typeof o.strict !== 'boolean')
    throw invalidInput(`strict must be true or false, got ${JSON.stringify(o.strict)}`);
  if (o.projectCore !== undefined && (typeof o.projectCore !== 'string' || o.projectCore === ''))
    throw invalidInput('projectCore must be a non-empty string');
  const relationTypes = o.relationTypes ?? ['RELATED', 'DEPENDS_ON'];
  relationTypes.forEach((t) => oneOf('relationTypes', t, ENTRY_EDGE_TYPES));
  if (o.fusion?.method !== undefined) oneOf('fusion.method', o.fusion.method, ['rrf', 'weighted'] as const);
  if (
    o.relevanceFloor !== undefined &&
    o.relevanceFloor !== false &&
    !(typeof o.relevanceFloor === 'number' && o.relevanceFloor >= 0 && o.relevanceFloor <= 1)
  ) {
    throw invalidInput(`relevanceFloor must be a number from 0 to 1, or false, got ${JSON.stringify(o.relevanceFloor)}`);
  }
  if (o.diversity !== undefined && (typeof o.diversity !== 'number' || !(o.diversity >= 0 && o.diversity <= 1)))
    throw invalidInput(`diversity must be a number from 0 to 1, got ${JSON.stringify(o.diversity)}`);
  return {
    filter: resolveFilter(o, o.projectCore),
    scoringWeights,
    threshold: resolveThreshold(o.threshold, 0.2),
    candidates: positiveInt('candidates', o.candidates, 100),
    seeds: positiveInt('seeds', o.seeds, 4),
    depth: positiveInt('depth', o.depth, 2, 0, 10),
    maxEntries: positiveInt('maxEntries', o.maxEntries, 12),
    maxTokens: o.maxTokens === undefined ? undefined : positiveInt('maxTokens', o.maxTokens, 0, 1, 10_000_000),
    relationTypes,
    keyword: o.keyword !== false,
    mentions: o.mentions !== false,
    fusion: o.fusion,
    diversity: o.diversity ?? 0,
    graphRanking: o.graphRanking === undefined ? 'pagerank' : oneOf('graphRanking', o.graphRanking, ['proximity', 'pagerank'] as const)!,
    scoreCombination: o.scoreCombination === undefined ? 'sum' : oneOf('scoreCombination', o.scoreCombination, SCORE_COMBINATIONS)!,
    strict: o.strict === true,
    relevanceFloor: o.relevanceFloor,
    includeCode: o.includeCode !== false,
    llmFilter: resolveLlmFilter(o.llmFilter),
  };
}

function resolveLlmFilter(v: TaskContextOptions['llmFilter']): RelevanceFilterOptions | undefined {
  if (v === undefined || v === false) return undefined;
  if (v === true) return {};
  if (typeof v !== 'object' || v === null)
    throw invalidInput('llmFilter must be true, false or { model, maxSelect, overRetrieve, timeoutMs }');
  if (v.model !== undefined && (typeof v.model !== 'string' || v.model === ''))
    throw invalidInput('llmFilter.model must be a non-empty string');
  return {
    ...(v.model ? { model: v.model } : {}),
    maxSelect: positiveInt('llmFilter.maxSelect', v.maxSelect, 10, 1, 200),
    overRetrieve: positiveInt('llmFilter.overRetrieve', v.overRetrieve, 50, 1, 500),
    timeoutMs: positiveInt('llmFilter.timeoutMs', v.timeoutMs, 8_000, 1, 600_000),
  };
}

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

export async function buildTaskContext(
  stores: Stores,
  embedder: Embedder,
  task: string,
  options: TaskContextOptions = {},
  chat?: JsonChat,
  /** Entries on code a change touches (contextForDiff): a fourth fused list. */
  codeHits?: Hit[],
): Promise<ContextBundle> {
  if (typeof task !== 'string' || task.trim() === '') throw invalidInput('task must be a non-empty string');
  const o = resolveTaskContextOptions(options);
  if (o.llmFilter && !chat)
    throw invalidInput('llmFilter needs an LLM: configure llm.baseURL and llm.model (MEMCORE_LLM_BASE_URL, MEMCORE_LLM_MODEL)');
  const signal = options.signal;

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
  const queryVector = await embedOrExplain(embedder, capText(task, EMBEDDED_CHARS), { strict: o.strict, signal, notes });
  lap('embed');
  const { fused, stage1 } = await hybridCandidates(stores, words, queryVector, {
    filter: o.filter,
    candidates: o.candidates,
    threshold: o.threshold,
    keyword: o.keyword,
    mentions: o.mentions,
    fusion: o.fusion,
    signal,
    ...(codeHits ? { codeHits } : {}),
  });
  const judged =
    o.relevanceFloor === false
      ? undefined
      : judgeRelevance(o.keyword ? await stores.keywords() : undefined, keywordQuery(words), fused, {
          ...(typeof o.relevanceFloor === 'number' ? { floor: o.relevanceFloor } : {}),
          ...(o.filter.cores ? { groups: o.filter.cores } : {}),
        });
  if (judged && !judged.relevant && fused.length > 0) {
    notes.push(
      `low confidence: no entry is named by the task, and the best keyword match covers ${(judged.share * 100).toFixed(0)}% of its words' weight, not above the ${(judged.floor * 100).toFixed(0)}% chance reaches in this store`,
    );
  }
  lap('candidates');
  const seeds = fused.slice(0, o.seeds);
  const pagerank = o.graphRanking === 'pagerank';
  // With PageRank the expansion also reads the edges among the fused candidates: one edge read serves both.
  const expansion =
    o.depth > 0
      ? await expandThroughGraph(stores.graph, seeds, {
          depth: o.depth,
          edgeTypes: o.relationTypes,
          signal,
          ...(pagerank ? { alsoAmong: fused.map((c) => c.id) } : {}),
        })
      : undefined;
  lap('expand');
  const columns = await stores.columns();
  // Fused hits already carry a similarity (hybridCandidates); reached ones get theirs here.
  const pool = dedupeCandidates([fused, estimateSimilarity(expansion?.reached ?? [], columns, queryVector)]);
  const { kept: current, dropped: droppedAll } = await dropSuperseded(stores.graph, stores.table, pool, { asOf: options.asOf, signal });
  // An entry of a sensitivity not asked for is not named either: not as a step of a graph path, not in a note.
  const named = columns.featuresIfPassing({ sensitivity: o.filter.sensitivity });
  const dropped = droppedAll.filter((d) => named(d.id) && named(d.supersededBy));
  if (dropped.length > 0)
    notes.push(
      `left out ${dropped.length} superseded entr${dropped.length === 1 ? 'y' : 'ies'}: ${dropped.map((d) => `${d.id} (by ${d.supersededBy})`).join(', ')}`,
    );
  lap('supersede');
  // Filtered and scored on the columns held in memory; rows are read only for what makes the bundle.
  const kept = withFeatures(withoutHiddenPaths(current, named), columns, o.filter);
  if (o.keyword) await addKeywordScores(stores, words, fused, kept, o.filter);
  let graphScores: Map<string, number> | undefined;
  if (pagerank) {
    const ids = kept.map((c) => c.id);
    const edges = expansion?.edges ?? (await stores.graph.edgesAmong(ids, o.relationTypes));
    throwIfAborted(signal);
    const seedWeights = new Map(seeds.map((s) => [s.id, s.fused ?? s.similarity]));
    graphScores = personalizedPageRank(ids, edges, seedWeights, { edgeWeights: resolveWeights(o.scoringWeights).edgeWeights });
  }
  const effectiveness = await stores.effectiveness();
  const now = (options.asOf ?? new Date()).getTime();
  let scored = scoreCandidates(kept, {
    weights: o.scoringWeights,
    now: options.asOf,
    graphScores,
    combination: o.scoreCombination,
    effectiveness: (id, f) => effectiveness.forRanking(id, f.source, f.coreId, now),
  });
  if (o.diversity > 0) {
    const vectors = new Map(
      scored.slice(0, o.maxEntries * 3).flatMap((c) => {
        const v = columns.vector(c.id);
        return v ? [[c.id, v] as const] : [];
      }),
    );
    scored = diversify(scored.slice(0, o.maxEntries * 3), vectors, o.diversity);
  }
  lap('score');
  let entries: ScoredEntry[];
  if (o.llmFilter && chat) {
    const offered = await readWithinBudget((ids) => stores.readEntries(ids), scored, {
      maxEntries: o.llmFilter.overRetrieve ?? 50,
      signal,
    });
    const filtered = await filterByRelevance(chat, task, offered, { ...o.llmFilter, signal });
    entries = fitBudget(filtered.kept, o.maxEntries, o.maxTokens);
    notes.push(...filtered.notes);
    lap('llm');
  } else {
    entries = await readWithinBudget((ids) => stores.readEntries(ids), scored, {
      maxEntries: o.maxEntries,
      maxTokens: o.maxTokens,
      signal,
    });
    lap('read');
  }
  const code = o.includeCode
    ? await attachCode(
        stores.graph,
        entries.map((s) => s.entry.id),
        signal,
      )
    : { codeRefs: [], goldenPaths: [] };
  lap('code');
  if (fused.length === 0)
    notes.push(`nothing matched the task's words or reached similarity ${o.threshold} (searched ${stage1} vector candidates)`);
  return {
    task,
    bundleId: `b_${randomBytes(8).toString('hex')}`,
    entries,
    ...code,
    relatedDecisions: entries.filter((s) => s.entry.entryType === 'decision'),
    timings,
    cacheHit: false,
    notes,
    ...(judged && !judged.relevant && entries.length > 0 ? { lowConfidence: true as const } : {}),
    ...(queryVector ? {} : { degraded: ['vectors' as const] }),
  };
}

/**
 * The task's vector, or undefined with a note when the embedder fails (its server down, a
 * timeout) and `strict` is off: keywords, mentions and the graph still answer. An abort, or a
 * failure that is not the embedder's, is thrown.
 */
export async function embedOrExplain(
  embedder: Embedder,
  text: string,
  opts: { strict: boolean; signal?: AbortSignal; notes: string[] },
): Promise<Float32Array | undefined> {
  try {
    const [vector] = await embedder.embed([text], opts.signal);
    return vector;
  } catch (e) {
    if (opts.strict || !(e instanceof MemcoreError) || e.code !== 'EMBEDDING') throw e;
    opts.notes.push(`vectors unavailable, answered from keywords, mentions and the graph only: ${e.message}`);
    return undefined;
  }
}
