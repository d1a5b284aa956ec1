/**
 * Every option a search takes, documented once, and the one table that checks them. The engine's
 * methods, the CLI, config and the MCP tools all go through `checkSearchOption`, so a value is
 * refused with the same words wherever it came from. Defaults are not here: they live in the
 * presets (recipe/presets.ts), since they differ by kind of search.
 */
import { optionNames } from '../model/options.js';
import {
  CONFIDENCE_LEVELS,
  ENTRY_EDGE_TYPES,
  SENSITIVITY_LEVELS,
  type Confidence,
  type EntryEdgeType,
  type Sensitivity,
} from '../model/types.js';
import { RECORD_ENTRY_TYPES, type EntryFilter } from '../model/entryFilter.js';
import type { FusionMethod, FusionOptions } from '../retrieve/fuse.js';
import { checkWeights, SCORE_COMBINATIONS, type ScoreCombination, type ScoringWeights } from '../retrieve/score.js';
import type { RelevanceFilterOptions } from '../llm/relevanceFilter.js';
import type { Reranker } from '../model/types.js';
import { GRAPH_RANKERS, type GraphRanker } from '../retrieve/graphRanker.js';
import { checkOptionNames } from '../model/options.js';
import { abortSignal, date, flag, int, listOf, nonEmptyString, oneOf, refuse, share, type Check } from '../model/optionChecks.js';

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

/**
 * Every option of every search, each with one meaning. A method takes the ones its preset lists
 * (its options type is a `Pick` of this one); defaults are its preset's (docs/api.md has the table).
 */
export interface SearchOptions extends SearchFilterOptions {
  /** Hits at most, for the searches that return a list. Default 10. */
  limit?: number;
  /** Entries in a context bundle at most. Default 12. */
  maxEntries?: number;
  /** Token budget for a bundle's entry text (title + content, ≈ 4 chars a token). Default: none. */
  maxTokens?: number;
  /**
   * Minimum cosine similarity for a vector hit. Default −1 (none) for the searches, 0.2 for a
   * context, whose graph expansion would otherwise start from noise.
   */
  threshold?: number;
  /**
   * How many candidates each source's first stage keeps: nearest small vectors (stage 1 of the
   * two-stage search, reranked on the full vectors), keyword hits and mentions. Default 100; for
   * `matryoshkaSearch`, measured on the store (see MatryoshkaSearchOptions).
   */
  candidates?: number;
  /** Checked against the stored small-vector length (set per database by `smallDimensions`). */
  smallDims?: number;
  /** Use BM25 keyword search beside vectors. Default true. */
  keyword?: boolean;
  /** Entries whose title or alias the text names join the candidates (a list fused at weight 2). */
  mentions?: boolean;
  /**
   * How the vector, keyword and mention lists are fused: a method name or `{ method, weights, k }`.
   * 'rrf': Σ weight / (k + rank); 'weighted': Σ weight × the list's score min-max normalised.
   * `weights` in list order (vector, keyword, mentions, changed code); a weight not given keeps
   * its default (1, 1, 2, 3; for `hybridSearch` weighted, 0.3 for vectors).
   */
  fusion?: FusionMethod | FusionOptions;
  /** The fusion's [vector, keyword] weights (also `fusion.weights`). */
  fusionWeights?: [number, number];
  /** RRF constant. Default 60. Also `fusion.k`. */
  k?: number;
  /** A core always searched besides `cores` (the project's own memory). */
  projectCore?: string;
  /** Best fused hits that seed the graph expansion. Default 4. */
  seeds?: number;
  /** Hops from a seed. Default 2 (0 turns expansion off). */
  depth?: number;
  /** Entry edges to expand over. Default RELATED and DEPENDS_ON. */
  relationTypes?: EntryEdgeType[];
  /**
   * How the graph counts in the score: 'pagerank' (default: personalised PageRank from the seeds
   * over the candidates' subgraph, so an entry several seeds reach ranks higher), 'proximity'
   * (seed similarity decayed per hop and edge type), or a GraphRanker of yours.
   */
  graphRanking?: keyof typeof GRAPH_RANKERS | GraphRanker;
  /** Override scoring weights (see ScoringWeights). */
  scoringWeights?: Partial<ScoringWeights>;
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
   * When no entry is named by the task (or on code a change touches), the share of the task's
   * keyword weight its best keyword hit must match for the bundle to count as relevant; below it
   * the bundle is `lowConfidence` and its prompt block says there is no relevant memory. Default:
   * the share chance reaches in this store, measured on it (retrieve/relevance.ts); the other
   * tests there (words held together, how often chance gives such a match in a store this size)
   * apply whatever the floor. `false`: never.
   */
  relevanceFloor?: number | false;
  /**
   * End the bundle where the evidence ends (retrieve/evidenceCut.ts): an entry scoring under a share
   * of the best, or after a drop, or with no evidence of its own, ends it; `maxEntries` and
   * `maxTokens` stay upper bounds. Default true for buildTaskContext, false for findWithContext.
   */
  evidenceCut?: boolean;
  /**
   * Let an LLM keep the entries that matter: the best `overRetrieve` (50) by score are offered,
   * at most `maxSelect` (10) kept in the model's order. Any failure falls back to the top by score
   * with a note. `true` uses the engine's configured LLM.
   */
  llmFilter?: boolean | RelevanceFilterOptions;
  /** Reorder or trim the scored entries with your own Reranker (a cross-encoder, say); not with `llmFilter`. */
  reranker?: Reranker;
  /** Attach code references and golden paths. Default true. */
  includeCode?: boolean;
  /**
   * When the embedder fails (a server down, a timeout), throw rather than answer from keywords,
   * mentions and the graph with a note that vectors were unavailable. Default false.
   */
  strict?: boolean;
  signal?: AbortSignal;
}

const weightList =
  (min: number, max: number, shape: string): Check =>
  (name, v, path = name) => {
    if (!Array.isArray(v) || v.length < min || v.length > max || !v.every((w) => typeof w === 'number' && Number.isFinite(w) && w >= 0))
      refuse(path, v, [shape], `${name} must be ${shape}, all ≥ 0`);
  };

const fusionWeights = weightList(1, 4, 'a list of up to 4 weights (vector, keyword, mentions, code)');

const fusionMethod: Check = (name, v, path = name) => {
  if (v !== 'rrf' && v !== 'weighted') refuse(path, v, ['rrf', 'weighted'], `${name} must be rrf or weighted, got ${JSON.stringify(v)}`);
};

const fusion: Check = (name, v, path = name) => {
  if (typeof v === 'string') return fusionMethod(name, v, path);
  checkOptionNames(path, v, ['method', 'weights', 'k']);
  const o = v as FusionOptions;
  if (o.method !== undefined) fusionMethod(`${name}.method`, o.method, `${path}.method`);
  if (o.weights !== undefined) fusionWeights(`${name}.weights`, o.weights, `${path}.weights`);
  if (o.k !== undefined) rrfConstant(`${name}.k`, o.k, `${path}.k`);
};

const rrfConstant: Check = (name, v, path = name) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    refuse(path, v, ['a number ≥ 0'], `${name} must be a number ≥ 0, got ${JSON.stringify(v)}`);
};

const llmFilter: Check = (name, v, path = name) => {
  if (typeof v === 'boolean') return;
  if (typeof v !== 'object' || v === null)
    refuse(
      name,
      v,
      ['true', 'false', '{ model, maxSelect, overRetrieve, timeoutMs }'],
      `${name} must be true, false or { model, maxSelect, overRetrieve, timeoutMs }`,
    );
  checkOptionNames(path, v, ['model', 'maxSelect', 'overRetrieve', 'timeoutMs']);
  const o = v as RelevanceFilterOptions;
  if (o.model !== undefined && (typeof o.model !== 'string' || o.model === ''))
    refuse(`${path}.model`, o.model, ['a non-empty string'], `${name}.model must be a non-empty string`);
  if (o.maxSelect !== undefined) int(1, 200)(`${name}.maxSelect`, o.maxSelect, `${path}.maxSelect`);
  if (o.overRetrieve !== undefined) int(1, 500)(`${name}.overRetrieve`, o.overRetrieve, `${path}.overRetrieve`);
  if (o.timeoutMs !== undefined) int(1, 600_000)(`${name}.timeoutMs`, o.timeoutMs, `${path}.timeoutMs`);
};

/** A plug-in object (a GraphRanker, a Reranker): a non-empty `name`, the method `method`, and what `also` asks. */
function isExtension(v: unknown, method: string, also: (o: Record<string, unknown>) => boolean): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o[method] === 'function' && typeof o.name === 'string' && o.name !== '' && also(o);
}

/** One check per option: the table every boundary shares. */
const CHECKS: { [K in keyof SearchOptions]-?: Check } = {
  cores: listOf(nonEmptyString, 'non-empty strings'),
  entryTypes: listOf(nonEmptyString, 'non-empty strings'),
  minConfidence: oneOf(CONFIDENCE_LEVELS),
  tags: listOf(nonEmptyString, 'non-empty strings'),
  sensitivity: listOf(oneOf(SENSITIVITY_LEVELS), SENSITIVITY_LEVELS.join(', ')),
  minImportance: int(1, 10),
  createdAfter: date,
  createdBefore: date,
  asOf: date,
  limit: int(1, 10_000),
  maxEntries: int(1, 10_000),
  maxTokens: int(1, 10_000_000),
  threshold: (name, v, path = name) => {
    if (typeof v !== 'number' || !(v >= -1 && v <= 1))
      refuse(path, v, ['a number from -1 to 1'], `${name} is a cosine similarity from -1 to 1, got ${JSON.stringify(v)}`);
  },
  candidates: int(1, 10_000),
  smallDims: int(1, 65_536),
  keyword: flag,
  mentions: flag,
  fusion,
  fusionWeights: weightList(2, 2, '[vectorWeight, keywordWeight]'),
  k: rrfConstant,
  projectCore: (name, v, path = name) => {
    if (typeof v !== 'string' || v === '') refuse(path, v, ['a non-empty string'], `${name} must be a non-empty string`);
  },
  seeds: int(1, 10_000),
  depth: int(0, 10),
  relationTypes: listOf(oneOf(ENTRY_EDGE_TYPES), ENTRY_EDGE_TYPES.join(', ')),
  graphRanking: (name, v, path = name) => {
    if (typeof v === 'string') return oneOf(Object.keys(GRAPH_RANKERS))(name, v, path);
    if (!isExtension(v, 'score', (o) => typeof o.needsEdges === 'boolean'))
      refuse(
        path,
        v,
        [...Object.keys(GRAPH_RANKERS), 'a GraphRanker: { name, needsEdges, score(input) }'],
        `${name} must be pagerank, proximity or a GraphRanker: { name, needsEdges, score(input) }`,
      );
  },
  scoringWeights: (_name, v, path = _name) => checkWeights(path, v),
  diversity: share,
  evidenceCut: flag,
  scoreCombination: oneOf(SCORE_COMBINATIONS),
  relevanceFloor: (name, v, path = name) => {
    if (v !== false && !(typeof v === 'number' && v >= 0 && v <= 1))
      refuse(path, v, ['a number from 0 to 1', 'false'], `${name} must be a number from 0 to 1, or false, got ${JSON.stringify(v)}`);
  },
  llmFilter,
  reranker: (name, v, path = name) => {
    if (!isExtension(v, 'rerank', (o) => Number.isInteger(o.offered) && (o.offered as number) >= 1 && (o.offered as number) <= 500))
      refuse(
        path,
        v,
        ['a Reranker: { name, offered (1–500), rerank(task, entries, signal) }'],
        `${name} must be a Reranker: { name, offered (1–500), rerank(task, entries, signal) }`,
      );
  },
  includeCode: flag,
  strict: flag,
  signal: abortSignal,
};

/** Every search option's name. */
export const SEARCH_OPTIONS = Object.keys(CHECKS) as (keyof SearchOptions)[];

/**
 * Checks one option's value against the table; undefined passes (every option is optional). `name`
 * is how the caller wrote it (`weights`, the former name of `scoringWeights`), and `path` where
 * (`buildTaskContext.weights`): messages say the first, OptionError.option the second.
 */
export function checkSearchOption(option: keyof SearchOptions, value: unknown, name: string = option, path = name): void {
  if (value !== undefined) CHECKS[option](name, value, path);
}

/** The sensitivity levels a read may return: default public and internal, secrets only when asked for. */
export function resolveSensitivity(v: unknown): Sensitivity[] {
  if (v === undefined) return ['public', 'internal'];
  CHECKS.sensitivity('sensitivity', v);
  return v as Sensitivity[];
}

/** Checks the filter options; refuses a time range that is empty. */
export function checkFilter(o: SearchFilterOptions, where?: string): void {
  for (const name of SEARCH_FILTER_OPTIONS as (keyof SearchFilterOptions)[])
    checkSearchOption(name, o[name], name, where ? `${where}.${name}` : name);
  if (o.createdAfter && o.createdBefore && o.createdBefore.getTime() <= o.createdAfter.getTime())
    refuse('createdBefore', o.createdBefore, ['a time later than createdAfter'], 'createdBefore must be later than createdAfter');
}

/** Validates the filter options and turns them into a store filter, as of now unless `asOf`. */
export function resolveFilter(o: SearchFilterOptions, extraCore?: string): EntryFilter {
  checkFilter(o);
  return entryFilterOf(o, extraCore);
}

/** Filter options already checked (a recipe's) as a store filter, as of now unless `asOf`. */
export function entryFilterOf(o: Readonly<SearchFilterOptions>, extraCore?: string): EntryFilter {
  return {
    ...(o.cores ? { cores: extraCore ? [...o.cores, extraCore] : o.cores } : {}),
    ...(o.entryTypes ? { entryTypes: o.entryTypes } : {}),
    notEntryTypes: RECORD_ENTRY_TYPES,
    ...(o.minConfidence !== undefined ? { minConfidence: o.minConfidence } : {}),
    ...(o.tags ? { tags: o.tags } : {}),
    sensitivity: o.sensitivity ?? ['public', 'internal'],
    ...(o.minImportance !== undefined ? { minImportance: o.minImportance } : {}),
    ...(o.createdAfter ? { createdAfter: o.createdAfter } : {}),
    ...(o.createdBefore ? { createdBefore: o.createdBefore } : {}),
    validAt: o.asOf ?? new Date(),
  };
}
