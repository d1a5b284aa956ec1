/** Domain types shared by every layer. Storage rows use snake_case; the API uses camelCase. */

export const CONFIDENCE_LEVELS = ['low', 'medium', 'high'] as const;
export type Confidence = (typeof CONFIDENCE_LEVELS)[number];

export const SENSITIVITY_LEVELS = ['public', 'internal', 'secret'] as const;
export type Sensitivity = (typeof SENSITIVITY_LEVELS)[number];

/** Edges between memory entries. */
export const ENTRY_EDGE_TYPES = ['RELATED', 'DEPENDS_ON', 'SUPERSEDES'] as const;
export type EntryEdgeType = (typeof ENTRY_EDGE_TYPES)[number];

/** IMPORTS: a code file's location to the location of a file it imports (import-code). */
export const RELATION_TYPES = [...ENTRY_EDGE_TYPES, 'REFERENCES_CODE', 'IMPLEMENTS', 'PATH_STEP', 'IMPORTS'] as const;
export type RelationType = (typeof RELATION_TYPES)[number];

export interface MemoryEntry {
  id: string;
  /** Memory core (namespace), e.g. `auth-jwt`. */
  coreId: string;
  title: string;
  /** Other names of the entry (auto-linking matches them like the title). */
  aliases: string[];
  content: string;
  /** lesson, decision, pattern, convention, fact, … (open set). */
  entryType: string;
  confidence: Confidence;
  /** 1 (trivia) … 10 (must know). */
  importance: number;
  tags: string[];
  /** Provenance: file, conversation, commit, agent. */
  source: string | null;
  sensitivity: Sensitivity;
  /** When the entry was written (the file's `created_at`, else when it was first stored). */
  createdAt: Date;
  /** When its title or content last changed; `createdAt` until then. Recency runs from it. */
  updatedAt: Date;
  /** When the entry takes effect, if not from `createdAt` (it may be earlier: a back-dated record). */
  validFrom: Date | null;
  /** null = still current. */
  validTo: Date | null;
  /** sha256 of title + content: what the vector was computed from. */
  contentHash: string;
  /** Part of its core's static layer: first in `coreMemory` whatever its importance. */
  pinned: boolean;
}

export interface CodeLocation {
  id: string;
  codebaseId: string;
  filePath: string;
  symbol: string | null;
  startLine: number | null;
  endLine: number | null;
  language: string | null;
  /** What the symbol is (function, class, method, interface, type, enum, variable, …; import-code). */
  kind: string | null;
  /** sha256 of the symbol's text with whitespace collapsed (import-code): equal after a move, different after an edit. */
  fingerprint: string | null;
  /** The commit the fingerprint was taken at, when the file was unchanged since it (import-code, ingest --repo in a git repository). */
  revision: string | null;
}

export interface GoldenPathStep {
  order: number;
  description: string | null;
  keyConcepts: string[];
  code: CodeLocation;
}

export interface GoldenPath {
  id: string;
  name: string;
  concept: string | null;
  description: string | null;
  /** Ordered by `order`. */
  steps: GoldenPathStep[];
}

/** A relation as the ingest file states it, after validation. */
export interface Relation {
  type: RelationType;
  from: string;
  to: string;
  weight?: number;
  kind?: string;
  relevance?: number;
  stepOrder?: number;
  description?: string;
  keyConcepts?: string[];
}

/** One edge on the path that brought an entry into a bundle. */
export interface PathHop {
  type: EntryEdgeType;
  from: string;
  to: string;
}

/** How a reference meets a change (Reason `code`). */
export type CodeMatch = 'touched' | 'file' | 'same-file';

/** Why an item is in a result: the search that found it, or the edge path that reached it. */
export type Reason =
  | { kind: 'vector'; rank: number; similarity: number }
  /** `score`: BM25 relative to the best keyword hit of the query (0–1); `bm25`: the raw score. */
  | { kind: 'keyword'; rank: number; score: number; bm25: number }
  /** The task names the entry: `mention` is the title or alias as the task wrote it. */
  | { kind: 'mention'; rank: number; mention: string }
  /**
   * The entry references code a change touches (`contextForDiff`): `code` is `path#symbol`,
   * `path:lines` or `path`; `match` says how close: a symbol or lines the change touches, the
   * changed file itself, or other code in that file.
   */
  | { kind: 'code'; rank: number; code: string; match: CodeMatch }
  /**
   * Ratings moved the score: the effectiveness (0 not useful … 1 useful; 0.5 neutral) over
   * `signals` ratings of the entry itself, else of its source (counted at half), else its core (a quarter).
   */
  | { kind: 'feedback'; effectiveness: number; signals: number; of: 'entry' | 'source' | 'core' }
  | { kind: 'graph'; seedId: string; hops: number; path: PathHop[] };

export interface SearchHit {
  entry: MemoryEntry;
  /**
   * What the list is ordered by: the cosine similarity (semantic, matryoshka), the BM25 score
   * relative to the best hit (keyword), or the fused score (hybrid).
   */
  score: number;
  /** Cosine similarity to the query (0 for a keyword-only search). */
  similarity: number;
  why: Reason[];
}

export interface ScoredEntry {
  entry: MemoryEntry;
  /** Final score used for ordering (higher is better). */
  score: number;
  /** Cosine similarity of the entry to the query (1 − cosine distance). */
  similarity: number;
  why: Reason[];
  /** Rough token count of title + content (≈ 4 characters a token). */
  tokens: number;
  /** Why the LLM relevance filter kept it, when that filter ran. */
  llmReason?: string;
  /** Every code reference of the entry is orphaned (the engine knows its `repo`): its score was halved. */
  possiblyStale?: true;
}

export interface CodeReference {
  code: CodeLocation;
  /** Highest relevance among the entries that reference it. */
  relevance: number;
  /** Entries in the bundle that reference this location. */
  entryIds: string[];
  /** Whether the code is still where the location says (set when the engine knows its `repo`; docs/code.md). */
  freshness?: 'fresh' | 'moved' | 'drifted' | 'orphaned';
  /**
   * Why the code is in the bundle (the code channel, retrieve/codeCandidates.ts): `code-search`
   * (the task's words match its path, symbols or text), `referenced by <entry id>`, `imported by <path>`.
   */
  why?: string[];
}

/** A code location found for a text (`findCode`, `memcore search --mode code`, MCP `find_code`). */
export interface CodeSearchHit {
  /** The file, or its symbol that matches the text best. */
  code: CodeLocation;
  /** Fused evidence; the best hit of a code search scores about 1. */
  score: number;
  /** `code-search`, `referenced by <entry id>`, `imported by <path>`. */
  why: string[];
  /** The file's symbols that match the text, best first (at most 3). */
  symbols: string[];
}

export interface ContextBundle {
  task: string;
  /** Names this bundle for ratings (`memory.feedback({ bundleId, entryId, useful })`): a rating per entry and bundle counts once. */
  bundleId?: string;
  entries: ScoredEntry[];
  codeRefs: CodeReference[];
  goldenPaths: (GoldenPath & { entryIds: string[] })[];
  /** Decisions among the entries (seeds or reached through the graph). */
  relatedDecisions: ScoredEntry[];
  /** Milliseconds per stage. */
  timings: Record<string, number>;
  cacheHit: boolean;
  notes: string[];
  /**
   * Parts that failed and were answered without (`vectors`: the embedder was unavailable, so only
   * keywords, mentions and the graph searched). Such a bundle is not cached.
   */
  degraded?: 'vectors'[];
  /**
   * No entry is named by the task and no keyword match is more than chance gives in this store: the entries are
   * the closest there are, not known to be relevant (`relevanceFloor`). See `matchStrength`.
   */
  lowConfidence?: true;
  /**
   * With `lowConfidence`, how weak (retrieve/relevance.ts): `weak` — the task shares words specific
   * to this memory, so the few best entries are kept (those up to where their evidence ends when
   * the task is scoped to `cores`) and the prompt format gives them as weak matches; `none` —
   * strong evidence the task is about something else: the prompt format says no project memory
   * is relevant (the entries stay in the bundle for a program).
   */
  matchStrength?: 'weak' | 'none';
}

export interface StoreStats {
  entries: number;
  cores: Record<string, number>;
  entryTypes: Record<string, number>;
  codeLocations: number;
  goldenPaths: number;
  relations: Record<RelationType, number>;
  embedder: { id: string; dimensions: number };
  generation: number;
  /**
   * Where each search runs at this store's size (see `residentMaxEntries` and `scanMaxEntries`):
   * `memory` on structures held in memory, `lancedb` on the table. `exact`: semanticSearch;
   * `stage1`: the first stage of two-stage vector search; `entries`: reading the hits' entries.
   */
  search: { exact: SearchRunsOn; stage1: SearchRunsOn; entries: SearchRunsOn };
  /**
   * The structures this process holds in memory (`columns`, `keywords`, `names`, `adjacency`) and
   * how each was loaded: from its snapshot file, from an older one brought up to date by the change
   * log (`caught-up`), or built from the stores, with a note when a snapshot was there but not used.
   * Empty until a query loads them.
   */
  resident: Record<string, ResidentLoad>;
  /**
   * In team mode: entries of the memory folder indexed without their text's vector yet (a pull's
   * changed texts, embedded in the background; docs/team.md). Absent otherwise.
   */
  pendingVectors?: number;
}

/** How a structure held in memory was loaded (StoreStats.resident). */
export interface ResidentLoad {
  loadedFrom: 'snapshot' | 'caught-up' | 'built';
  /** Milliseconds the load took. */
  ms: number;
  /** Why a snapshot file was not used, when one was there. */
  note?: string;
  /** Loaded from a snapshot of an older generation and brought up to date from the change log: from which generation, and how many entries it read again or dropped. */
  caughtUp?: { fromGeneration: number; entries: number };
}

export type SearchRunsOn = 'memory' | 'lancedb';

/**
 * Reorders or trims a context's scored entries before the budget: a cross-encoder, a business
 * rule, or the LLM relevance filter (`llmRelevance(chat, options)`, which `llmFilter` builds with
 * the engine's chat). It gets the best `offered` by score, read whole, and returns the ones to
 * keep in its order; the budget (`maxEntries`, `maxTokens`) applies after it. If it throws, the
 * bundle keeps the top by score with a note.
 */
export interface Reranker {
  /** Names it in notes and in the bundle cache's key: two rerankers that differ need two names. */
  readonly name: string;
  /** How many of the best by score it is offered. */
  readonly offered: number;
  rerank(task: string, entries: readonly ScoredEntry[], signal?: AbortSignal): Promise<{ kept: ScoredEntry[]; notes: string[] }>;
}
