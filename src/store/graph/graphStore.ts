import type { Residents } from '../resident/residents.js';
import type { CodeLocation, EntryEdgeType, GoldenPath, PathHop, Relation, RelationType } from '../../model/types.js';
import type { GoldenPathInput } from '../../model/memoryFile.js';

/** Light properties of an entry kept on its graph node (LanceDB holds the rest). */
export interface EntryNode {
  id: string;
  coreId: string;
  title: string;
  entryType: string;
}

/** Which way edges are followed: along their direction, against it, or both. */
export type Direction = 'outgoing' | 'incoming' | 'both';

/** An entry reached from a seed through the graph, and in how many hops at least. */
export interface ReachOptions {
  depth: number;
  edgeTypes: readonly EntryEdgeType[];
  direction?: Direction;
  hubDegree?: number;
}

export interface GraphHit {
  seedId: string;
  targetId: string;
  hops: number;
}

/** The same, with one shortest path (see `expandWithPaths`). */
export interface GraphReach extends GraphHit {
  path: PathHop[];
}

/** A directed edge between two entries; `weight` is RELATED's weight, 1 for the other types. */
export interface GraphEdge {
  from: string;
  to: string;
  type: EntryEdgeType;
  weight: number;
}

export interface EntryCodeReference {
  entryId: string;
  relevance: number;
  code: CodeLocation;
}

export interface CodeReferenceQuery {
  /** Matches when the stored path contains this text. */
  filePath?: string;
  /** Exact symbol name. */
  symbol?: string;
  codebaseId?: string;
}

/** One edge, by its type and ends. */
export interface RelationRef {
  type: RelationType;
  from: string;
  to: string;
}

export interface GraphRemoval {
  codeLocations: readonly string[];
  goldenPaths: readonly string[];
  relations: readonly RelationRef[];
}

export interface GraphCounts {
  entries: number;
  codeLocations: number;
  goldenPaths: number;
  relations: Record<RelationType, number>;
}

/**
 * Topology of the memory: entries, code, golden paths and the edges between them. Storage only:
 * implementations answer with facts (paths, hops), never scores.
 */
/** Nodes and edges written in one transaction. */
export interface GraphBatch {
  entries: EntryNode[];
  codeLocations: CodeLocation[];
  goldenPaths: GoldenPathInput[];
  relations: Relation[];
}

export interface GraphStore {
  /** Writes nodes and edges in one transaction (MERGE: safe to repeat). */
  write(batch: GraphBatch): Promise<void>;
  /** Removes entries and every edge touching them. */
  deleteEntries(ids: readonly string[]): Promise<void>;
  /** Removes edges, and code locations and golden paths with every edge touching them (a sync). Safe to repeat. */
  remove(batch: GraphRemoval): Promise<void>;
  /** The edges of the given types that end at any of `ids` (what still depends on records a sync would remove). */
  edgesInto(ids: readonly string[], types: readonly RelationType[]): Promise<RelationRef[]>;
  /** Which of `ids` exist, per node kind. */
  existingIds(kind: 'entry' | 'code' | 'path', ids: readonly string[]): Promise<Set<string>>;
  /**
   * Entries within `depth` hops over `edgeTypes` (in `direction`, default both) of every seed, with
   * the fewest hops. With `hubDegree`, an entry with more edges than that (a hub: the conventions
   * entry every lesson links to) is reached but not walked through.
   */
  reach(seedIds: readonly string[], opts: ReachOptions): Promise<GraphHit[]>;
  /** Of `ids`, the entries with more than `degree` edges to other entries (hubs, see `reach`). */
  hubsAmong(ids: readonly string[], degree: number): Promise<Set<string>>;
  /** Golden paths whose name, concept, description or step key concepts contain any of the concepts (case-insensitive), most concepts matched first. */
  findGoldenPaths(concepts: readonly string[]): Promise<(GoldenPath & { matched: number })[]>;
  /** For each id that a newer entry supersedes: the id of the newer entry. */
  supersededBy(ids: readonly string[]): Promise<Map<string, string>>;
  codeReferencesOf(entryIds: readonly string[]): Promise<EntryCodeReference[]>;
  /** Golden paths that the entries implement, steps ordered, with the implementing entry ids. */
  goldenPathsOf(entryIds: readonly string[]): Promise<(GoldenPath & { entryIds: string[] })[]>;
  getGoldenPath(id: string): Promise<GoldenPath | null>;
  findByCodeReference(q: CodeReferenceQuery): Promise<EntryCodeReference[]>;
  /** Every entry edge among the given entries (shortest paths, graph-aware ranking). */
  edgesAmong(ids: readonly string[], edgeTypes: readonly EntryEdgeType[]): Promise<GraphEdge[]>;
  /** Every code location (auto-linking matches their symbols and paths). */
  allCodeLocations(): Promise<CodeLocation[]>;
  /** Every entry id the graph holds (doctor). */
  entryIds(): Promise<string[]>;
  /** Every entry node, ordered by id (migrate). */
  entryNodes(): Promise<EntryNode[]>;
  /** Every golden path, steps ordered (export). */
  allGoldenPaths(): Promise<GoldenPath[]>;
  /** Every relation but PATH_STEP (a golden path's steps carry those), with its attributes (export). */
  allRelations(): Promise<Relation[]>;
  counts(): Promise<GraphCounts>;
  /** Loads what it holds in memory (entry edges, code links) ahead of the queries that need them. */
  warm(): Promise<void>;
  /** Hands what it holds in memory to the structures of the stores that own the folder (snapshots, generations). */
  holdIn(residents: Residents): void;
  /** Writes everything committed into the database file itself, so that a copy of the file holds it (backup). */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/** What a write may take as known to exist, so as to skip asking the database (which grows with the table). */
export interface KnownRecords {
  entry(id: string): boolean;
  edge(e: { type: EntryEdgeType; from: string; to: string }): boolean;
  /**
   * Whether an entry's REFERENCES_CODE or IMPLEMENTS edge exists; absent when the caller cannot
   * tell, and the database is asked (a query that took 1.4–3.3 s for 22K references at 20K entries).
   */
  codeEdge?(e: { type: CodeEdgeType; from: string; to: string }): boolean;
}

/** The edges from an entry to code or to a golden path, which the code links hold (codeLinks.ts). */
export type CodeEdgeType = 'REFERENCES_CODE' | 'IMPLEMENTS';

/**
 * What a graph database provides: storage, Cypher-side lookups and the scans the structures held
 * in memory are built from. ResidentGraph (residentGraph.ts) holds those structures over any
 * driver and answers the rest of GraphStore from them; a second driver implements only this.
 */
export interface GraphDriver extends Omit<
  GraphStore,
  | 'write'
  | 'reach'
  | 'hubsAmong'
  | 'supersededBy'
  | 'codeReferencesOf'
  | 'goldenPathsOf'
  | 'findByCodeReference'
  | 'edgesAmong'
  | 'warm'
  | 'holdIn'
> {
  /** As GraphStore.write; `known` says which entries and entry edges exist already. */
  write(batch: GraphBatch, known?: KnownRecords): Promise<void>;
  /** Every entry id and entry-to-entry edge. */
  scanEntryEdges(): Promise<{ ids: string[]; edges: GraphEdge[] }>;
  /** Every code reference and implementation, with the code locations and golden paths. */
  scanCodeLinks(): Promise<CodeLinksData>;
}

/** What a driver's scan of the code links gives (store/graph/codeLinks.ts holds it in memory). */
export interface CodeLinksData {
  references: { entryId: string; codeId: string; relevance: number }[];
  implementations: { entryId: string; pathId: string }[];
  codeLocations: CodeLocation[];
  goldenPaths: GoldenPath[];
}
