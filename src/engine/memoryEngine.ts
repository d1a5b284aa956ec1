import { resolve, sep } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { indexDocument, type IngestOptions, type IngestReport } from '../ingest/indexer.js';
import { sourceKeyOf } from '../ingest/sourceKey.js';
import { loadMemoryFile } from '../ingest/loadMemoryFile.js';
import { invalidInput, MemcoreError, requireFolder, throwIfAborted } from '../model/errors.js';
import { validateMemoryDocument, type EntryRecord, type MemoryDocumentRecord, type RelationRecord } from '../model/memoryFile.js';
import type { RememberInput, RememberResult } from './remember.js';
import { entryDetails, type EntryDetails } from './entryDetails.js';
import { namedLinks, traverseFrom } from './visibility.js';
import { rememberEntry, retractEntry } from './rememberEntry.js';
import { ENTRY_GRAPH_DEFAULT_NODES, ENTRY_GRAPH_MAX_NODES, sampleEntryGraph, type EntryGraph, type EntryGraphQuery } from './entryGraph.js';
import { exportDocument } from '../ops/export.js';
import { copyStore, type BackupManifest } from '../ops/backup.js';
import { checkOpenStores, type DoctorReport } from '../ops/doctor.js';
import { copyInto, dropRemoved, reembedFolder, swapFolders, type ReembedReport } from '../ops/reembed.js';
import {
  ENTRY_EDGE_TYPES,
  SENSITIVITY_LEVELS,
  type Sensitivity,
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
import { relevanceFloor } from '../retrieve/relevance.js';
import { stage1CandidatesFor } from '../retrieve/stage1Calibration.js';
import { makeHit } from '../retrieve/candidate.js';
import { hydrateHits } from '../retrieve/hydrateHits.js';
import {
  resolveFilter,
  resolveSensitivity,
  SEARCH_FILTER_OPTIONS,
  type SearchFilterOptions,
  type SearchOptions,
} from '../recipe/searchOptions.js';
import type { PresetName, SearchRecipe } from '../recipe/searchRecipe.js';
import { withOverrides } from '../recipe/presets.js';
import { exactNearest } from '../retrieve/vectorCandidates.js';
import { withQueryCache } from '../embed/queryEmbeddingCache.js';
import { embedderFrom, openEngineParts, openStores, releaseStores } from './openStores.js';
import { ContextCache, type ContextCacheOptions } from '../cache/contextCache.js';
import { openAIChat, type JsonChat, type LlmOptions } from '../llm/chatClient.js';
import { checkOptionNames } from '../model/options.js';
import { checkId } from '../model/ids.js';
import { checkImportMarkdown, importMarkdown, type ImportMarkdownOptions, type ImportReport } from '../import/importMarkdown.js';
import { checkImportCode, importCode, type ImportCodeOptions, type ImportCodeReport } from '../import/importCode.js';
import { checkCode, type CheckCodeOptions, type CheckReport } from '../code/checkCode.js';
import { withFreshness } from '../code/bundleFreshness.js';
import { CodeIndex } from '../code/codeIndex.js';
import { codeFreshness } from '../code/codeFreshness.js';
import { recordFeedback } from '../feedback/recordFeedback.js';
import { GapLog, groupGaps, type GapGroup, type GapLogOptions } from '../feedback/gapLog.js';
import { readSignals, type Effectiveness } from '../feedback/effectiveness.js';
import { checkDiffSource, contextForDiff, type DiffContextBundle, type DiffSource } from '../code/contextForDiff.js';
import { EMBEDDED_CHARS } from '../retrieve/queryText.js';
import { capText } from '../embed/chunkText.js';
import { coreMemoryBlock } from '../format/coreMemoryBlock.js';

import {
  TRAVERSE_OPTIONS,
  RELATED_TO_CODE_OPTIONS,
  SENSITIVITY_OPTION,
  CODE_REFERENCE_QUERY,
  INGEST_OPTIONS,
  CHECK_CODE_OPTIONS,
  INDEX_OPTIONS,
  REMEMBER_FIELDS,
  CODE_REFERENCE_FIELDS,
  checkIngestOptions,
  fingerprinted,
  checkLimit,
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
  const { stores, embedder, settings } = await openEngineParts(options);
  return new MemoryEngine(stores, embedder, settings);
}

export class MemoryEngine {
  /** Writes run one at a time: each waits for the one before it. */
  private writeQueue: Promise<unknown> = Promise.resolve();

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
    const from = this.model.id;
    if (next.id === from) throw invalidInput(`${this.path} already uses ${from}`);
    const shared = openStores.get(this.path);
    if (!shared || shared.engines > 1) throw invalidInput('reembed needs the only engine open on the folder in this process');
    const { residentMaxEntries, scanMaxEntries, scanThreadMinEntries } = this.stores;
    const settings = { residentMaxEntries, scanMaxEntries, scanThreadMinEntries };
    const built = reembedFolder(this.path, next.id);
    const all: Sensitivity[] = [...SENSITIVITY_LEVELS];
    const target = await Stores.open(built, next, settings);
    let targetOpen = true;
    try {
      let embedded = await copyInto(target, next, await this.exportMemory({ sensitivity: all }), options.onProgress);
      return await this.serialized(async () => {
        options.onProgress?.('catching up with writes made meanwhile, then swapping folders …');
        const doc = await this.exportMemory({ sensitivity: all });
        embedded += await copyInto(target, next, doc);
        await dropRemoved(target, doc);
        await target.close();
        targetOpen = false;
        // Reads wait the few milliseconds of the swap rather than meet a closed folder.
        return this.withReadsHeld(async () => {
          const dir = this.path;
          await this.stores.close();
          try {
            await swapFolders(dir, built);
          } catch (e) {
            this.stores = await Stores.open(dir, this.model, settings);
            shared.stores = Promise.resolve(this.stores);
            throw e;
          }
          this.stores = await Stores.open(dir, next, settings);
          shared.stores = Promise.resolve(this.stores);
          this.model = next;
          this.queryEmbedder = withQueryCache(next);
          this.cache.clear();
          return { from, to: next.id, entries: doc.entries!.length, embedded };
        });
      });
    } finally {
      if (targetOpen) await target.close();
    }
  }

  /** Reads in flight; a folder swap (reembed) waits for them, and holds new ones back at its gate. */
  private readsInFlight = 0;
  private swapGate: Promise<void> | undefined;
  private readsDrained: (() => void) | undefined;

  /** Enters a read (released when the returned value is disposed): never while the folder is being swapped. */
  private async reading(): Promise<Disposable> {
    while (this.swapGate) await this.swapGate;
    this.readsInFlight++;
    return { [Symbol.dispose]: () => void (--this.readsInFlight === 0 && this.readsDrained?.()) };
  }

  /** Runs `swap` with no read in flight and new reads waiting until it is done. */
  private async withReadsHeld<T>(swap: () => Promise<T>): Promise<T> {
    let open!: () => void;
    this.swapGate = new Promise<void>((resolve) => (open = resolve));
    try {
      if (this.readsInFlight > 0) await new Promise<void>((resolve) => (this.readsDrained = resolve));
      return await swap();
    } finally {
      this.readsDrained = undefined;
      this.swapGate = undefined;
      open();
    }
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writeQueue.then(work, work);
    this.writeQueue = run.catch(() => undefined);
    return run;
  }

  /** Reads a memory file (.json, .jsonl, .yaml) and upserts everything in it. All or nothing. */
  ingest(file: string, options: IngestOptions = {}): Promise<IngestReport> {
    if (typeof file !== 'string' || file === '') return Promise.reject(invalidInput('ingest needs a file path'));
    return this.serialized(async () => {
      checkIngestOptions('ingest', options, INGEST_OPTIONS);
      const { document, external } = await loadMemoryFile(file);
      const doc = await fingerprinted('ingest', document, options.repo);
      return indexDocument(this.stores, this.embedder, sourceKeyOf(file, this.stores.dir), doc, external, {
        ...options,
        recordSource: true,
        inputName: file,
      });
    });
  }

  /** Upserts a memory document given as an object in the memory file format. */
  ingestDocument(doc: MemoryDocumentRecord, options: IngestOptions & { source?: string } = {}): Promise<IngestReport> {
    if (options.sync && options.source === undefined)
      return Promise.reject(invalidInput('ingestDocument: sync needs a source (what the store should match)'));
    return this.writeDocument(
      'ingestDocument',
      doc,
      options.source ?? 'api',
      options,
      [...INGEST_OPTIONS, 'source'],
      options.source !== undefined,
    );
  }

  /** `recordSource`: keep what `source` wrote (a named document), which its later syncs need. */
  private writeDocument(
    where: string,
    doc: unknown,
    source: string,
    options: IngestOptions,
    allowed: readonly string[],
    recordSource = false,
  ): Promise<IngestReport> {
    return this.serialized(async () => {
      checkIngestOptions(where, options, allowed);
      if (typeof source !== 'string' || source === '') throw invalidInput(`${where}: source must be a non-empty string`);
      const { document, external } = validateMemoryDocument(source, doc);
      const { source: _label, ...ingest } = options as IngestOptions & { source?: string };
      return indexDocument(this.stores, this.embedder, source, await fingerprinted(where, document, options.repo), external, {
        ...ingest,
        recordSource,
      });
    });
  }

  /** Upserts entries given in the memory file format (snake_case fields). */
  upsert(entries: EntryRecord[], options: { signal?: AbortSignal } = {}): Promise<IngestReport> {
    return this.writeDocument('upsert', { entries }, 'upsert', options, ['signal']);
  }

  /** Adds relations given in the memory file format ({ type, from, to, … }). */
  link(relations: RelationRecord[], options: { signal?: AbortSignal } = {}): Promise<IngestReport> {
    return this.writeDocument('link', { relations }, 'link', options, ['signal']);
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
      return importMarkdown(this.stores, this.embedder, paths, options);
    });
  }

  /**
   * Imports the symbols of a codebase's TypeScript and JavaScript files as code locations (file,
   * symbol, kind, lines, fingerprint), one per file too, and links stored entries that name them.
   * Incremental: files whose hash is unchanged are not read; gone files' locations are removed.
   */
  importCode(repo: string, options: ImportCodeOptions): Promise<ImportCodeReport> {
    return this.serialized(async () => {
      checkImportCode(repo, options);
      return importCode(this.stores, this.embedder, repo, options);
    });
  }

  /**
   * Classifies every code location (of `codebase`) against the files under `repo`: fresh, moved,
   * drifted or orphaned, with the entries and golden paths that reference each one that is not
   * fresh; `fix` re-anchors moved ones. See docs/code.md.
   */
  checkCode(options: CheckCodeOptions): Promise<CheckReport> {
    return this.serialized(async () => {
      checkOptionNames('checkCode', options, CHECK_CODE_OPTIONS);
      if (typeof options.repo !== 'string' || options.repo === '')
        throw invalidInput('checkCode needs repo: the folder code locations are relative to');
      const repo = await requireFolder('checkCode', options.repo);
      if (options.codebase !== undefined) checkId('checkCode: codebase', options.codebase);
      if (options.fix !== undefined && typeof options.fix !== 'boolean') throw invalidInput('checkCode: fix must be true or false');
      return checkCode(this.stores, this.embedder, { ...options, repo });
    });
  }

  /**
   * Records how useful an entry was: `useful` true (1), false (0) or a share between. From a bundle
   * (`bundleId`), a rating of the same entry counts once. The entry's effectiveness (a moving
   * average drifting back to neutral) then moves its score by the `effectiveness` weight; its
   * source and core keep one too (`effectivenessReport`). Written through the journal.
   */
  feedback(input: FeedbackInput): Promise<{ entryId: string; recorded: boolean; effectiveness: number; signals: number }> {
    return this.serialized(async () => {
      return recordFeedback(this.stores, this.gapLog, input);
    });
  }

  /** Every rated entry, source and core with its effectiveness now, least effective first. */
  async effectivenessReport(): Promise<ReturnType<Effectiveness['report']>> {
    using _reading = await this.reading();
    return (await this.stores.effectiveness()).report();
  }

  /** Removes entries from both stores with every edge that touches them. */
  delete(ids: string[]): Promise<{ deleted: number }> {
    if (!Array.isArray(ids)) return Promise.reject(invalidInput('delete needs a list of entry ids'));
    return this.serialized(async () => {
      ids.forEach((id, i) => checkId(`delete: ids[${i}]`, id));
      const found = await this.stores.table.read({ ids });
      if (found.length > 0) await this.stores.apply({ op: 'delete', ids: found.map((f) => f.entry.id) });
      return { deleted: found.length };
    });
  }

  /**
   * Stores one entry in an agent's words with the links it names, auto-links it (unless
   * `autoLink: false`), and reports its id and every edge it has after the write. Validated like
   * a memory file; remembering the same core and title again updates the entry.
   */
  remember(input: RememberInput): Promise<RememberResult> {
    return this.serialized(async () => {
      checkOptionNames('remember', input, REMEMBER_FIELDS);
      input.code?.forEach((c, i) => checkOptionNames(`remember.code[${i}]`, c, CODE_REFERENCE_FIELDS));
      if (input.autoLink !== undefined && typeof input.autoLink !== 'boolean')
        throw invalidInput('remember: autoLink must be true or false');
      return rememberEntry(this.stores, this.embedder, input);
    });
  }

  /**
   * Takes an entry out of answers. `supersede` (the default) keeps history: a `retraction` entry
   * holding the reason supersedes it, so `getEntries`, `asOf` queries and the graph still show what
   * was believed and why it stopped; `delete` removes the entry and its edges for good.
   */
  forget(
    id: string,
    options: { reason?: string; mode?: 'supersede' | 'delete' } = {},
  ): Promise<{ id: string; mode: 'supersede' | 'delete'; retractionId?: string }> {
    checkOptionNames('forget', options, ['reason', 'mode']);
    const mode = options.mode ?? 'supersede';
    if (mode !== 'supersede' && mode !== 'delete')
      return Promise.reject(invalidInput(`forget: mode must be supersede or delete, got ${JSON.stringify(mode)}`));
    checkId('forget', id);
    if (mode === 'delete') {
      return this.delete([id]).then(({ deleted }) => {
        if (deleted === 0) throw new MemcoreError(`no entry with id "${id}"`, 'NOT_FOUND');
        return { id, mode };
      });
    }
    const reason = options.reason;
    if (typeof reason !== 'string' || reason.trim() === '')
      return Promise.reject(invalidInput("forget: a reason is required to supersede an entry (it is kept as the retraction's content)"));
    return this.serialized(async () => {
      return { id, mode, retractionId: await retractEntry(this.stores, this.embedder, id, reason) };
    });
  }

  /** Entries in effect now (or as of `asOf`) that pass the filters, by core and title; `limit` default 100, at most 10,000. */
  async listEntries(options: SearchFilterOptions & { limit?: number; offset?: number } = {}): Promise<MemoryEntry[]> {
    using _reading = await this.reading();
    checkOptionNames('listEntries', options, [...SEARCH_FILTER_OPTIONS, 'limit', 'offset']);
    const limit = options.limit === undefined ? 100 : checkLimit(options.limit);
    const offset = options.offset ?? 0;
    if (!Number.isInteger(offset) || offset < 0) throw invalidInput(`offset must be a whole number ≥ 0, got ${JSON.stringify(offset)}`);
    const rows = (await this.stores.table.read(resolveFilter(options))).map((s) => s.entry);
    rows.sort((a, b) => a.coreId.localeCompare(b.coreId) || a.title.localeCompare(b.title) || a.id.localeCompare(b.id));
    return rows.slice(offset, offset + limit);
  }

  /**
   * The static layer of a core's memory, for a system prompt: its entries in effect now, pinned
   * ones first, then the most important (then most confident, most recently changed), as a `<memory>` block
   * of at most `maxTokens` (default 2,000). `entries` lists them all in that order; `text` holds as
   * many as fit and says how many were left out.
   */
  async coreMemory(core: string, options: { maxTokens?: number } = {}): Promise<{ core: string; text: string; entries: MemoryEntry[] }> {
    using _reading = await this.reading();
    checkOptionNames('coreMemory', options, ['maxTokens']);
    checkId('coreMemory', core);
    const maxTokens = options.maxTokens ?? 2000;
    if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 1_000_000)
      throw invalidInput(`maxTokens must be an integer from 1 to 1000000, got ${JSON.stringify(maxTokens)}`);
    const entries = (await this.stores.table.read(resolveFilter({ cores: [core] }))).map((s) => s.entry);
    return coreMemoryBlock(core, entries, maxTokens);
  }

  /**
   * An entry with its edges, code references, golden paths and what supersedes it; null when
   * unknown or of a sensitivity not asked for. Links to entries of such a sensitivity are left out.
   */
  async entryDetails(id: string, options: SensitivityOption = {}): Promise<EntryDetails | null> {
    using _reading = await this.reading();
    checkId('entryDetails', id);
    checkOptionNames('entryDetails', options, SENSITIVITY_OPTION);
    const [entry] = (await this.stores.table.read({ ids: [id], sensitivity: resolveSensitivity(options.sensitivity) })).map((s) => s.entry);
    if (!entry) return null;
    const details = await entryDetails(this.stores.graph, entry);
    const { links, named } = await namedLinks(this.stores, id, details.links, resolveSensitivity(options.sensitivity));
    const repo = this.repo;
    const index = repo && details.code.length > 0 ? new CodeIndex(repo, [this.stores.dir]) : undefined;
    const code = index
      ? await Promise.all(details.code.map(async (c) => ({ ...c, freshness: (await codeFreshness(c.code, index)).status })))
      : details.code;
    return { ...details, links, code, supersededBy: details.supersededBy && named(details.supersededBy) ? details.supersededBy : null };
  }

  /**
   * The memory as a memory file document: every entry of the `cores` asked for (all by default)
   * and the sensitivity asked for (public and internal by default), in effect or not, with every
   * code location, golden path and relation among them. Ingested into an empty folder, it gives
   * the same store; `serializeMemoryDocument` writes it as YAML, JSON or JSONL.
   */
  async exportMemory(options: { cores?: string[] } & SensitivityOption = {}): Promise<MemoryDocumentRecord> {
    using _reading = await this.reading();
    checkOptionNames('exportMemory', options, ['cores', 'sensitivity']);
    const filter = resolveFilter({ ...(options.cores ? { cores: options.cores } : {}), ...options });
    const entries = (
      await this.stores.table.read({ ...(filter.cores ? { cores: filter.cores } : {}), sensitivity: filter.sensitivity })
    ).map((s) => s.entry);
    const graph = this.stores.graph;
    return exportDocument(
      entries,
      await graph.allCodeLocations(),
      await graph.allGoldenPaths(),
      await graph.allRelations(),
      await readSignals(this.stores.dir),
    );
  }

  /**
   * A consistent copy of the folder in `dest` (a new or empty folder), taken while writes wait (reads
   * go on), with a manifest of every file's size and checksum, the counts and the embedder, which
   * `restoreMemory` checks. `onProgress` hears each file copied.
   */
  backup(dest: string, options: { onProgress?: (done: number, total: number) => void } = {}): Promise<BackupManifest> {
    checkOptionNames('backup', options, ['onProgress']);
    if (typeof dest !== 'string' || dest === '') return Promise.reject(invalidInput('backup needs a destination folder'));
    const target = resolve(dest);
    if (target === this.path || target.startsWith(this.path + sep))
      return Promise.reject(invalidInput(`a backup cannot go inside the folder it copies (${this.path})`));
    return this.serialized(async () => {
      await this.stores.graph.checkpoint();
      const s = await this.stats();
      const relations = Object.values(s.relations).reduce((a, b) => a + b, 0);
      const counts = { entries: s.entries, codeLocations: s.codeLocations, goldenPaths: s.goldenPaths, relations };
      return copyStore(this.path, target, { embedder: s.embedder, generation: s.generation, counts }, options.onProgress);
    });
  }

  /**
   * `memcore doctor` for a folder this engine has open (a server's): the stores' agreement, the
   * journal, the indexes, and what is held in memory against the table. No repair: that needs the
   * folder to itself (`doctorMemory`).
   */
  async checkHealth(): Promise<DoctorReport> {
    using _reading = await this.reading();
    return checkOpenStores(this.stores);
  }

  /** Entries by id, in the order asked; unknown ids, and entries of a sensitivity not asked for, are left out. */
  async getEntries(ids: string[], options: SensitivityOption = {}): Promise<MemoryEntry[]> {
    using _reading = await this.reading();
    checkOptionNames('getEntries', options, SENSITIVITY_OPTION);
    if (!Array.isArray(ids)) throw invalidInput('getEntries needs a list of entry ids');
    ids.forEach((id, i) => checkId(`getEntries: ids[${i}]`, id));
    const sensitivity = resolveSensitivity(options.sensitivity);
    const found = new Map((await this.stores.table.read({ ids, sensitivity })).map((s) => [s.entry.id, s.entry]));
    return ids.flatMap((id) => found.get(id) ?? []);
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
    checkOptionNames('traverse', options, TRAVERSE_OPTIONS);
    checkId('traverse', startId);
    const depth = options.depth ?? 2;
    if (!Number.isInteger(depth) || depth < 1 || depth > 10)
      throw invalidInput(`depth must be an integer from 1 to 10, got ${JSON.stringify(depth)}`);
    const edgeTypes = options.relationTypes ?? [...ENTRY_EDGE_TYPES];
    for (const t of edgeTypes) if (!ENTRY_EDGE_TYPES.includes(t)) throw invalidInput(`relationTypes: unknown type ${JSON.stringify(t)}`);
    return traverseFrom(this.stores, startId, {
      depth,
      edgeTypes,
      direction: options.direction ?? 'both',
      sensitivity: resolveSensitivity(options.sensitivity),
    });
  }

  /**
   * Entries and the edges among them, to draw: the neighbourhood of `focus` (in effect or not,
   * as `traverse` reaches it) or every entry of `core` in effect. Entries of a sensitivity not
   * asked for are left out with their edges. Past `maxNodes`, the most linked entries are kept.
   */
  async entryGraph(query: EntryGraphQuery, options: SensitivityOption = {}): Promise<EntryGraph> {
    checkOptionNames('entryGraph', query, 'focus' in query ? ['focus', 'depth', 'maxNodes'] : ['core', 'maxNodes']);
    checkOptionNames('entryGraph options', options, SENSITIVITY_OPTION);
    const maxNodes = query.maxNodes ?? ENTRY_GRAPH_DEFAULT_NODES;
    if (!Number.isInteger(maxNodes) || maxNodes < 1 || maxNodes > ENTRY_GRAPH_MAX_NODES)
      throw invalidInput(`maxNodes must be an integer from 1 to ${ENTRY_GRAPH_MAX_NODES}, got ${JSON.stringify(maxNodes)}`);
    let entries: MemoryEntry[];
    if ('focus' in query) {
      const depth = query.depth ?? 1;
      if (!Number.isInteger(depth) || depth < 1 || depth > 3)
        throw invalidInput(`depth must be an integer from 1 to 3, got ${JSON.stringify(depth)}`);
      const reached = await this.traverse(query.focus, { depth, ...options });
      entries = [...(await this.getEntries([query.focus], options)), ...reached.map((r) => r.entry)];
    } else {
      checkId('entryGraph: core', query.core);
      using _reading = await this.reading();
      entries = (await this.stores.table.read(resolveFilter({ cores: [query.core], ...options }))).map((s) => s.entry);
    }
    using _reading = await this.reading();
    const edges = await this.stores.graph.edgesAmong(
      entries.map((e) => e.id),
      ENTRY_EDGE_TYPES,
    );
    return sampleEntryGraph(entries, edges, maxNodes, 'focus' in query ? query.focus : undefined);
  }

  /** Pattern 1: hybrid seeds expanded through the graph and scored; no code attached. */
  async findWithContext(query: string, options: Omit<TaskContextOptions, 'includeCode'> = {}): Promise<ScoredEntry[]> {
    return (await this.contextFor(query, withOverrides('find', options), options.signal)).entries;
  }

  /** Pattern 2: entries that reference a file (path substring), ranked by similarity to the query. */
  async findRelatedToCode(filePath: string, query: string, options: RelatedToCodeOptions = {}): Promise<RelatedToCodeHit[]> {
    using _reading = await this.reading();
    checkOptionNames('findRelatedToCode', options, RELATED_TO_CODE_OPTIONS);
    if (typeof filePath !== 'string' || filePath === '') throw invalidInput('filePath must be a non-empty string');
    const limit = checkLimit(options.limit);
    const vector = await this.embedQuery(query, options.signal);
    const refs = await this.stores.graph.findByCodeReference({ filePath });
    throwIfAborted(options.signal);
    // The exact search, over the referencing entries only: no row is read but the hits'.
    const filter = {
      ids: [...new Set(refs.map((r) => r.entryId))],
      validAt: new Date(),
      sensitivity: resolveSensitivity(options.sensitivity),
    };
    const { hits } = await exactNearest(this.stores, vector, {
      filter,
      limit,
      threshold: -1,
      keep: async (h) => h,
      signal: options.signal,
    });
    return hits.map(({ entry, similarity }) => ({
      entry,
      similarity,
      references: refs.filter((r) => r.entryId === entry.id).map((r) => ({ code: r.code, relevance: r.relevance })),
    }));
  }

  /** Everything an agent should know before the task: entries with reasons, code, golden paths. Cached (see OpenMemoryOptions.cache). */
  async buildTaskContext(task: string, options: TaskContextOptions = {}): Promise<ContextBundle> {
    return this.contextFor(task, withOverrides('context', options), options.signal);
  }

  /**
   * Every structure a context query holds in memory, loaded (`index` does, then writes their
   * snapshots). Queries load them as their stages need them: loading them all at once on the first
   * query was tried and was no faster (the 100K bench store, open + first query from snapshots
   * 0.86–0.89 s one by one, 0.90–0.92 s at once, and ~50 MB more RSS).
   */
  private loadResident(): Promise<unknown> {
    return Promise.all([this.stores.columns(), this.stores.keywords(), this.stores.names(), this.stores.graph.warm()]);
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
    if (recipe.preset === 'context') await this.gapLog.record(bundle, recipe.filter.cores);
    // After the cache: files change without a write to the store.
    return this.repo && recipe.attachCode ? withFreshness(bundle, this.repo, [this.stores.dir]) : bundle;
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
    checkOptionNames('gaps', options, ['since']);
    if (options.since !== undefined && !(options.since instanceof Date && Number.isFinite(options.since.getTime())))
      throw invalidInput('gaps: since must be a valid Date');
    return groupGaps(await this.gapLog.read(options.since), this.queryEmbedder);
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
    return this.serialized(async () => {
      checkOptionNames('index', options, INDEX_OPTIONS);
      if (options.annMinRows !== undefined && !(Number.isInteger(options.annMinRows) && options.annMinRows >= 0))
        throw invalidInput(`annMinRows must be a whole number ≥ 0, got ${JSON.stringify(options.annMinRows)}`);
      const { onProgress } = options;
      await this.stores.refitProjection({
        onProgress: onProgress && ((done, total) => onProgress(`small vectors re-derived: ${done}/${total}`)),
      });
      onProgress?.('building indexes …');
      const built = await this.stores.table.buildIndexes({ annMinRows: options.annMinRows ?? 50_000 });
      onProgress?.('writing snapshots …');
      await this.loadResident();
      // Derived from the keyword index and the columns and kept in their snapshots: a fresh
      // process's first query (or matryoshkaSearch) then skips measuring them.
      relevanceFloor(await this.stores.keywords());
      await stage1CandidatesFor(this.stores, 10);
      const snapshots = (await this.stores.residents.writeSnapshots({ rewrite: true })).map(({ key, bytes }) => ({
        structure: key,
        bytes,
      }));
      return { ...built, projection: this.stores.projection.kind, snapshots };
    });
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
    checkOptionNames('findByCodeReference', query, CODE_REFERENCE_QUERY);
    checkOptionNames('findByCodeReference options', options, SENSITIVITY_OPTION);
    for (const k of ['filePath', 'symbol', 'codebaseId'] as const) {
      if (query[k] !== undefined && (typeof query[k] !== 'string' || query[k] === ''))
        throw invalidInput(`${k} must be a non-empty string`);
    }
    const refs = await this.stores.graph.findByCodeReference(query);
    const ids = [...new Set(refs.map((r) => r.entryId))];
    const read = await hydrateHits(
      this.stores,
      ids.map((id) => makeHit(id, 0, [])),
      { filter: { sensitivity: resolveSensitivity(options.sensitivity) } },
    );
    const entries = new Map(read.map((h) => [h.id, h.entry]));
    return refs.flatMap((r) => {
      const entry = entries.get(r.entryId);
      return entry ? [{ entry, relevance: r.relevance, code: r.code }] : [];
    });
  }

  async stats(): Promise<StoreStats> {
    using _reading = await this.reading();
    const { entries, cores, entryTypes } = await this.stores.table.tally();
    const graph = await this.stores.graph.counts();
    if (graph.entries !== entries) {
      throw new MemcoreError(`stores disagree: LanceDB holds ${entries} entries, Kuzu ${graph.entries}`, 'STORE');
    }
    return {
      entries,
      cores,
      entryTypes,
      codeLocations: graph.codeLocations,
      goldenPaths: graph.goldenPaths,
      relations: graph.relations,
      embedder: { id: this.embedder.id, dimensions: this.embedder.dimensions },
      generation: await this.stores.currentGeneration(),
      search: await this.stores.searchRunsOn(entries),
      resident: Object.fromEntries(this.stores.residents.loads),
    };
  }

  /** Waits for pending writes; the stores close with the last engine open on the folder. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writeQueue;
    this.cache.clear();
    await releaseStores(this.stores.dir);
  }
}
