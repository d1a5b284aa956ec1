/**
 * The named searches, and the only place search defaults live. `withOverrides(preset, options)`
 * checks a caller's options once (names against the preset's list, values against the one table
 * in searchOptions.ts) and returns a frozen recipe.
 */
import { LLM_FILTER_DEFAULTS } from '../config/defaults.js';
import { OptionError, checkOptionNames } from '../model/options.js';
import type { EntryEdgeType } from '../model/types.js';
import type { FusionMethod, FusionOptions } from '../retrieve/fuse.js';
import { checkFilter, checkSearchOption, SEARCH_FILTER_OPTIONS, type SearchOptions } from './searchOptions.js';
import { GRAPH_RANKERS, type GraphRanker } from '../retrieve/graphRanker.js';
import { PRESET_NAMES, type PresetName, type SearchRecipe, type VectorStage1 } from './searchRecipe.js';

type OptionName = keyof SearchOptions;

interface Preset {
  /** The engine method that runs it, for messages. */
  readonly method: string;
  /** The options a caller may set. */
  readonly accepts: readonly OptionName[];
  /** A former option name still accepted, and the name it became. */
  readonly aliases?: Readonly<Record<string, OptionName>>;
  /** Stage 1 of the vector source, or no vector source. */
  readonly vector: VectorStage1 | 'none';
  /** Expansion, scoring, a budget and code: the run makes a context bundle. */
  readonly context: boolean;
  readonly exactOrder: boolean;
  readonly defaults: Readonly<
    Required<Pick<SearchOptions, 'threshold' | 'candidates' | 'keyword' | 'mentions' | 'strict' | 'includeCode'>> & {
      fusion: FusionMethod;
      /** Per fusion method: the weights of the vector, keyword, mention and code lists. */
      fusionWeights: Readonly<Record<FusionMethod, readonly [number, number, number, number]>>;
      limit: number;
    }
  >;
}

const FILTERS = SEARCH_FILTER_OPTIONS as readonly OptionName[];

/** RRF's constant: a rank's weight is w / (k + rank). */
const RRF_K = 60;
const LIST_RRF = [1, 1, 2, 3] as const;

const LIST_DEFAULTS = {
  limit: 10,
  threshold: -1,
  candidates: 100,
  keyword: false,
  mentions: false,
  strict: true,
  includeCode: false,
  fusion: 'rrf',
  fusionWeights: { rrf: LIST_RRF, weighted: LIST_RRF },
} as const;

const CONTEXT_OPTIONS: readonly OptionName[] = [
  ...FILTERS,
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
  'scoringWeights',
  'graphRanking',
  'diversity',
  'scoreCombination',
  'strict',
  'relevanceFloor',
  'evidenceCut',
  'llmFilter',
  'reranker',
  'signal',
];

const CONTEXT_DEFAULTS = {
  ...LIST_DEFAULTS,
  // Expansion walks from the seeds: a seed of similarity under 0.2 is noise that the walk spreads.
  threshold: 0.2,
  keyword: true,
  mentions: true,
  strict: false,
  includeCode: true,
  limit: 12,
} as const;

/**
 * Where a context bundle ends (retrieve/evidenceCut.ts; option `evidenceCut`): the first `minEntries`
 * are kept, then an entry ends the bundle when it scores under `relativeScore` of the best or
 * `gap` of the best under the entry before it. Measured on bench/relevance/orders-api-tasks.yaml
 * (70 tasks, local model, maxEntries 12): gold kept 95.2% → 89.2%, tokens 588 → 265 a bundle
 * (docs/evaluation.md). A weak-match bundle (matchStrength 'weak') keeps `weakMatchEntries`, unless
 * the task is scoped to cores: then it is cut the same way (docs/pipeline.md, "No relevant memory").
 */
export const EVIDENCE_CUT = { relativeScore: 0.6, gap: 0.2, minEntries: 3, weakMatchEntries: 3 } as const;

/** Defaults of a context's expansion and scoring (presets `find` and `context`). */
const CONTEXT_SHAPE = {
  seeds: 4,
  depth: 2,
  relationTypes: ['RELATED', 'DEPENDS_ON'] as readonly EntryEdgeType[],
  graphRanking: 'pagerank',
  diversity: 0,
  scoreCombination: 'sum',
} as const;

export { LLM_FILTER_DEFAULTS };

export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  semantic: {
    method: 'semanticSearch',
    accepts: [...FILTERS, 'limit', 'threshold', 'signal'],
    vector: 'exact',
    context: false,
    exactOrder: true,
    defaults: LIST_DEFAULTS,
  },
  matryoshka: {
    method: 'matryoshkaSearch',
    accepts: [...FILTERS, 'limit', 'threshold', 'signal', 'candidates', 'smallDims'],
    vector: 'calibrated',
    context: false,
    exactOrder: true,
    defaults: LIST_DEFAULTS,
  },
  keyword: {
    method: 'keywordSearch',
    accepts: [...FILTERS, 'limit', 'signal'],
    vector: 'none',
    context: false,
    exactOrder: false,
    defaults: { ...LIST_DEFAULTS, keyword: true },
  },
  hybrid: {
    method: 'hybridSearch',
    accepts: [...FILTERS, 'limit', 'threshold', 'signal', 'candidates', 'fusion', 'fusionWeights', 'k', 'mentions', 'strict'],
    aliases: { weights: 'fusionWeights' },
    vector: 'candidates',
    context: false,
    exactOrder: false,
    // Weighted 0.3 : 1 measured best with the local embedder (SciFact, docs/evaluation.md).
    defaults: {
      ...LIST_DEFAULTS,
      keyword: true,
      strict: false,
      fusion: 'weighted',
      fusionWeights: { weighted: [0.3, 1, 2, 3], rrf: LIST_RRF },
    },
  },
  find: {
    method: 'findWithContext',
    accepts: CONTEXT_OPTIONS,
    aliases: { weights: 'scoringWeights' },
    vector: 'candidates',
    context: true,
    exactOrder: false,
    defaults: { ...CONTEXT_DEFAULTS, includeCode: false },
  },
  context: {
    method: 'buildTaskContext',
    accepts: [...CONTEXT_OPTIONS, 'includeCode'],
    aliases: { weights: 'scoringWeights' },
    vector: 'candidates',
    context: true,
    exactOrder: false,
    defaults: CONTEXT_DEFAULTS,
  },
};

/** The options a preset accepts, former names included: for option lists and help. */
export function presetOptions(name: PresetName): readonly string[] {
  return ACCEPTED[name];
}

const ACCEPTED = Object.fromEntries(
  PRESET_NAMES.map((name) => [name, Object.freeze([...PRESETS[name].accepts, ...Object.keys(PRESETS[name].aliases ?? {})])]),
) as Record<PresetName, readonly string[]>;

/** `options` with each former name replaced by its new one; both given is an error. */
function withCurrentNames(where: string, preset: Preset, options: Record<string, unknown>): SearchOptions {
  const out = { ...options };
  for (const [old, current] of Object.entries(preset.aliases ?? {})) {
    if (out[old] === undefined) continue;
    if (out[current] !== undefined)
      throw new OptionError(`${where}.${old}`, out[old], [current], `${where}: give ${current} (${old} is its former name), not both`);
    out[current] = out[old];
    delete out[old];
  }
  return out as SearchOptions;
}

/**
 * The preset with the caller's options applied, checked once and frozen. `where` names the method
 * in messages (default the preset's). Throws an OptionError (`{ option, got, allowed }`) for an
 * unknown option, a bad value, or options that contradict each other.
 */
export function withOverrides(name: PresetName, options: object = {}, where?: string): SearchRecipe {
  if (!PRESET_NAMES.includes(name))
    throw new OptionError('recipe', name, PRESET_NAMES, `recipe must be one of ${PRESET_NAMES.join(', ')}, got ${JSON.stringify(name)}`);
  const preset = PRESETS[name];
  const method = where ?? preset.method;
  checkOptionNames(method, options, presetOptions(name));
  for (const [key, value] of Object.entries(options))
    checkSearchOption(preset.aliases?.[key] ?? (key as OptionName), value, key, `${method}.${key}`);
  const o = withCurrentNames(method, preset, options as Record<string, unknown>);
  checkFilter(o, method);
  const d = preset.defaults;

  const fusionGiven: FusionOptions = typeof o.fusion === 'string' ? { method: o.fusion } : (o.fusion ?? {});
  if (o.fusionWeights !== undefined && fusionGiven.weights !== undefined)
    throw new OptionError(
      `${method}.fusionWeights`,
      o.fusionWeights,
      ['fusionWeights', 'fusion.weights'],
      `${method}: give the fusion weights once, as fusionWeights or fusion.weights`,
    );
  if (o.k !== undefined && fusionGiven.k !== undefined)
    throw new OptionError(`${method}.k`, o.k, ['k', 'fusion.k'], `${method}: give k once (k or fusion.k)`);
  const fusionMethod = fusionGiven.method ?? d.fusion;
  const givenWeights = o.fusionWeights ?? fusionGiven.weights;
  const base = d.fusionWeights[fusionMethod];
  const weights = base.map((w, i) => givenWeights?.[i] ?? w) as [number, number, number, number];
  const k = o.k ?? fusionGiven.k;

  if (o.reranker !== undefined && o.llmFilter !== undefined && o.llmFilter !== false)
    throw new OptionError(
      `${method}.reranker`,
      o.reranker.name,
      ['reranker', 'llmFilter'],
      `${method}: give reranker or llmFilter, not both`,
    );
  const limit = (preset.context ? o.maxEntries : o.limit) ?? d.limit;
  if (o.candidates !== undefined && preset.vector === 'calibrated' && o.candidates < limit)
    throw new OptionError(
      `${method}.candidates`,
      o.candidates,
      [`at least limit (${limit})`],
      `candidates (${o.candidates}) must be at least limit (${limit})`,
    );
  const stage1 = preset.vector === 'calibrated' && o.candidates !== undefined ? 'candidates' : preset.vector;

  const filter = Object.fromEntries(FILTERS.flatMap((f) => (o[f] === undefined ? [] : [[f, o[f]]])));
  const recipe: SearchRecipe = {
    preset: name,
    filter,
    ...(o.projectCore !== undefined ? { projectCore: o.projectCore } : {}),
    sources: {
      ...(stage1 !== 'none'
        ? { vector: { stage1, threshold: o.threshold ?? d.threshold, ...(o.smallDims !== undefined ? { smallDims: o.smallDims } : {}) } }
        : {}),
      keyword: o.keyword ?? d.keyword,
      mentions: o.mentions ?? d.mentions,
      candidates: o.candidates ?? d.candidates,
    },
    fusion: { method: fusionMethod, weights, k: k ?? RRF_K },
    ...(preset.context
      ? {
          expansion: {
            seeds: o.seeds ?? CONTEXT_SHAPE.seeds,
            depth: o.depth ?? CONTEXT_SHAPE.depth,
            edgeTypes: o.relationTypes ?? CONTEXT_SHAPE.relationTypes,
            ranker: rankerOf(o.graphRanking ?? CONTEXT_SHAPE.graphRanking),
          },
          scoring: {
            ...(o.scoringWeights !== undefined ? { weights: o.scoringWeights } : {}),
            diversity: o.diversity ?? CONTEXT_SHAPE.diversity,
            combination: o.scoreCombination ?? CONTEXT_SHAPE.scoreCombination,
            ...(o.relevanceFloor !== undefined ? { relevanceFloor: o.relevanceFloor } : {}),
          },
        }
      : {}),
    ...(o.reranker !== undefined ? { reranker: { kind: 'custom' as const, reranker: o.reranker } } : {}),
    ...(o.llmFilter !== undefined && o.llmFilter !== false
      ? {
          reranker: {
            kind: 'llm' as const,
            options: {
              ...LLM_FILTER_DEFAULTS,
              ...(o.llmFilter === true ? {} : withoutUndefined(o.llmFilter)),
            },
          },
        }
      : {}),
    budget: {
      maxEntries: limit,
      ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
      ...(preset.context ? { evidenceCut: o.evidenceCut ?? name === 'context' } : {}),
    },
    attachCode: o.includeCode ?? d.includeCode,
    exactOrder: preset.exactOrder,
    strict: o.strict ?? d.strict,
  };
  return frozenCopy(recipe);
}

function rankerOf(given: NonNullable<SearchOptions['graphRanking']>): GraphRanker {
  return typeof given === 'string' ? GRAPH_RANKERS[given]() : given;
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A deep copy of the plain data, frozen, keys sorted (so that its JSON is canonical: the bundle
 * cache's key): the caller's arrays and objects stay theirs to change. Objects with behaviour (a
 * Reranker) are kept as they are.
 */
function frozenCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  if (keys.some((k) => typeof source[k] === 'function')) return value;
  const copy: Record<string, unknown> = {};
  for (const k of keys.sort()) copy[k] = frozenCopy(source[k]);
  return Object.freeze(copy) as T;
}
