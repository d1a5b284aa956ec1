import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, statfs, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { defaultSmallDimensions, fitPca, PCA_SAMPLE, project, type Projection } from '../embed/matryoshka.js';
import { MemcoreError } from '../model/errors.js';
import type { EntryEdgeType, GoldenPath, SearchRunsOn, StoreStats } from '../model/types.js';
import type { EntryFilter } from '../model/entryFilter.js';
import type { EntryCodeReference, GraphEdge, GraphReach, GraphStore, ReachOptions } from './graph/graphStore.js';
import { expandWithPaths } from './graph/expandWithPaths.js';
import type { EntryRow, MemoryIndex } from './memoryIndex.js';
import { nearestSmallWhile } from './nearestSmall.js';
import { graphDriverOf, graphFileName, isGraphDriver, openGraphStore, GRAPH_DRIVERS, type GraphDriverName } from './graph/drivers.js';
import { Journal } from './journal/journal.js';
import { EntriesTable, entriesOfIpc, searchText, type StoredEntry, type VectorHit } from './lance/entriesTable.js';
import { KEYWORD_LATER_SECTIONS, KeywordIndex } from './resident/keywordIndex.js';
import { NameIndex } from './resident/nameIndex.js';
import { columnRow, EntryColumns, RECORD_ARRAYS } from './resident/entryColumns.js';
import { entryRecord, reviveEntry, serializeEntry, type SerializedEntry } from './resident/entryRecord.js';
import { EmbeddingCacheTable } from './lance/embeddingCacheTable.js';
import { metaPath, missingMeta, holdsStores, readMeta, writeMeta, type StoreMeta } from './meta.js';
import { damagedFile, ensureFolderGitignore, parseStoreFile } from './storeFiles.js';
import { writeManifests, type RecordRemoval, type SourceManifest } from './sourceManifests.js';
import { Residents, SNAPSHOT_KEYS, type SnapshotKey, type StoreChange } from './resident/residents.js';
import { openCodeSearch, type CodeSearchIndex } from './codeSearchIndex.js';
import { Effectiveness, readSignals, writeSignals, type EffectivenessOptions, type FeedbackSignal } from '../feedback/effectiveness.js';
import { DEFAULTS } from '../config/defaults.js';
import { mergeUpserts, WriteGroup, type Written } from './writeGroup.js';

const PROJECTION_FILE = 'projection.json';

/** Free space kept in reserve below every write: Kuzu and LanceDB also need room to commit. */
const RESERVE_BYTES = 16 * 1024 * 1024;

/**
 * Refuses a write the folder's disk has no room for, before anything is written: a store that
 * runs out of space midway fails in its own terms (Kuzu: "IO exception … No space left on
 * device"), and the journal replays it on the next open, but a clear error up front is better.
 * `bytes` is a rough need: vectors and text are written three times (the journal, the table, and
 * the table's new version).
 */
async function ensureRoom(dir: string, bytes: number): Promise<void> {
  let free: number;
  try {
    const s = await statfs(dir);
    free = s.bavail * s.bsize;
  } catch {
    return; // no statfs on this file system: the write will tell
  }
  if (free < bytes + RESERVE_BYTES) {
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    throw new MemcoreError(
      `${dir}: the disk has ${mb(free)} free; this write needs about ${mb(bytes + RESERVE_BYTES)}. Nothing was written: free some space and retry`,
      'STORE',
    );
  }
}

/**
 * The projection of `vector_small`, checked against its schema and the store's dimensions; the
 * prefix when the file is absent. A damaged one can be refitted from the stored vectors.
 */
async function readProjection(dir: string, meta: StoreMeta): Promise<Projection> {
  const path = join(dir, PROJECTION_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'prefix', dimensions: meta.smallDimensions };
    throw damagedFile(path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const refit = 'it is derived from the stored vectors, so delete it and run memcore index to fit it again';
  const projection = parseStoreFile<Projection>('projection', path, text, refit);
  const { dimensions } = meta.embedder;
  const shapeOk =
    projection.dimensions === meta.smallDimensions &&
    (projection.kind === 'prefix' ||
      (projection.mean.length === dimensions &&
        projection.components.length === meta.smallDimensions &&
        projection.components.every((c) => c.length === dimensions)));
  if (!shapeOk)
    throw damagedFile(path, `does not fit this store (${dimensions}-d vectors, ${meta.smallDimensions}-d small vectors)`, refit);
  return projection;
}

/**
 * A store that has been written holds both a table and a graph: opening it without one would
 * create an empty one and answer without it (no relations, or no entries) as if nothing were
 * wrong. A table whose versions are gone reads as empty, so it counts as missing too.
 */
function refuseMissingStores(dir: string, generation: number, graphFile: string): void {
  const versions = join(dir, 'lance', 'entries.lance', '_versions');
  const missing = [
    ...(existsSync(join(dir, graphFile)) ? [] : [`${graphFile} (relations, code locations, golden paths)`]),
    ...(existsSync(versions) && readdirSync(versions).length > 0 ? [] : ['lance/entries.lance (the entries)']),
  ];
  if (missing.length === 0) return;
  throw new MemcoreError(
    `${dir} has been written ${generation} time${generation === 1 ? '' : 's'} (meta.json) but ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing. ` +
      'Opening it would answer as if that part were empty. Restore the folder from a backup, or move it aside and ingest the memory files again.',
    'STORE',
  );
}
/** Rows a refit re-derives per write: one LanceDB merge each (see EntriesTable.upsert). */
const REFIT_BATCH = 10_000;
/** Below this many entries a fitted projection is not worth it; the prefix serves. */
const AUTO_FIT_MIN_ROWS = 256;

/**
 * An entry as an upsert intent records it: its vectors are indices into the journal's blobs (raw
 * float32, see Journal). Journals written before that carry them as base64 of their float32 bytes.
 */
type JournalEntry = { entry: SerializedEntry; vector: number | string; vectorSmall: number | string };

function decodeVector(v: number | string, blobs: readonly Float32Array[]): Float32Array {
  if (typeof v === 'number') {
    const blob = blobs[v];
    if (!blob) throw new MemcoreError(`a journaled write refers to vector ${v}, which its journal file lacks`, 'STORE');
    return blob;
  }
  const bytes = Buffer.from(v, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** meta.json's inode, modification time and size ('' when missing): every write replaces the file. */
function metaStampOf(dir: string): string {
  try {
    const st = statSync(metaPath(dir), { bigint: true });
    return `${st.ino}:${st.mtimeNs}:${st.size}`;
  } catch {
    return '';
  }
}

/** Waits for every promise, then throws the first failure: no write is still running when a caller sees the error. */
async function settleAll(promises: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(promises)).find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/** One write, as the journal records it. */
export type WriteIntent =
  | {
      op: 'upsert';
      entries: JournalEntry[];
      /** Ids of `entries` the writer found absent: appended rather than merged, except on replay. */
      newIds?: string[];
      /** A projection fitted for this write (`projectionForWrite`), saved once the rows are. */
      projection?: Projection;
      graph: Parameters<GraphStore['write']>[0];
      sources: Record<string, string>;
      /** Records a sync removes, after the upsert (a sync's removals never name what it upserts). */
      remove?: RecordRemoval;
      /** Source manifests to replace once both stores are written. */
      manifests?: SourceManifest[];
    }
  | { op: 'delete'; ids: string[] }
  | { op: 'feedback'; signals: FeedbackSignal[] };

/** The entry as an upsert intent records it, its vectors appended to `blobs` (the journal's). */
export function serializeStored(s: StoredEntry, blobs: Float32Array[]): JournalEntry {
  const vector = blobs.push(s.vector) - 1;
  return { entry: serializeEntry(s.entry), vector, vectorSmall: blobs.push(s.vectorSmall) - 1 };
}

function reviveStored(s: JournalEntry, blobs: readonly Float32Array[]): StoredEntry {
  return { entry: reviveEntry(s.entry), vector: decodeVector(s.vector, blobs), vectorSmall: decodeVector(s.vectorSmall, blobs) };
}

/**
 * Both stores of one database folder and the rules that keep them in step: journal the intent,
 * write LanceDB, write Kuzu, mark done, bump the generation.
 */
export class Stores implements MemoryIndex {
  private constructor(
    readonly dir: string,
    readonly table: EntriesTable,
    readonly graph: GraphStore,
    readonly embeddingCache: EmbeddingCacheTable,
    private readonly journal: Journal<WriteIntent>,
    public meta: StoreMeta,
    /** How `vector_small` is derived from `vector` (projection.json). */
    public projection: Projection,
    /** Stores of at most this many entries are held whole in memory (EntryColumns). */
    readonly residentMaxEntries: number,
    /** Stores of at most this many entries run stage 1 as a scan of small vectors in memory (EntryColumns). */
    readonly scanMaxEntries: number,
    /** Stores of at least this many entries run that scan on a helper thread. */
    readonly scanThreadMinEntries: number,
    /** How ratings average (feedback/effectiveness.ts). */
    private readonly effectivenessOptions: EffectivenessOptions = {},
  ) {
    this.residents = new Residents({
      dir,
      currentGeneration: () => this.currentGeneration(),
      knownGeneration: () => this.meta.generation,
      readStored: async (ids) =>
        (await this.table.read({ ids: [...ids] }, { withVectors: true })).map((s) => ({
          entry: s.entry,
          vector: s.vector!,
          vectorSmall: s.vectorSmall!,
        })),
      snapshotsAfterIdle: async () => (await this.table.count()) <= DEFAULTS.store.snapshotAfterIdleMaxEntries,
      writing: () => this.writesRunning > 0,
    });
  }

  /** What the query path holds in memory of this folder, and its snapshot files. */
  readonly residents: Residents;

  /** The small search vector of a full vector, under the current projection. */
  smallVector(full: Float32Array): Float32Array {
    return project(full, this.projection);
  }

  /**
   * Fits a PCA projection on the stored vectors and re-derives every `vector_small` (for models
   * not trained for truncation; `memcore index`). The automatic first fit is `projectionForWrite`.
   * The fit reads a sample of the vectors and the re-derivation streams the rows in batches, so
   * memory does not grow with the store. Returns whether it refitted.
   */
  async refitProjection(opts: { batchRows?: number; onProgress?: (done: number, total: number) => void } = {}): Promise<boolean> {
    if (this.meta.embedder.truncatable) return false;
    const total = await this.table.count();
    if (total < 2) return false;
    const projection = { ...fitPca(await this.table.sampleVectors(PCA_SAMPLE), this.meta.smallDimensions), fittedOn: total };
    // Rows first, then the projection file: a crash in between leaves vectors a refit repairs.
    let done = 0;
    for await (const stored of this.table.scanStored(opts.batchRows ?? REFIT_BATCH)) {
      await this.table.upsert(stored.map((s) => ({ ...s, vectorSmall: project(s.vector, projection) })));
      opts.onProgress?.((done += stored.length), total);
    }
    await this.saveProjection(projection);
    const { from, to } = await this.bumpGeneration({});
    await this.residents.logChange(to, 'all');
    this.residents.followWrite({ upserted: [], deleted: [] }, from, to);
    // Every small vector moved, which following a write cannot express for a whole store: the
    // columns are loaded again by the next query (the keyword and name indexes hold no vectors).
    this.residents.forget('columns');
    return true;
  }

  /**
   * The projection a write of `incoming` full vectors should store its rows under when the store
   * is due its first fit (the auto-fit at 256 entries): fitting before the write, on the stored
   * vectors and the incoming ones, spares writing every row twice. Returned with the rows stored so far, fewer than 256, which the same write must
   * re-derive. Undefined when no fit is due.
   */
  async projectionForWrite(incoming: Float32Array[]): Promise<{ projection: Projection; stored: StoredEntry[] } | undefined> {
    if (this.meta.embedder.truncatable || this.projection.kind === 'pca') return undefined;
    if (incoming.length === 0 || (await this.table.count()) + incoming.length < AUTO_FIT_MIN_ROWS) return undefined;
    const stored = (await this.table.read({}, { withVectors: true })).map((s) => ({
      entry: s.entry,
      vector: s.vector!,
      vectorSmall: s.vectorSmall!,
    }));
    // Zero vectors (entries whose vector is still being computed, indexer.ts deferEmbedding) say nothing of the spread.
    const sample = [...stored.map((s) => s.vector), ...incoming].filter((v) => v.some((x) => x !== 0));
    if (sample.length < AUTO_FIT_MIN_ROWS) return undefined;
    return { projection: fitPca(sample, this.meta.smallDimensions), stored };
  }

  private async saveProjection(projection: Projection): Promise<void> {
    const tmp = join(this.dir, `${PROJECTION_FILE}.${process.pid}.tmp`);
    await writeFile(tmp, JSON.stringify(projection));
    await rename(tmp, join(this.dir, PROJECTION_FILE));
    this.projection = projection;
  }

  /** Throws what opening would about the folder's projection file (doctor). */
  static async checkProjection(dir: string, meta: StoreMeta): Promise<void> {
    await readProjection(dir, meta);
  }

  static async open(
    path: string,
    embedder: Embedder,
    opts: {
      smallDimensions?: number;
      residentMaxEntries?: number;
      scanMaxEntries?: number;
      scanThreadMinEntries?: number;
      effectiveness?: EffectivenessOptions;
      /** The graph database of a new folder; an existing folder opens with the one its meta records. */
      graph?: GraphDriverName;
    } = {},
  ): Promise<Stores> {
    const dir = resolve(path);
    if (opts.graph !== undefined && !isGraphDriver(opts.graph))
      throw new MemcoreError(`graph must be one of ${GRAPH_DRIVERS.join(', ')}, got ${JSON.stringify(opts.graph)}`, 'INVALID_INPUT');
    await mkdir(dir, { recursive: true });
    await ensureFolderGitignore(dir);
    let meta = await readMeta(dir);
    if (meta && meta.embedder.id !== embedder.id) {
      throw new MemcoreError(
        `${dir} was built with embedder ${meta.embedder.id} (${meta.embedder.dimensions}-d); it cannot be opened with ${embedder.id} (${embedder.dimensions}-d)`,
        'MODEL_MISMATCH',
      );
    }
    if (meta && meta.embedder.dimensions !== embedder.dimensions) {
      throw new MemcoreError(
        `${dir} holds ${meta.embedder.dimensions}-d vectors; embedder ${embedder.id} gives ${embedder.dimensions}-d`,
        'MODEL_MISMATCH',
      );
    }
    if (meta && opts.smallDimensions !== undefined && opts.smallDimensions !== meta.smallDimensions) {
      throw new MemcoreError(
        `${dir} stores ${meta.smallDimensions}-d small vectors; smallDimensions ${opts.smallDimensions} applies only to a new database`,
        'INVALID_INPUT',
      );
    }
    if (!meta && holdsStores(dir)) throw missingMeta(dir);
    if (!meta) {
      const trained = embedder.matryoshkaDimensions?.filter((d) => d < embedder.dimensions);
      const small =
        opts.smallDimensions ??
        (trained?.length
          ? trained.reduce((best, d) => (Math.abs(d - 128) < Math.abs(best - 128) ? d : best))
          : defaultSmallDimensions(embedder.dimensions));
      if (embedder.matryoshkaDimensions && !embedder.matryoshkaDimensions.includes(small)) {
        throw new MemcoreError(
          `smallDimensions ${small} is not one of the model's Matryoshka sizes (${embedder.matryoshkaDimensions.join(', ')})`,
          'INVALID_INPUT',
        );
      }
      if (!Number.isInteger(small) || small < 1 || small > embedder.dimensions) {
        throw new MemcoreError(
          `smallDimensions must be an integer from 1 to ${embedder.dimensions}, got ${JSON.stringify(small)}`,
          'INVALID_INPUT',
        );
      }
      meta = {
        formatVersion: 1,
        embedder: { id: embedder.id, dimensions: embedder.dimensions, truncatable: embedder.truncatable },
        smallDimensions: small,
        generation: 0,
        sources: {},
        graph: opts.graph ?? DEFAULTS.store.graph,
      };
      await writeMeta(dir, meta);
    }
    const graphDriver = graphDriverOf(meta);
    if (meta.generation > 0) refuseMissingStores(dir, meta.generation, graphFileName(graphDriver));
    // The graph opens on its own threads (~50 ms at 100K entries) while the rest opens beside it.
    const graphOpened = openGraphStore(graphDriver, join(dir, graphFileName(graphDriver)));
    // Handled here at once (a folder in use fails fast): awaited below, where its error is thrown.
    graphOpened.catch(() => undefined);
    let parts: [EntriesTable, Projection, EmbeddingCacheTable];
    try {
      parts = await Promise.all([
        EntriesTable.open(join(dir, 'lance'), meta.embedder.dimensions, meta.smallDimensions),
        readProjection(dir, meta),
        EmbeddingCacheTable.open(join(dir, 'lance'), meta.embedder.id, meta.embedder.dimensions),
      ]);
    } catch (e) {
      await graphOpened.then((g) => g.close()).catch(() => undefined);
      throw e;
    }
    const [table, projection, embeddingCache] = parts;
    const graph = await graphOpened;
    const stores = new Stores(
      dir,
      table,
      graph,
      embeddingCache,
      new Journal(join(dir, 'journal')),
      meta,
      projection,
      opts.residentMaxEntries ?? DEFAULTS.store.residentMaxEntries,
      opts.scanMaxEntries ?? DEFAULTS.store.scanMaxEntries,
      opts.scanThreadMinEntries ?? DEFAULTS.store.scanThreadMinEntries,
      opts.effectiveness,
    );
    for (const { name, intent, blobs } of await stores.journal.pending()) {
      const change = await stores.applyToStores(intent, { replay: true, blobs });
      const { to } = await stores.bumpGeneration(intent.op === 'upsert' ? intent.sources : {});
      await stores.residents.logChange(to, change);
      await stores.journal.done(name);
    }
    // After the replay, whose writes ask Kuzu what exists: a write replayed may have partly reached
    // it before the crash, which the adjacency of a snapshot would not know.
    stores.graph.holdIn(stores.residents);
    return stores;
  }

  /** Writes of this process under way (apply): the entry edges are not snapshotted meanwhile. */
  private writesRunning = 0;
  /** The group collecting upserts now (openGroup), if any. */
  private group: WriteGroup<WriteIntent> | undefined;
  /** Commits run one at a time: a write that finishes after its group (its feedback) commits alone. */
  private commits: Promise<unknown> = Promise.resolve();

  /**
   * Applies one write to both stores, crash-safe. An upsert intent's vectors are indices into
   * `written.blobs` (serializeStored); `written.upserted`, when the writer has them, are its
   * entries as objects, which spares decoding them back from the journal form (~0.5 s per 50K
   * entries). While a group is open (openGroup), an upsert joins it and resolves once the group's
   * one commit is durable.
   */
  async apply(intent: WriteIntent, written: Written = {}): Promise<void> {
    const joined = this.group?.offer(intent, written);
    if (joined) return joined;
    const run = this.commits.then(() => this.applyCounted(intent, written));
    this.commits = run.catch(() => undefined);
    return run;
  }

  private async applyCounted(intent: WriteIntent, written: Written): Promise<void> {
    this.writesRunning++;
    try {
      await this.applyAndLog(intent, written);
    } finally {
      this.writesRunning--;
    }
  }

  /** The vector of `text` if the open group embedded it ahead of its writes. */
  embeddedAhead(text: string): Float32Array | undefined {
    return this.group?.embedded.get(text);
  }

  /** Opens a group: the upserts applied until commitGroup are committed together (see WriteGroup). */
  openGroup(): WriteGroup<WriteIntent> {
    this.group = new WriteGroup<WriteIntent>();
    return this.group;
  }

  /**
   * Commits a group's upserts as one journaled write and answers each of them: all durable, or
   * all failed with the commit's error (the journal then replays it on the next open, as any write).
   */
  async commitGroup(group: WriteGroup<WriteIntent>): Promise<void> {
    if (this.group === group) this.group = undefined;
    const members = group.close() as { intent: Extract<WriteIntent, { op: 'upsert' }>; written: Written }[];
    if (members.length === 0) return;
    const { intent, written } = members.length === 1 ? members[0]! : mergeUpserts(members);
    try {
      await this.apply(intent, written);
      group.settle(undefined);
    } catch (e) {
      group.settle(e);
    }
  }

  private async applyAndLog(intent: WriteIntent, written: Written): Promise<void> {
    const vectorBytes = (written.blobs ?? []).reduce((n, b) => n + b.byteLength, 0);
    const textBytes = intent.op === 'upsert' ? intent.entries.reduce((n, e) => n + e.entry.title.length + e.entry.content.length, 0) : 0;
    await ensureRoom(this.dir, 3 * (vectorBytes + textBytes));
    const name = await this.journal.begin(intent, written.blobs);
    const change = await this.applyToStores(intent, written);
    // The generation moves before the intent goes: a crash between the two replays the write
    // (idempotent) and moves it again, where the other order could leave snapshots of the
    // generation before claiming to be current.
    const { from, to } = await this.bumpGeneration(intent.op === 'upsert' ? intent.sources : {}, intent.op === 'delete');
    await settleAll([this.journal.done(name), this.residents.logChange(to, change)]);
    this.residents.followWrite(change, from, to);
  }

  private async applyToStores(
    intent: WriteIntent,
    opts: { replay?: boolean; blobs?: readonly Float32Array[]; upserted?: readonly StoredEntry[] } = {},
  ): Promise<StoreChange> {
    if (intent.op === 'upsert') {
      // A replay may find the appended rows already written: merge everything then.
      const newIds = intent.newIds && !opts.replay ? new Set(intent.newIds) : undefined;
      const upserted = opts.upserted ?? intent.entries.map((e) => reviveStored(e, opts.blobs ?? []));
      if (upserted.length !== intent.entries.length) throw new MemcoreError('a write handed other entries than its journal holds', 'STORE');
      // The two stores are written at once (their native writers run on other threads): the
      // journal, not the order, keeps them in step. Rows before the projection file, as in
      // refitProjection; a replay writes both again.
      await settleAll([
        this.table.upsert(upserted, { newIds }).then(() => intent.projection && this.saveProjection(intent.projection)),
        this.graph.write(intent.graph),
      ]);
      const deleted = intent.remove?.entries ?? [];
      if (intent.remove) {
        await this.table.delete(deleted);
        await this.graph.deleteEntries(deleted);
        await this.graph.remove(intent.remove);
      }
      if (intent.manifests) await writeManifests(this.dir, intent.manifests);
      return { upserted, deleted };
    }
    if (intent.op === 'feedback') {
      const held = opts.replay ? undefined : (await this.effectiveness()).keys;
      return { upserted: [], deleted: [], signals: await writeSignals(this.dir, intent.signals, held) };
    }
    await this.table.delete(intent.ids);
    await this.graph.deleteEntries(intent.ids);
    return { upserted: [], deleted: intent.ids };
  }

  /** What ratings say about entries, sources and cores (feedback/effectiveness.ts), kept in step with this process's feedback writes. */
  effectiveness(): Promise<Effectiveness> {
    return this.residents.get({
      key: 'effectiveness',
      build: async () => new Effectiveness(await readSignals(this.dir), this.effectivenessOptions),
      follow: (e, change) => e.add(change.signals ?? []),
    });
  }

  /** The imported code's search index (codeSearchIndex.ts), read from its file on first use. */
  codeSearch(): Promise<CodeSearchIndex> {
    return openCodeSearch(this.dir);
  }

  /**
   * Every structure a context query holds in memory, loaded (`index` does, then writes their
   * snapshots). Queries load them as their stages need them: loading them all at once on the first
   * query was tried and was no faster (the 100K bench store, open + first query from snapshots
   * 0.86–0.89 s one by one, 0.90–0.92 s at once, and ~50 MB more RSS).
   */
  async loadResident(): Promise<void> {
    await this.loadResidentOf(SNAPSHOT_KEYS);
  }

  /**
   * Everything a query touches, loaded now rather than by the first queries (a long-lived process:
   * `MemoryEngine.warm`): the structures held in memory, then the parts their snapshots hand over
   * later (the entries whole, read from LanceDB until they are in), then the code search index.
   * The later parts come after the structures, not beside them (see LAZY_PARTS_AFTER_MS).
   */
  async warm(): Promise<void> {
    await this.loadResident();
    await (await this.columns()).settled();
    await this.codeSearch();
  }

  /** Loads the structures that `keys` name (snapshot keys; the graph's two load together). */
  async loadResidentOf(keys: readonly SnapshotKey[]): Promise<void> {
    const graph = keys.includes('adjacency') || keys.includes('code-links');
    await Promise.all([
      keys.includes('columns') && this.columns(),
      keys.includes('keywords') && this.keywords(),
      keys.includes('names') && this.names(),
      graph && this.graph.warm(),
    ]);
  }

  /** Every entry's title and aliases, keyed for the mentions a task makes (see NameIndex). */
  names(): Promise<NameIndex> {
    return this.residents.get({
      key: 'names',
      build: async () => new NameIndex(await this.table.names()),
      follow: (index, change) => {
        index.remove(change.deleted);
        index.upsert(change.upserted.map(({ entry }) => ({ id: entry.id, title: entry.title, aliases: entry.aliases })));
      },
      snapshot: { fingerprint: 'names/2', write: (index) => index.snapshot(), read: (content) => NameIndex.fromSnapshot(content) },
    });
  }

  /** BM25 over every entry's title, aliases and content, in memory (see KeywordIndex). */
  keywords(): Promise<KeywordIndex> {
    return this.residents.get({
      key: 'keywords',
      build: async () => new KeywordIndex(await this.table.searchTexts()),
      follow: (index, change) => {
        index.remove(change.deleted);
        index.upsert(change.upserted.map((s) => ({ id: s.entry.id, text: searchText(s.entry), group: s.entry.coreId })));
      },
      snapshot: {
        fingerprint: 'keywords/2',
        write: (index) => index.snapshot(),
        read: (content) => KeywordIndex.fromSnapshot(content),
        // The documents' terms are read where they lie (a few per query) until a write needs them all.
        lazy: KEYWORD_LATER_SECTIONS,
        settled: (index) => index.settled(),
        whenQuiet: (index) => index.checkLaterParts(),
        lazyRead: (index) => index.laterPartsChecked(),
      },
    });
  }

  /**
   * Every entry's filter and scoring columns and vector, in memory; the small vectors while the
   * store holds at most `scanMaxEntries`, and the entries whole up to `residentMaxEntries` (see EntryColumns).
   */
  columns(): Promise<EntryColumns> {
    const dimensions = this.meta.embedder.dimensions;
    const smallDimensions = this.meta.smallDimensions;
    const exact = { maxEntries: this.residentMaxEntries, helperMinRows: this.scanThreadMinEntries };
    const small = { maxEntries: this.scanMaxEntries, smallDimensions, helperMinRows: this.scanThreadMinEntries };
    return this.residents.get({
      key: 'columns',
      build: async () => {
        const count = await this.table.count();
        const [scan, whole] = [count <= this.scanMaxEntries, count <= this.residentMaxEntries];
        const { rows, vectors, smallVectors, entries } = await this.table.columnRows(dimensions, {
          smallDimensions: scan ? smallDimensions : undefined,
          entries: whole,
        });
        return new EntryColumns(dimensions, rows, vectors, {
          small: smallVectors && { ...small, vectors: smallVectors },
          entries: entries && { maxEntries: this.residentMaxEntries, loaded: entries },
          exact,
        });
      },
      follow: (columns, change) => {
        const { upserted } = change;
        columns.remove(change.deleted);
        columns.upsert(
          upserted.map((s) => columnRow(s.entry)),
          (i) => upserted[i]!.vector,
          (i) => ({ vectorSmall: upserted[i]!.vectorSmall, record: entryRecord(upserted[i]!.entry) }),
        );
      },
      snapshot: {
        // What is held depends on the limits: a snapshot taken under others is not loaded.
        fingerprint: `columns/3 ${this.meta.embedder.id} ${dimensions}/${smallDimensions} scan≤${this.scanMaxEntries} whole≤${this.residentMaxEntries}`,
        write: (columns) => columns.snapshot(),
        lazy: ['full.residualValues', 'full.residualScales', 'full.residualErrors', 'entries', ...RECORD_ARRAYS],
        settled: (columns) => columns.settled(),
        whenQuiet: (columns) => columns.whenQuiet(),
        lazyRead: (columns) => columns.laterPartsRead(),
        read: (content) =>
          EntryColumns.fromSnapshot(dimensions, content, {
            small,
            entries: { maxEntries: this.residentMaxEntries, decode: (ipc) => ({ ipc, ...entriesOfIpc(ipc) }) },
            exact,
          }),
      },
    });
  }

  /**
   * Where the searches run for a store of `entries`: what the loaded columns hold, or before they
   * are loaded, what they will hold at this size (not loading them: that is the cold start).
   */
  async searchRunsOn(entries: number): Promise<StoreStats['search']> {
    const columns = await this.residents.current<EntryColumns>('columns');
    const on = (held: boolean): SearchRunsOn => (held ? 'memory' : 'lancedb');
    if (columns) return { exact: on(columns.holdsExactVectors), stage1: on(columns.holdsSmallVectors), entries: on(columns.holdsEntries) };
    return {
      exact: on(entries <= this.residentMaxEntries),
      stage1: on(entries <= this.scanMaxEntries),
      entries: on(entries <= this.residentMaxEntries),
    };
  }

  get smallDimensions(): number {
    return this.meta.smallDimensions;
  }

  async nearestSmallWhile(
    queryVector: Float32Array,
    filter: EntryFilter,
    k: number,
    sideWork?: () => void,
    signal?: AbortSignal,
  ): Promise<VectorHit[]> {
    const querySmall = this.smallVector(queryVector);
    return nearestSmallWhile(this.table, await this.columns(), querySmall, queryVector, { filter, k, sideWork, signal });
  }

  nearestFull(queryVector: Float32Array, filter: EntryFilter, limit: number): Promise<VectorHit[]> {
    return this.table.nearest(queryVector, { filter, limit });
  }

  reachWithPaths(
    seedIds: readonly string[],
    opts: ReachOptions & { alsoAmong?: readonly string[] },
  ): Promise<{ reaches: GraphReach[]; edges: GraphEdge[] }> {
    return expandWithPaths(this.graph, seedIds, opts);
  }

  edgesAmong(ids: readonly string[], edgeTypes: readonly EntryEdgeType[]): Promise<GraphEdge[]> {
    return this.graph.edgesAmong(ids, edgeTypes);
  }

  supersededBy(ids: readonly string[]): Promise<Map<string, string>> {
    return this.graph.supersededBy(ids);
  }

  codeReferencesOf(entryIds: readonly string[]): Promise<EntryCodeReference[]> {
    return this.graph.codeReferencesOf(entryIds);
  }

  goldenPathsOf(entryIds: readonly string[]): Promise<(GoldenPath & { entryIds: string[] })[]> {
    return this.graph.goldenPathsOf(entryIds);
  }

  async read(ids: readonly string[], opts: { filter?: EntryFilter; withVectors?: boolean } = {}): Promise<EntryRow[]> {
    if (ids.length === 0) return [];
    const columns = await this.columns();
    // While the store is held whole, the entries and the filter come from memory, and only the
    // vectors, when asked for, are read (~1.5 ms for a dozen rows at 100K entries); otherwise one
    // filtered LanceDB read (~3–4 ms, more with the vectors).
    if (columns.holdsEntries) {
      const wanted = opts.filter ? ids.filter(columns.matcher(opts.filter)) : ids;
      // The vectors' read starts first: decoding the entries (~10 µs each) runs while it waits.
      const vectors = opts.withVectors ? this.table.vectorsOf(wanted) : undefined;
      const held = columns.entries(wanted);
      if (held) {
        const read = await vectors;
        return held.map((entry) => (read ? { entry, vector: read.get(entry.id) } : { entry }));
      }
      vectors?.catch(() => undefined);
    }
    const rows = await this.table.read({ ...opts.filter, ids: [...ids] }, { withVectors: opts.withVectors === true });
    const byId = new Map(rows.map((r) => [r.entry.id, r]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [opts.withVectors ? { entry: row.entry, vector: row.vector } : { entry: row.entry }] : [];
    });
  }

  /** The meta.json version last read: every write replaces the file (new inode, mtime). */
  private metaStamp = '';

  /**
   * Re-reads the generation another process may have bumped. Asked on every cached query, so the
   * file is read only when its stamp moved: a synchronous stat costs microseconds, an async read
   * of the file ~0.1 ms, which was most of a cache hit.
   */
  async currentGeneration(): Promise<number> {
    const stamp = metaStampOf(this.dir);
    if (stamp !== '' && stamp === this.metaStamp) return this.meta.generation;
    const fresh = await readMeta(this.dir);
    if (fresh) this.meta = fresh;
    this.metaStamp = stamp;
    return this.meta.generation;
  }

  /** Moves the generation on; `from` is the generation the write found (another process may have moved it since we last looked). */
  private async bumpGeneration(sources: Record<string, string>, forgetSources = false): Promise<{ from: number; to: number }> {
    // Another process's write replaced meta.json (its stamp moved): read again only then.
    await this.currentGeneration();
    const fresh = this.meta;
    // A delete can remove edges that an unchanged file would put back, so its fingerprints go.
    this.meta = { ...fresh, generation: fresh.generation + 1, sources: forgetSources ? {} : { ...fresh.sources, ...sources } };
    await writeMeta(this.dir, this.meta);
    // The file just written is the one held: the next currentGeneration need not read it again.
    this.metaStamp = metaStampOf(this.dir);
    return { from: fresh.generation, to: this.meta.generation };
  }

  async close(): Promise<void> {
    // Best effort: a snapshot that cannot be written is rebuilt on the next open.
    await this.residents.writeSnapshots().catch(() => undefined);
    await this.residents.heldValue<EntryColumns>('columns')?.then(
      (c) => c.close(),
      () => undefined,
    );
    await this.residents.heldValue<KeywordIndex>('keywords')?.then(
      (k) => k.release(),
      () => undefined,
    );
    this.table.close();
    await this.embeddingCache.flush();
    this.embeddingCache.close();
    await this.graph.close();
  }
}
