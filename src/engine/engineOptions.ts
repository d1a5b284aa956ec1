/**
 * The engine's public option and result types, the names each method accepts (checked at the
 * boundary, see model/options.ts), and the small resolutions they share.
 */
import type { Embedder } from '../embed/embedder.js';
import type { LocalEmbedderOptions } from '../embed/localEmbedder.js';
import type { OpenAIEmbedderOptions } from '../embed/openaiEmbedder.js';
import type { IngestOptions } from '../ingest/indexer.js';
import { invalidInput, requireFolder } from '../model/errors.js';
import type { MemoryDocument } from '../model/memoryFile.js';
import type { RememberInput } from './remember.js';
import type { Sensitivity, CodeLocation, EntryEdgeType, MemoryEntry, PathHop, SearchHit } from '../model/types.js';
import type { CodeReferenceQuery, Direction } from '../store/graph/graphStore.js';
import type { SearchFilterOptions, SearchOptions } from '../recipe/searchOptions.js';
import type { ContextCacheOptions } from '../cache/contextCache.js';
import type { JsonChat, LlmOptions } from '../llm/chatClient.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import type { CheckCodeOptions } from '../code/checkCode.js';
import { withFingerprints } from '../code/fingerprintLocations.js';
import { AUTO_LINK_OPTIONS } from '../ingest/autoLink.js';

/** Which embedder a database uses. An Embedder object plugs in any model. */
export type EmbedderConfig = Embedder | ({ provider: 'local' } & LocalEmbedderOptions) | ({ provider: 'openai' } & OpenAIEmbedderOptions);

/**
 * Options in code take precedence over MEMCORE_* environment variables, which take precedence
 * over memcore.config.json|yaml (in the database folder, else the working directory), then
 * defaults (see docs/configuration.md).
 */
export interface OpenMemoryOptions {
  /** Database folder; created when missing. Default `./.memcore`. */
  path?: string;
  /** Where MEMCORE_* settings are read from. Default `process.env`; `{}` ignores the environment. */
  env?: NodeJS.ProcessEnv;
  /** Where a memcore.config file is looked for besides the database folder. Default `process.cwd()`. */
  cwd?: string;
  /** Default: the offline local model. */
  embedder?: EmbedderConfig;
  /**
   * The folder code locations are relative to (config `repo`, MEMCORE_REPO). With it, bundles mark
   * each code reference fresh, moved, drifted or orphaned, and rank entries whose every reference
   * is orphaned lower (docs/code.md). Default none.
   */
  repo?: string;
  /**
   * The team memory folder of entry files (config `memory.dir`): the database is then an index
   * of it, and remember, link and forget write files (docs/team.md). Default: `memory/` at the root
   * of the git repository that holds the database folder, when it exists. `false`: no team folder.
   */
  memoryDir?: string | false;
  /** Context bundle cache (TTL LRU). `{ ttlMs: 0 }` turns it off. Default 500 bundles, 5 minutes. */
  cache?: ContextCacheOptions;
  /**
   * Length of `vector_small`, the stage-1 search vector, for a new database (default: a quarter of
   * the embedder's dimensions, at most 128). For Matryoshka-trained models pick one of the sizes
   * the model was trained for (e.g. 64, 128, 256 for nomic-embed-text).
   */
  smallDimensions?: number;
  /**
   * The graph database of a new folder: 'ladybug' (LadybugDB, `@ladybugdb/core`) or 'kuzu' (Kuzu,
   * archived; needs `npm install kuzu`). An existing folder opens with the one it was made with
   * (meta.json); `memcore migrate --graph` moves it. Default in config/defaults.ts (`store.graph`).
   */
  graph?: 'ladybug' | 'kuzu';
  /**
   * Stores of at most this many entries are held whole in memory once the first query loads them,
   * and the bundle's entries are read from there rather than from LanceDB (~4 ms for a dozen rows
   * at 100K entries). Costs a held entry about its text's size. Up to the same size,
   * `semanticSearch` runs exactly from memory on a second 8-bit level of the full vectors (one
   * byte a dimension more); past it, as a LanceDB scan. Default 250,000; 0 always reads LanceDB.
   */
  residentMaxEntries?: number;
  /**
   * Stores of at most this many entries run stage 1 as a scan of their small vectors held in
   * memory (8-bit, ~0.8 ms per 100K entries, the true nearest small vectors) rather than LanceDB's
   * IVF index (approximate: at 1M entries and default probes it kept 0.835 of the top 10). Costs a
   * held entry ~132 bytes at 128-d. Default 2,000,000; 0 always searches LanceDB.
   */
  scanMaxEntries?: number;
  /**
   * Stores of at least this many entries run that scan on a helper thread (one per open store,
   * started on the first such query), while the keyword search runs on the caller's: at 100K
   * entries the query's p50 drops by ~1.5 ms. Default 32,768; 0 at any size; above
   * `scanMaxEntries`, never (a machine with one core gains nothing from it).
   */
  scanThreadMinEntries?: number;
  /** The chat model for `buildTaskContext(task, { llmFilter })`: connection options or a JsonChat. */
  llm?: LlmOptions | JsonChat;
}

type Filters = keyof SearchFilterOptions;

/** semanticSearch: nearest by exact cosine. Defaults: limit 10, no threshold. */
export type SemanticSearchOptions = Pick<SearchOptions, Filters | 'limit' | 'threshold' | 'signal'>;

/**
 * matryoshkaSearch. `candidates` default: measured on the store's own vectors the first time it
 * is needed after a load, so as to keep 99% of the exact top 10 of 64 sampled entries
 * (stage1Calibration), scaled as the store grows, from 600 to 10,000; one per 400 entries when
 * stage 1 is LanceDB's (past `scanMaxEntries`). How many are needed depends on how much of the
 * vectors' variance the small dimensions keep: on the synthetic bench's vectors, 100 keep 64% of
 * the exact top 10 at 100K and 600 all of it; at 300K, 750 keep 98.7% and 1,000 99.9%. The rerank
 * is in memory (~1 µs a candidate).
 */
export type MatryoshkaSearchOptions = Pick<SearchOptions, Filters | 'limit' | 'threshold' | 'signal' | 'candidates' | 'smallDims'>;

/** keywordSearch: BM25. Default limit 10. */
export type KeywordSearchOptions = Pick<SearchOptions, Filters | 'limit' | 'signal'>;

/**
 * hybridSearch. Defaults: fusion 'weighted' (each list's score min-max normalised, times its
 * weight) with weights [0.3, 1], which measured best with the local embedder (SciFact,
 * docs/evaluation.md); [1, 1] for 'rrf' (k 60); candidates 100; mentions off (weight 2 when on).
 * With a strong embedding model try RRF or equal weights.
 */
export type HybridSearchOptions = Pick<
  SearchOptions,
  Filters | 'limit' | 'threshold' | 'signal' | 'candidates' | 'fusion' | 'fusionWeights' | 'k' | 'mentions' | 'strict'
> & {
  /** The former name of `fusionWeights`, still accepted (not with it). */
  weights?: [number, number];
};

/** Hits, best first, and notes on how they were found (a part that was unavailable). */
export type SearchResults = SearchHit[] & { notes: string[] };

export const OPEN_MEMORY_OPTIONS = optionNames<OpenMemoryOptions>()([
  'path',
  'env',
  'cwd',
  'embedder',
  'repo',
  'memoryDir',
  'cache',
  'smallDimensions',
  'graph',
  'residentMaxEntries',
  'scanMaxEntries',
  'scanThreadMinEntries',
  'llm',
]);
export const TRAVERSE_OPTIONS = optionNames<TraverseOptions>()(['depth', 'relationTypes', 'direction', 'sensitivity']);
export const FIND_CODE_OPTIONS = optionNames<FindCodeOptions>()(['limit', 'codebases', 'entries', 'signal', 'sensitivity']);
export const RELATED_TO_CODE_OPTIONS = optionNames<RelatedToCodeOptions>()(['limit', 'signal', 'sensitivity']);
export const SENSITIVITY_OPTION = optionNames<SensitivityOption>()(['sensitivity']);
export const CODE_REFERENCE_QUERY = optionNames<CodeReferenceQuery>()(['filePath', 'symbol', 'codebaseId']);
export const INGEST_OPTIONS = optionNames<IngestOptions>()(['autoLink', 'signal', 'onProgress', 'sync', 'repo']);
export const CHECK_CODE_OPTIONS = optionNames<CheckCodeOptions>()(['repo', 'codebase', 'fix']);
export const INDEX_OPTIONS = optionNames<IndexOptions>()(['annMinRows', 'onProgress']);
export const REMEMBER_FIELDS = optionNames<RememberInput>()([
  'title',
  'content',
  'core',
  'type',
  'id',
  'confidence',
  'importance',
  'tags',
  'aliases',
  'source',
  'sensitivity',
  'pinned',
  'related',
  'dependsOn',
  'supersedes',
  'code',
  'autoLink',
]);
export const CODE_REFERENCE_FIELDS = optionNames<import('./remember.js').CodeReferenceInput>()([
  'file',
  'symbol',
  'startLine',
  'endLine',
  'codebase',
  'language',
  'relevance',
]);

/** A rating of an entry (`feedback`). */
export interface FeedbackInput {
  entryId: string;
  /** true (useful), false (not useful), or a share from 0 to 1. */
  useful: boolean | number;
  /** The bundle the entry came in: a rating per entry and bundle counts once. */
  bundleId?: string;
  note?: string;
  /**
   * The task the entry was rated for; default: the bundle's, when this process built it. The rating
   * counts most for tasks like this one (docs/pipeline.md, "Ratings").
   */
  task?: string;
}

/** Which sensitivity levels a read returns: default `['public', 'internal']`, secrets only when asked for. */
export interface SensitivityOption {
  sensitivity?: Sensitivity[];
}

/** `findCode`'s options (docs/api.md, "Code"). */
export interface FindCodeOptions extends SensitivityOption {
  /** Code locations at most, one per file. Default 10, at most 200. */
  limit?: number;
  /** Only code of these codebases (import-code's `codebase`). Default every codebase. */
  codebases?: string[];
  /**
   * Also rank the code that the entries matching the text reference (a hybrid search of 5 entries,
   * of the sensitivities asked for). Default true.
   */
  entries?: boolean;
  signal?: AbortSignal;
}

export interface RelatedToCodeOptions extends SensitivityOption {
  /** Hits at most. Default 10. */
  limit?: number;
  signal?: AbortSignal;
}

export interface IndexOptions {
  /** Build LanceDB's ANN index on vector_small from this many entries. Default 50,000. */
  annMinRows?: number;
  /** Hears how far the refit has come, every 10,000 entries, and when the index build starts. */
  onProgress?: (message: string) => void;
}

/** What `index()` built. */
export interface IndexResult {
  /** Columns given scalar indexes. */
  scalar: string[];
  /** Whether an ANN index on vector_small was built. */
  ann: boolean;
  rows: number;
  /** How the small vectors derive from the full ones. */
  projection: 'prefix' | 'pca';
  /** The snapshot files written: every structure held in memory, rewritten with what the query path derived from it (the relevance floor). */
  snapshots: { structure: string; bytes: number }[];
}

export interface TraverseOptions extends SensitivityOption {
  /** Hops at most. Default 2. */
  depth?: number;
  /** Default all entry edges: RELATED, DEPENDS_ON, SUPERSEDES. */
  relationTypes?: EntryEdgeType[];
  /** Follow edges along their direction, against it, or both (default). */
  direction?: Direction;
}

export interface TraverseHit {
  entry: MemoryEntry;
  hops: number;
  /** Edges from the start entry to this one. */
  path: PathHop[];
}

export interface RelatedToCodeHit {
  entry: MemoryEntry;
  /** Cosine similarity of the entry to the query. */
  similarity: number;
  /** References of the entry into the file, most relevant first. */
  references: { code: CodeLocation; relevance: number }[];
}

export interface CodeReferenceHit {
  entry: MemoryEntry;
  relevance: number;
  code: CodeLocation;
}

export function checkIngestOptions(where: string, options: IngestOptions, allowed: readonly string[]): void {
  checkOptionNames(where, options, allowed);
  if (options.autoLink !== undefined && typeof options.autoLink !== 'boolean')
    checkOptionNames(`${where}.autoLink`, options.autoLink, AUTO_LINK_OPTIONS);
  if (options.repo !== undefined && (typeof options.repo !== 'string' || options.repo === ''))
    throw invalidInput(`${where}: repo must be the path of a folder`);
}

/** The document with its code locations fingerprinted against `repo`, when one is given. */
export async function fingerprinted(where: string, document: MemoryDocument, repo: string | undefined): Promise<MemoryDocument> {
  return repo === undefined ? document : withFingerprints(document, await requireFolder(`${where}: repo`, repo));
}
