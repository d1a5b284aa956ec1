/**
 * A search described as frozen, typed data: which sources give candidates and how they are fused,
 * whether the graph expands them and how they are scored, the budget, and what is attached. One
 * executor (retrieve/runRecipe.ts) runs any recipe and skips the stages it lacks; the engine's
 * search methods are presets of it (recipe/presets.ts) with the caller's overrides applied here.
 */
import type { EntryEdgeType, Reranker } from '../model/types.js';

export type { Reranker };
import type { FusionMethod } from '../retrieve/fuse.js';
import type { ScoreCombination, ScoringWeights } from '../retrieve/score.js';
import type { RelevanceFilterOptions } from '../llm/relevanceFilter.js';
import type { SearchFilterOptions } from './searchOptions.js';
import type { GraphRanker } from '../retrieve/graphRanker.js';

/** Stage 1 of the vector source. */
export type VectorStage1 =
  /** No small-vector stage: the nearest by exact cosine on the full vectors. */
  | 'exact'
  /** As many small-vector candidates as keep 99% of the exact top 10, measured on the store. */
  | 'calibrated'
  /** This many small-vector candidates (at least the source's `candidates`). */
  | 'candidates';

export interface VectorSource {
  readonly stage1: VectorStage1;
  /** Hits below this cosine similarity are dropped. */
  readonly threshold: number;
  /** The small-vector length the caller expects; checked against the store's. */
  readonly smallDims?: number;
}

export interface RecipeSources {
  readonly vector?: VectorSource;
  readonly keyword: boolean;
  readonly mentions: boolean;
  /** How many candidates each source's first stage keeps. */
  readonly candidates: number;
}

export interface RecipeFusion {
  readonly method: FusionMethod;
  /** Per list, in order: vector, keyword, mentions, changed code. */
  readonly weights: readonly [number, number, number, number];
  /** RRF's constant. */
  readonly k: number;
}

export interface RecipeExpansion {
  /** Best fused hits the walk starts from. */
  readonly seeds: number;
  /** Hops; 0 walks nowhere (the ranker still reads the edges among the candidates). */
  readonly depth: number;
  readonly edgeTypes: readonly EntryEdgeType[];
  readonly ranker: GraphRanker;
}

export interface RecipeScoring {
  readonly weights?: Readonly<Partial<ScoringWeights>>;
  /** MMR diversity, 0 (off) to 1. */
  readonly diversity: number;
  readonly combination: ScoreCombination;
  /** undefined: measured on the store; false: never judged. */
  readonly relevanceFloor?: number | false;
}

/** A recipe's reranker: the LLM filter with the engine's chat, or one the caller gave. */
export type RecipeReranker =
  { readonly kind: 'llm'; readonly options: Readonly<RelevanceFilterOptions> } | { readonly kind: 'custom'; readonly reranker: Reranker };

export interface SearchRecipe {
  /** The preset it was made from. */
  readonly preset: PresetName;
  /** Checked, not yet resolved: `asOf` absent means "now" at run time, not at creation. */
  readonly filter: Readonly<SearchFilterOptions>;
  /** A core always searched besides `filter.cores`. */
  readonly projectCore?: string;
  readonly sources: RecipeSources;
  readonly fusion: RecipeFusion;
  /** With it, the run makes a context: expansion, scoring, a budget, code. */
  readonly expansion?: RecipeExpansion;
  readonly scoring?: RecipeScoring;
  readonly reranker?: RecipeReranker;
  /** `evidenceCut`: end a context bundle where the evidence ends (presets.ts EVIDENCE_CUT). */
  readonly budget: { readonly maxEntries: number; readonly maxTokens?: number; readonly evidenceCut?: boolean };
  /** Code references and golden paths of the entries kept. */
  readonly attachCode: boolean;
  /** Order the final list by exact cosine (8-bit ranking can swap near ties). */
  readonly exactOrder: boolean;
  /** Throw when the embedder fails, rather than answer without vectors. */
  readonly strict: boolean;
}

export const PRESET_NAMES = ['semantic', 'matryoshka', 'keyword', 'hybrid', 'find', 'context'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];
