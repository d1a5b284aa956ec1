/**
 * Everything the query path may ask of storage. `retrieve/` imports nothing from `store/` but this
 * file's types: which store answers (LanceDB, Kuzu, a structure held in memory), whether a filter
 * is pushed down, and whether a scan runs on a helper thread are decided behind it. `Stores`
 * implements it; a second graph driver or a served index would implement it again.
 */
import type { Effectiveness } from '../feedback/effectiveness.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { EntryEdgeType, GoldenPath, MemoryEntry } from '../model/types.js';
import type { EntryCodeReference, GraphEdge, GraphReach, ReachOptions } from './graph/graphStore.js';
import type { VectorHit } from './lance/entriesTable.js';
import type { EntryColumns, EntryFeatures } from './resident/entryColumns.js';
import type { KeywordIndex } from './resident/keywordIndex.js';
import type { NameIndex } from './resident/nameIndex.js';
import type { CodeSearchIndex } from './codeSearchIndex.js';

export type { CodeSearchIndex, EntryColumns, EntryFeatures, KeywordIndex, NameIndex, VectorHit, GraphEdge, GraphReach, Effectiveness };

/** An entry as read, with its float vector when one was asked for (and stored). */
export interface EntryRow {
  entry: MemoryEntry;
  vector?: Float32Array;
}

export interface MemoryIndex {
  /** Length of the stored small vectors. */
  readonly smallDimensions: number;
  /** The small search vector of a full vector, under the store's projection. */
  smallVector(full: Float32Array): Float32Array;

  // Structures held in memory, loaded on first use and followed by writes.
  /** Per entry: the filter and scoring columns and 8-bit vectors. */
  columns(): Promise<EntryColumns>;
  /** BM25 postings over title, aliases and content. */
  keywords(): Promise<KeywordIndex>;
  /** Titles and aliases, to find the entries a text names. */
  names(): Promise<NameIndex>;
  /** Ratings of entries, sources and cores. */
  effectiveness(): Promise<Effectiveness>;
  /** The imported code's paths, symbols and text, by field (import-code keeps it). */
  codeSearch(): Promise<CodeSearchIndex>;

  // Candidates.
  /**
   * Stage 1: the `k` nearest small vectors that pass the filter. `sideWork` runs while the search
   * does (on a helper thread in a large store, so it costs no time of its own); nothing may be
   * awaited inside it. Whether the scan is in memory or LanceDB's, and whether the filter is
   * pushed down, is decided here.
   */
  nearestSmallWhile(
    queryVector: Float32Array,
    filter: EntryFilter,
    k: number,
    sideWork?: () => void,
    signal?: AbortSignal,
  ): Promise<VectorHit[]>;
  /** The `limit` nearest by exact cosine on the full float vectors, the filter pushed down (stores too large to hold whole). */
  nearestFull(queryVector: Float32Array, filter: EntryFilter, limit: number): Promise<VectorHit[]>;

  // Rows.
  /**
   * The entries of `ids` that exist and pass `filter`, in the order asked, with their float
   * vectors when asked: from memory while the store is held whole, else one LanceDB read.
   */
  read(ids: readonly string[], opts?: { filter?: EntryFilter; withVectors?: boolean }): Promise<EntryRow[]>;

  // Graph, whatever the driver.
  /** Entries within `depth` hops of the seeds, each with one shortest path, and the edges read on the way (see expandWithPaths). */
  reachWithPaths(
    seedIds: readonly string[],
    opts: ReachOptions & { alsoAmong?: readonly string[] },
  ): Promise<{ reaches: GraphReach[]; edges: GraphEdge[] }>;
  /** Every entry edge of these types among the given entries. */
  edgesAmong(ids: readonly string[], edgeTypes: readonly EntryEdgeType[]): Promise<GraphEdge[]>;
  /** For each id that a newer entry supersedes: the id of the newer entry. */
  supersededBy(ids: readonly string[]): Promise<Map<string, string>>;
  /** The code references of the entries. */
  codeReferencesOf(entryIds: readonly string[]): Promise<EntryCodeReference[]>;
  /** Golden paths that the entries implement, steps ordered, with the implementing entry ids. */
  goldenPathsOf(entryIds: readonly string[]): Promise<(GoldenPath & { entryIds: string[] })[]>;
}
