import { warmUpEmbedder, type Embedder } from '../embed/embedder.js';
import type { IngestOptions, IngestReport } from '../ingest/indexer.js';
import { invalidInput, throwIfAborted } from '../model/errors.js';
import { validateMemoryDocument, type EntryRecord, type MemoryDocumentRecord, type RelationRecord } from '../model/memoryFile.js';
import type { RememberInput, RememberResult } from './remember.js';
import type { EntryDetails } from './entryDetails.js';
import type { EntryGraph, EntryGraphQuery } from './entryGraph.js';
import type { BackupManifest } from '../ops/backup.js';
import { checkOpenStores, type DoctorReport } from '../ops/doctor.js';
import { reembedInPlace, type ReembedHost, type ReembedReport } from '../ops/reembed.js';
import { indexStore } from '../ops/indexStore.js';
import { AccessGate } from './accessGate.js';
import { EarlyEmbeddings, runInGroups } from './groupCommit.js';
import * as reads from './reads.js';
import * as writes from './writes.js';
import type { ForgetMode } from './writes.js';
import { gapsOptions, type ListOptions } from './readOptions.js';
import {
  SENSITIVITY_LEVELS,
  type CodeSearchHit,
  type ContextBundle,
  type GoldenPath,
  type MemoryEntry,
  type ScoredEntry,
  type SearchHit,
  type StoreStats,
} from '../model/types.js';
import type { CodeReferenceQuery } from '../store/graph/graphStore.js';
import { Stores } from '../store/stores.js';
import type { TaskContextOptions } from '../retrieve/taskContext.js';
import { runRecipe, type RecipeOutcome } from '../retrieve/runRecipe.js';
import type { SearchOptions } from '../recipe/searchOptions.js';
import type { PresetName, SearchRecipe } from '../recipe/searchRecipe.js';
import { withOverrides } from '../recipe/presets.js';
import { withQueryCache } from '../embed/queryEmbeddingCache.js';
import { embedderFrom, openEngineParts, openStores, releaseStores } from './openStores.js';
import { ContextCache, type ContextCacheOptions } from '../cache/contextCache.js';
import { openAIChat, type JsonChat, type LlmOptions } from '../llm/chatClient.js';
import { checkOptionNames } from '../model/options.js';
import { checkId } from '../model/ids.js';
import { checkImportMarkdown, importMarkdown, type ImportMarkdownOptions, type ImportReport } from '../import/importMarkdown.js';
import { checkImportCode, importCode, type ImportCodeOptions, type ImportCodeReport } from '../import/importCode.js';
import type { CheckCodeOptions, CheckReport } from '../code/checkCode.js';
import { withFreshness } from '../code/bundleFreshness.js';
import { recordFeedback } from '../feedback/recordFeedback.js';
import { GapLog, groupGaps, type GapGroup, type GapLogOptions } from '../feedback/gapLog.js';
import type { Effectiveness } from '../feedback/effectiveness.js';
import { checkDiffSource, contextForDiff, type DiffContextBundle, type DiffSource } from '../code/contextForDiff.js';
import { EMBEDDED_CHARS } from '../retrieve/queryText.js';
import { capText } from '../embed/chunkText.js';
import { checkFolder, TeamFolder, type TeamPaths, type TeamSyncReport } from '../team/teamFolder.js';
import { forgetInFiles, linkInFiles, rememberToFile } from '../team/teamWrites.js';
import type { FileProblem } from '../team/entryFile.js';

import {
  type EmbedderConfig,
  type OpenMemoryOptions,
  type SemanticSearchOptions,
  type MatryoshkaSearchOptions,
  type KeywordSearchOptions,
  type HybridSearchOptions,
  type SearchResults,
  type FeedbackInput,
  type SensitivityOption,
  type RelatedToCodeOptions,
  type FindCodeOptions,
  type IndexOptions,
  type IndexResult,
  type TraverseOptions,
  type TraverseHit,
  type RelatedToCodeHit,
  type CodeReferenceHit,
} from './engineOptions.js';
export type {
  EmbedderConfig,
  OpenMemoryOptions,
  SemanticSearchOptions,
  MatryoshkaSearchOptions,
  KeywordSearchOptions,
  HybridSearchOptions,
  SearchResults,
  FeedbackInput,
  SensitivityOption,
  RelatedToCodeOptions,
  FindCodeOptions,
  IndexOptions,
  IndexResult,
  TraverseOptions,
  TraverseHit,
  RelatedToCodeHit,
  CodeReferenceHit,
} from './engineOptions.js';
export type { SearchHit } from '../model/types.js';

/** Opens (or creates) a memory database folder. Close it when done. */
export async function openMemory(options: OpenMemoryOptions = {}): Promise<MemoryEngine> {
  const { stores, embedder, settings, team, teamEmbedWaitMs } = await openEngineParts(options);
  const engine = new MemoryEngine(stores, embedder, settings);
  if (team) {
    try {
      await engine.followFolder(new TeamFolder(team, teamEmbedWaitMs === undefined ? {} : { embedWaitMs: teamEmbedWaitMs }));
    } catch (e) {
      await engine.close();
      throw e;
    }
  }
  return engine;
}

/** The team memory folder an engine follows (`MemoryEngine.memoryFolder`). */
export interface MemoryFolderStatus extends TeamPaths {
  /** Files skipped at the last sync, with file and line; the rest of memory answers. */
  problems: FileProblem[];
  /** What the last sync read and indexed. */
  lastSync: TeamSyncReport | undefined;
  /** Entries indexed without their text's vector yet: it is computed in the background (docs/team.md, "A pull's vectors"). */
  pendingVectors: number;
}

export class MemoryEngine {
  /** Writes one at a time; reads held only while reembed swaps the folder. */
  private readonly gate = new AccessGate();
  private readonly reading = async () => {
    await this.catchUp();
    return this.gate.reading();
  };
  /** The team memory folder the index follows, in team mode (docs/team.md). */
  private team: TeamFolder | undefined;
  private readonly serialized = <T>(work: () => Promise<T>) => this.gate.serialized(work);
  /** A write whose upsert may share one commit with the others queued with it (engine/groupCommit.ts). */
  private readonly grouped = <T>(work: () => Promise<T>, texts?: readonly string[], opts: Parameters<AccessGate['grouped']>[3] = {}) =>
    this.gate.grouped(
      work,
      (queued) =>
        runInGroups(
          () => this.stores,
          () => this.model,
          queued,
        ),
      texts,
      opts,
    );

  /** A remember's text, embedded while it waits for its turn (engine/groupCommit.ts). */
  private readonly earlyEmbeddings = new EarlyEmbeddings(
    () => this.stores,
    () => this.model,
  );

  private queryEmbedder: Embedder;
  private readonly cache: ContextCache;
  private readonly chat: JsonChat | undefined;
  /** The folder code locations are relative to, when known: bundles then carry freshness. */
  private readonly repo: string | undefined;
  /** Where tasks memory could not answer are logged (`gaps`). */
  private readonly gapLog: GapLog;
  private closed = false;

  /** @internal use openMemory() */
  constructor(
    private stores: Stores,
    private model: Embedder,
    options: { cache?: ContextCacheOptions; llm?: LlmOptions | JsonChat; repo?: string; gaps?: GapLogOptions } = {},
  ) {
    this.repo = options.repo;
    this.gapLog = new GapLog(stores.dir, options.gaps);
    this.queryEmbedder = withQueryCache(model);
    this.cache = new ContextCache(options.cache);
    const llm = options.llm;
    this.chat = llm === undefined ? undefined : 'completeJson' in llm ? llm : openAIChat(llm);
  }

  /** @internal Makes the index follow a team memory folder (openMemory does it in team mode). */
  async followFolder(team: TeamFolder): Promise<TeamSyncReport> {
    this.team = team;
    // Vectors computed in the background are written by a catch-up of their own, not by the next call.
    team.onVectors = () => void this.catchUp().catch(() => undefined);
    return this.serialized(() => team.sync(this.stores, this.embedder));
  }

  /**
   * Brings the index up to the memory folder when a file changed (a stat per directory when none
   * did). Texts that take longer than config memory.embedWaitMs to embed are left to the background.
   */
  private async catchUp(embedWaitMs?: number): Promise<void> {
    const team = this.team;
    if (!team?.changed()) return;
    await this.serialized(async () => {
      if (team.changed()) await team.sync(this.stores, this.embedder, { embedWaitMs: embedWaitMs ?? team.embedWaitMs });
    });
  }

  /**
   * The team memory folder this engine follows, with the files its last sync skipped; null when
   * the folder is not in team mode. Reading it brings the index up to the files first.
   */
  async memoryFolder(): Promise<MemoryFolderStatus | null> {
    await this.catchUp();
    const team = this.team;
    return team ? { ...team.paths, problems: team.problems, lastSync: team.lastSync, pendingVectors: team.pendingVectors } : null;
  }

  /**
   * Checks every file of the team memory folder (`memcore check`): front matter against the
   * schema, ids and file names, ids defined once, links that resolve (in the folder or the
   * store). Null when not in team mode.
   */
  async checkMemoryFolder(): Promise<Awaited<ReturnType<typeof checkFolder>> | null> {
    using _reading = await this.reading();
    if (!this.team) return null;
    // An entry whose file is gone but that others depend on is kept expired: a link to it dangles all the same.
    const now = Date.now();
    return checkFolder(this.team.paths, async (ids) => {
      const known = [...(await this.stores.graph.existingIds('entry', ids))];
      const rows = known.length ? await this.stores.table.read({ ids: known }) : [];
      const found = new Set(rows.filter((r) => r.entry.validTo === null || r.entry.validTo.getTime() > now).map((r) => r.entry.id));
      for (const id of await this.stores.graph.existingIds('path', ids)) found.add(id);
      return found;
    });
  }

  private async embedQuery(query: string, signal?: AbortSignal): Promise<Float32Array> {
    if (typeof query !== 'string' || query.trim() === '') throw invalidInput('query must be a non-empty string');
    throwIfAborted(signal);
    const [vector] = await this.queryEmbedder.embed([capText(query, EMBEDDED_CHARS)], signal);
    return vector!;
  }

  /**
   * The stores behind this engine, for tests that check what is held in memory against the
   * tables. Not part of the API: no stability is promised, and a caller that writes through them
   * bypasses the journal.
   * @internal
   */
  unsafeExposeInternals(): { stores: Stores } {
    return { stores: this.stores };
  }

  /** The database folder. */
  get path(): string {
    return this.stores.dir;
  }

  /** The embedding model of the folder (another one after `reembed`). */
  get embedder(): Embedder {
    return this.model;
  }

  /**
   * Moves the folder to another embedding model: the memory is written into a new folder beside
   * it with `embedder` while this one keeps answering (reads and writes), then a last catch-up
   * and the swap run with writes held back; from then on this engine uses the new model. An
   * interrupted run leaves the new folder, and the next run resumes it. The engine must be the
   * only one open on the folder in this process.
   */
  async reembed(embedder: EmbedderConfig, options: { onProgress?: (message: string) => void } = {}): Promise<ReembedReport> {
    checkOptionNames('reembed', options, ['onProgress']);
    const next = embedderFrom(embedder);
    if (next.id === this.model.id) throw invalidInput(`${this.path} already uses ${this.model.id}`);
    const shared = openStores.get(this.path);
    if (!shared || shared.engines > 1) throw invalidInput('reembed needs the only engine open on the folder in this process');
    const host: ReembedHost = {
      stores: this.stores,
      model: this.model,
      gate: this.gate,
      exportAll: (stores) => reads.exportMemory(stores, { sensitivity: [...SENSITIVITY_LEVELS] }),
      adopt: (stores, model) => {
        this.stores = stores;
        shared.stores = Promise.resolve(stores);
        if (model === this.model) return;
        this.model = model;
        this.queryEmbedder = withQueryCache(model);
        this.cache.clear();
      },
    };
    return reembedInPlace(host, next, options.onProgress);
  }

  /** Reads a memory file (.json, .jsonl, .yaml) and upserts everything in it. All or nothing. */
  ingest(file: string, options: IngestOptions = {}): Promise<IngestReport> {
    if (typeof file !== 'string' || file === '') return Promise.reject(invalidInput('ingest needs a file path'));
    return this.serialized(() => this.bulk(() => writes.ingestFile(this.stores, this.embedder, file, options)));
  }

  /** Upserts a memory document given as an object in the memory file format. */
  ingestDocument(doc: MemoryDocumentRecord, options: IngestOptions & { source?: string } = {}): Promise<IngestReport> {
    // bulk() outside grouped(): the group's commit comes after the work returns.
    return this.bulk(() =>
      this.grouped(() => writes.writeDocument(this.stores, this.embedder, 'ingestDocument', doc, options, writes.INGEST_DOCUMENT_OPTIONS)),
    );
  }

  /**
   * A bulk write (ingest, import, import-code): once it wrote, the folder's last close leaves every
   * snapshot current, so that the next process's first query loads rather than builds or catches up.
   */
  private async bulk<T>(write: () => Promise<T>): Promise<T> {
    const stores = this.stores;
    const before = stores.meta.generation;
    try {
      return await write();
    } finally {
      if (stores.meta.generation !== before) stores.residents.bulkWrote = true;
    }
  }

  /** Upserts entries given in the memory file format (snake_case fields). */
  upsert(entries: EntryRecord[], options: { signal?: AbortSignal } = {}): Promise<IngestReport> {
    return this.grouped(() => writes.writeDocument(this.stores, this.embedder, 'upsert', { entries }, options, ['signal']));
  }

  /** Adds relations given in the memory file format ({ type, from, to, … }). */
  link(relations: RelationRecord[], options: { signal?: AbortSignal } = {}): Promise<IngestReport> {
    return (this.team ? this.serialized : this.grouped)(async () => {
      const team = this.team;
      // In team mode links from entries of the folder go to their files (relations checked first, as a memory file).
      if (team && Array.isArray(relations)) {
        validateMemoryDocument('link', { relations });
        relations = await linkInFiles(team, this.stores, this.embedder, relations);
      }
      return writes.writeDocument(this.stores, this.embedder, 'link', { relations }, options, ['signal']);
    });
  }

  /**
   * Imports markdown documents, files or folders (walked with .gitignore respected): each heading
   * section an entry, decision records and rules files typed by their names, links and
   * "Superseded by ADR-N" as edges. The store follows the files: importing again updates what
   * changed and removes what is gone, embedding only changed text. A document that cannot be read
   * is skipped and reported, and what it wrote before is kept. See docs/import.md.
   */
  importMarkdown(paths: string[], options: ImportMarkdownOptions = {}): Promise<ImportReport> {
    return this.serialized(async () => {
      checkImportMarkdown(paths, options);
      return this.bulk(() => importMarkdown(this.stores, this.embedder, paths, options));
    });
  }

  /**
   * Imports the symbols of a codebase's TypeScript and JavaScript files as code locations (file,
   * symbol, kind, lines, fingerprint), one per source file of any common language too, and links
   * stored entries that name them; every file read goes to the code search index (findCode).
   * Incremental: files whose hash is unchanged are not read; gone files' locations are removed.
   */
  importCode(repo: string, options: ImportCodeOptions): Promise<ImportCodeReport> {
    return this.serialized(async () => {
      checkImportCode(repo, options);
      return this.bulk(() => importCode(this.stores, this.embedder, repo, options));
    });
  }

  /**
   * Classifies every code location (of `codebase`) against the files under `repo`: fresh, moved,
   * drifted or orphaned, with the entries and golden paths that reference each one that is not
   * fresh; `fix` re-anchors moved ones. See docs/code.md.
   */
  checkCode(options: CheckCodeOptions): Promise<CheckReport> {
    return this.serialized(() => writes.checkCodeOf(this.stores, this.embedder, options));
  }

  /**
   * Records how useful an entry was: `useful` true (1), false (0) or a share between. From a bundle
   * (`bundleId`), a rating of the same entry counts once. The entry's effectiveness (a moving
   * average drifting back to neutral) then moves its score by the `effectiveness` weight; its
   * source and core keep one too (`effectivenessReport`). Written through the journal.
   */
  feedback(input: FeedbackInput): Promise<{ entryId: string; recorded: boolean; effectiveness: number; signals: number }> {
    return this.serialized(() => recordFeedback(this.stores, this.gapLog, input));
  }

  /** Every rated entry, source and core with its effectiveness now, least effective first. */
  async effectivenessReport(): Promise<ReturnType<Effectiveness['report']>> {
    using _reading = await this.reading();
    return (await this.stores.effectiveness()).report();
  }

  /** Removes entries from both stores with every edge that touches them. */
  delete(ids: string[]): Promise<{ deleted: number }> {
    return this.serialized(async () => {
      const team = this.team;
      if (!team || !Array.isArray(ids)) return writes.deleteEntries(this.stores, ids);
      // Entries that files hold are deleted by removing their files; the rest from the index.
      let deleted = 0;
      const rest: string[] = [];
      for (const id of ids) {
        checkId('delete', id);
        const known = (await this.stores.graph.existingIds('entry', [id])).size > 0;
        if (known && (await forgetInFiles(team, this.stores, this.embedder, id, 'delete', undefined))) deleted++;
        else rest.push(id);
      }
      return { deleted: deleted + (await writes.deleteEntries(this.stores, rest)).deleted };
    });
  }

  /**
   * Stores one entry in an agent's words with the links it names, auto-links it (unless
   * `autoLink: false`), and reports its id and every edge it has after the write. Validated like
   * a memory file; remembering the same core and title again updates the entry.
   */
  remember(input: RememberInput): Promise<RememberResult> {
    if (!this.team) {
      const texts = writes.rememberedText(input);
      // Its text is embedded from now on, while it waits for the writes before it.
      const embedding = texts && this.earlyEmbeddings.embed(texts);
      return this.grouped(() => writes.remember(this.stores, this.embedder, input), texts, {
        aheadOfReads: true,
        ...(embedding ? { embedding } : {}),
      });
    }
    return this.serialized(() => {
      const team = this.team;
      if (!team) return writes.remember(this.stores, this.embedder, input);
      writes.checkRemember(input);
      return rememberToFile(team, this.stores, this.embedder, input);
    });
  }

  /**
   * Takes an entry out of answers. `supersede` (the default) keeps history: a `retraction` entry
   * holding the reason supersedes it, so `getEntries`, `asOf` queries and the graph still show what
   * was believed and why it stopped; `delete` removes the entry and its edges for good.
   */
  forget(
    id: string,
    options: { reason?: string; mode?: ForgetMode } = {},
  ): Promise<{ id: string; mode: ForgetMode; retractionId?: string }> {
    const work = async () => {
      const team = this.team;
      if (!team) return writes.forget(this.stores, this.embedder, id, options);
      const { mode, reason } = writes.checkForget(id, options);
      return (
        (await forgetInFiles(team, this.stores, this.embedder, id, mode, reason)) ?? writes.forget(this.stores, this.embedder, id, options)
      );
    };
    return this.team ? this.serialized(work) : this.grouped(work, undefined, { aheadOfReads: true });
  }

  /** Entries in effect now (or as of `asOf`) that pass the filters, by core and title; `limit` default 100, at most 10,000. */
  async listEntries(options: ListOptions = {}): Promise<MemoryEntry[]> {
    using _reading = await this.reading();
    return reads.listEntries(this.stores, options);
  }

  /**
   * The static layer of a core's memory, for a system prompt: its entries in effect now, pinned
   * ones first, then the most important (then most confident, most recently changed), as a `<memory>` block
   * of at most `maxTokens` (default 2,000). `entries` lists them all in that order; `text` holds as
   * many as fit and says how many were left out.
   */
  async coreMemory(core: string, options: { maxTokens?: number } = {}): Promise<{ core: string; text: string; entries: MemoryEntry[] }> {
    using _reading = await this.reading();
    return reads.coreMemory(this.stores, core, options);
  }

  /**
   * An entry with its edges, code references, golden paths and what supersedes it; null when
   * unknown or of a sensitivity not asked for. Links to entries of such a sensitivity are left out.
   */
  async entryDetails(id: string, options: SensitivityOption = {}): Promise<EntryDetails | null> {
    using _reading = await this.reading();
    return reads.readEntryDetails(this.stores, id, options, this.repo);
  }

  /**
   * The memory as a memory file document: every entry of the `cores` asked for (all by default)
   * and the sensitivity asked for (public and internal by default), in effect or not, with every
   * code location, golden path and relation among them. Ingested into an empty folder, it gives
   * the same store; `serializeMemoryDocument` writes it as YAML, JSON or JSONL.
   */
  async exportMemory(options: { cores?: string[] } & SensitivityOption = {}): Promise<MemoryDocumentRecord> {
    using _reading = await this.reading();
    return reads.exportMemory(this.stores, options);
  }

  /**
   * A consistent copy of the folder in `dest` (a new or empty folder), taken while writes wait (reads
   * go on), with a manifest of every file's size and checksum, the counts and the embedder, which
   * `restoreMemory` checks. `onProgress` hears each file copied.
   */
  async backup(dest: string, options: { onProgress?: (done: number, total: number) => void } = {}): Promise<BackupManifest> {
    const target = writes.backupTarget(this.path, dest, options);
    return this.serialized(() => writes.backup(this.stores, this.embedder, target, options.onProgress));
  }

  /**
   * `memcore doctor` for a folder this engine has open (a server's): the stores' agreement, the
   * journal, the indexes, and what is held in memory against the table. No repair: that needs the
   * folder to itself (`doctorMemory`).
   */
  async checkHealth(): Promise<DoctorReport> {
    using _reading = await this.reading();
    const report = await checkOpenStores(this.stores);
    const problems = this.team?.problems ?? [];
    if (!this.team) return report;
    const pending = this.team.pendingVectors;
    const findings = [
      ...report.findings,
      // Not a fault: the vectors of a pull's texts are on their way (team/teamFolder.ts).
      ...(pending > 0
        ? [{ check: 'memory vectors', ok: true, message: `${pending} changed entries still being embedded in the background` }]
        : []),
      ...(problems.length === 0
        ? [
            {
              check: 'memory files',
              ok: true,
              message: `${this.team.lastSync?.files.total ?? 0} files under ${this.team.paths.dir} indexed`,
            },
          ]
        : problems.map((p) => ({
            check: 'memory files',
            ok: false,
            message: `${p.file}${p.line !== null ? `:${p.line}` : ''}: ${p.message}`,
          }))),
    ];
    return { ...report, healthy: report.healthy && problems.length === 0, findings };
  }

  /** Entries by id, in the order asked; unknown ids, and entries of a sensitivity not asked for, are left out. */
  async getEntries(ids: string[], options: SensitivityOption = {}): Promise<MemoryEntry[]> {
    using _reading = await this.reading();
    return reads.getEntries(this.stores, ids, options);
  }

  /**
   * Any search, described as a recipe: a preset (`semantic`, `matryoshka`, `keyword`, `hybrid`
   * (default), `find` or `context`) with `overrides` from SearchOptions, checked once by the table
   * every boundary shares. The methods below are these presets; `find` and `context` return the
   * bundle's entries (and go through the bundle cache). See docs/api.md, "Recipes".
   */
  async search(text: string, options: { recipe?: PresetName; overrides?: SearchOptions } = {}): Promise<SearchResults> {
    checkOptionNames('search', options, ['recipe', 'overrides']);
    const recipe = withOverrides(options.recipe ?? 'hybrid', options.overrides, 'search');
    const { hits, notes } = await this.run(text, recipe, options.overrides?.signal);
    return Object.assign([...hits], { notes });
  }

  /** Runs a recipe: a context through the bundle cache, any other search directly. */
  private async run(text: string, recipe: SearchRecipe, signal: AbortSignal | undefined): Promise<RecipeOutcome> {
    if (recipe.expansion || recipe.scoring) {
      const bundle = await this.contextFor(text, recipe, signal);
      return { hits: bundle.entries, notes: bundle.notes ?? [], stage1: 0, bundle };
    }
    using _reading = await this.reading();
    return runRecipe(this.stores, this.queryEmbedder, text, recipe, { signal, chat: this.chat });
  }

  /**
   * Nearest entries to the query by exact cosine similarity on the full vector, filters applied
   * before the limit. Up to `residentMaxEntries`, from memory (a bounded 8-bit scan, then the few
   * rows that can rank read with their float vectors: ~4 ms at 100K entries); past it, a LanceDB
   * scan. `stats().search.exact` says which.
   */
  async semanticSearch(query: string, options: SemanticSearchOptions = {}): Promise<SearchHit[]> {
    return (await this.run(query, withOverrides('semantic', options), options.signal)).hits;
  }

  /**
   * Two-stage search: `candidates` nearest on the small vector (prefix or fitted projection), then
   * a rerank on the full vectors (8-bit, in memory); the hits returned are read with their float
   * vectors and ordered by exact cosine. The query is embedded once.
   */
  async matryoshkaSearch(
    query: string,
    options: MatryoshkaSearchOptions = {},
  ): Promise<{ hits: SearchHit[]; stage1Candidates: number; smallDimensions: number }> {
    const { hits, stage1 } = await this.run(query, withOverrides('matryoshka', options), options.signal);
    return { hits, stage1Candidates: stage1, smallDimensions: this.stores.meta.smallDimensions };
  }

  /** BM25 keyword search over title, aliases and content (an index held in memory). */
  async keywordSearch(query: string, options: KeywordSearchOptions = {}): Promise<SearchHit[]> {
    return (await this.run(query, withOverrides('keyword', options), options.signal)).hits;
  }

  /**
   * Two-stage vector search and keyword search fused (normalised scores weighted 0.3 : 1 by
   * default). When the embedder fails, the keyword (and mention) hits answer alone, with a note in
   * `notes`, unless `strict`.
   */
  async hybridSearch(query: string, options: HybridSearchOptions = {}): Promise<SearchResults> {
    const { hits, notes } = await this.run(query, withOverrides('hybrid', options), options.signal);
    return Object.assign(hits, { notes });
  }

  /** Entries reachable from one entry: distinct, with hop count and the edge path (shortest). */
  async traverse(startId: string, options: TraverseOptions = {}): Promise<TraverseHit[]> {
    using _reading = await this.reading();
    return reads.traverse(this.stores, startId, options);
  }

  /**
   * Entries and the edges among them, to draw: the neighbourhood of `focus` (in effect or not,
   * as `traverse` reaches it) or every entry of `core` in effect. Entries of a sensitivity not
   * asked for are left out with their edges. Past `maxNodes`, the most linked entries are kept.
   */
  async entryGraph(query: EntryGraphQuery, options: SensitivityOption = {}): Promise<EntryGraph> {
    using _reading = await this.reading();
    return reads.entryGraph(this.stores, query, options);
  }

  /** Pattern 1: hybrid seeds expanded through the graph and scored; no code attached. */
  async findWithContext(query: string, options: Omit<TaskContextOptions, 'includeCode'> = {}): Promise<ScoredEntry[]> {
    return (await this.contextFor(query, withOverrides('find', options), options.signal)).entries;
  }

  /**
   * The imported code for a text, best first, one location per file (the file, or its symbol that
   * matches best), each with why: `code-search` (the text's words against paths, symbol names,
   * signatures, doc comments and text), `referenced by <entry>`, `imported by <path>`. See
   * docs/api.md, "Code".
   */
  async findCode(text: string, options: FindCodeOptions = {}): Promise<CodeSearchHit[]> {
    using _reading = await this.reading();
    return reads.findCode(
      this.stores,
      async (q, sensitivity, signal) =>
        (
          await runRecipe(this.stores, this.queryEmbedder, q, withOverrides('hybrid', { limit: 5, sensitivity }), {
            ...(signal ? { signal } : {}),
          })
        ).hits.map((h) => h.entry.id),
      text,
      options,
    );
  }

  /** Pattern 2: entries that reference a file (path substring), ranked by similarity to the query. */
  async findRelatedToCode(filePath: string, query: string, options: RelatedToCodeOptions = {}): Promise<RelatedToCodeHit[]> {
    using _reading = await this.reading();
    return reads.findRelatedToCode(this.stores, (q, signal) => this.embedQuery(q, signal), filePath, query, options);
  }

  /**
   * Loads now what queries hold in memory, rather than on the first queries: for a process that
   * stays up (the MCP server and `memcore serve` call it when they start). Until the parts a
   * snapshot hands over later are in, a fresh process reads each bundle's entries from LanceDB
   * (~3–4 ms a query at 100K entries); a one-shot process, which never needs them, does not call
   * it. Queries may run meanwhile: they share the loads. A local embedding model is loaded too,
   * with its worker threads for the writes (nothing for a remote model), so that neither the first
   * query nor the first writes wait for it (docs/performance.md).
   */
  async warm(): Promise<void> {
    const model = warmUpEmbedder(this.model);
    {
      using _reading = await this.reading();
      await this.stores.warm();
    }
    await model;
  }

  /** Everything an agent should know before the task: entries with reasons, code, golden paths. Cached (see OpenMemoryOptions.cache). */
  async buildTaskContext(task: string, options: TaskContextOptions = {}): Promise<ContextBundle> {
    return this.contextFor(task, withOverrides('context', options), options.signal);
  }

  /** A context recipe's bundle, through the cache; a `context` one (buildTaskContext) is logged for `gaps`. */
  private async contextFor(task: string, recipe: SearchRecipe, signal: AbortSignal | undefined): Promise<ContextBundle> {
    using _reading = await this.reading();
    if (typeof task !== 'string' || task.trim() === '') throw invalidInput('task must be a non-empty string');
    const key = ContextCache.key(task, recipe, await this.stores.currentGeneration());
    const bundle = await this.cache.getOrCompute(
      key,
      async (signal) => (await runRecipe(this.stores, this.queryEmbedder, task, recipe, { signal, chat: this.chat })).bundle!,
      signal,
    );
    if (recipe.preset === 'context') this.gapLog.record(bundle, recipe.filter.cores);
    // After the cache: files change without a write to the store.
    const fresh = this.repo && recipe.attachCode ? await withFreshness(bundle, this.repo, [this.stores.dir]) : bundle;
    const skipped = this.team?.notes() ?? [];
    return skipped.length ? { ...fresh, notes: [...(fresh.notes ?? []), ...skipped] } : fresh;
  }

  /**
   * The context for a change: `source` is a diff's text, or `{ repo, range, staged }` to run
   * `git diff` (the working tree by default). The entries that reference the changed files and the
   * symbols the change touches come first (why: `code`), then what the pipeline finds for the
   * task the diff stands for. The bundle lists the `changes`. Not cached. See docs/code.md.
   */
  async contextForDiff(source: DiffSource, options: TaskContextOptions = {}): Promise<DiffContextBundle> {
    using _reading = await this.reading();
    source = await checkDiffSource(source);
    const recipe = withOverrides('context', options, 'contextForDiff');
    const bundle = await contextForDiff(this.stores, this.queryEmbedder, source, recipe, { signal: options.signal, chat: this.chat });
    const repo = typeof source === 'string' ? this.repo : source.repo;
    return repo && recipe.attachCode ? withFreshness(bundle, repo, [this.stores.dir]) : bundle;
  }

  /**
   * The tasks memory could not answer (empty or low-confidence bundles), logged as they were asked
   * and kept `gaps.retentionDays`, with similar tasks grouped by their embeddings: the lessons
   * nobody has written yet. `since` keeps the later ones.
   */
  async gaps(options: { since?: Date } = {}): Promise<GapGroup[]> {
    using _reading = await this.reading();
    return groupGaps(await this.gapLog.read(gapsOptions(options).since), this.queryEmbedder);
  }

  /** Golden paths whose name, concept, description or step key concepts mention any of the concepts. */
  async findGoldenPaths(concepts: string[]): Promise<(GoldenPath & { matched: number })[]> {
    using _reading = await this.reading();
    if (!Array.isArray(concepts) || concepts.length === 0 || concepts.some((c) => typeof c !== 'string' || c.trim() === '')) {
      throw invalidInput('findGoldenPaths needs a list of non-empty concepts');
    }
    return this.stores.graph.findGoldenPaths(concepts);
  }

  /**
   * Builds or rebuilds the indexes (scalar indexes on filter columns, ANN on vector_small from
   * `annMinRows` entries), refits the small-vector projection, and writes the snapshots of the
   * structures held in memory, so that the next process to open the folder loads them instead of
   * building them (see "Snapshots" in docs/storage.md). `onProgress` hears how far the refit
   * has come, every 10,000 entries, and when the index build starts.
   */
  index(options: IndexOptions = {}): Promise<IndexResult> {
    return this.serialized(() => indexStore(this.stores, options));
  }

  /** A golden path with its steps in order, or null. */
  async getGoldenPath(id: string): Promise<GoldenPath | null> {
    using _reading = await this.reading();
    checkId('getGoldenPath', id);
    return this.stores.graph.getGoldenPath(id);
  }

  /** Entries that reference matching code (filePath matches as a substring), most relevant first. */
  async findByCodeReference(query: CodeReferenceQuery, options: SensitivityOption = {}): Promise<CodeReferenceHit[]> {
    using _reading = await this.reading();
    return reads.findByCodeReference(this.stores, query, options);
  }

  /** Counts of what the folder holds, the embedder, the generation, how searches run and how each structure in memory was loaded. */
  async stats(): Promise<StoreStats> {
    using _reading = await this.reading();
    const stats = await reads.stats(this.stores, this.embedder);
    return this.team ? { ...stats, pendingVectors: this.team.pendingVectors } : stats;
  }

  /** Waits for pending writes; the stores close with the last engine open on the folder. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The vectors still being computed are written before the folder closes (a process that exits has them all).
    if (this.team) {
      await this.team.settled();
      await this.catchUp(Infinity).catch(() => undefined);
    }
    await this.gate.writesDone();
    await this.gapLog.settled();
    this.cache.clear();
    this.team?.close();
    await releaseStores(this.stores.dir);
  }
}
