import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, statfs, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { defaultSmallDimensions, fitPca, PCA_SAMPLE, project, type Projection } from '../embed/matryoshka.js';
import { MemcoreError } from '../model/errors.js';
import type { MemoryEntry, ResidentLoad, SearchRunsOn, StoreStats } from '../model/types.js';
import type { GraphStore } from './graph/graphStore.js';
import { KuzuGraphStore } from './graph/kuzuGraphStore.js';
import { Journal } from './journal/journal.js';
import { EntriesTable, entriesOfIpc, searchText, type StoredEntry } from './lance/entriesTable.js';
import { KeywordIndex } from './resident/keywordIndex.js';
import { columnRow, EntryColumns } from './resident/entryColumns.js';
import { entryRecord, reviveEntry, serializeEntry, type SerializedEntry } from './resident/entryRecord.js';
import { EmbeddingCacheTable } from './lance/embeddingCacheTable.js';
import { metaPath, readMeta, writeMeta, type StoreMeta } from './meta.js';
import { damagedFile, parseStoreFile } from './storeFiles.js';
import { writeManifests, type RecordRemoval, type SourceManifest } from './sourceManifests.js';
import { appendChange, changesBetween, forgetChangesThrough, type ChangeRecord } from './snapshot/changeLog.js';
import { readSnapshot, snapshotGeneration, writeSnapshot, type SnapshotContent } from './snapshot/snapshotFile.js';
import { Effectiveness, readSignals, writeSignals, type EffectivenessOptions, type FeedbackSignal } from '../feedback/effectiveness.js';

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
function refuseMissingStores(dir: string, generation: number): void {
  const versions = join(dir, 'lance', 'entries.lance', '_versions');
  const missing = [
    ...(existsSync(join(dir, 'graph.kuzu')) ? [] : ['graph.kuzu (relations, code locations, golden paths)']),
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
 * Default for `residentMaxEntries`: the largest store whose entries are held whole in memory,
 * as the Arrow columns of the load scan (about their text's size again).
 */
export const RESIDENT_MAX_ENTRIES = 250_000;
/**
 * Default for `scanMaxEntries`: the largest store whose stage 1 is a scan of 8-bit small vectors in
 * memory (132 bytes an entry at 128-d, a quarter of the 8-bit full vectors held anyway). The scan
 * grows with the store, ~0.8 ms per 100K entries, and finds the true nearest small vectors; past
 * it, LanceDB's IVF index, whose default probes reached a two-stage recall@10 of only 0.835 at 1M.
 */
export const SCAN_MAX_ENTRIES = 2_000_000;
/**
 * Default for `scanThreadMinEntries`: from this store size the scan runs on a helper thread while
 * the keyword search runs on the caller's (MatrixKernel.startProducts). At 100K entries the scan
 * takes ~1.2 ms, which the search then hides; below this size it takes a few tenths of a
 * millisecond and stays on the caller's thread (a judgment, not a measured break-even).
 */
export const SCAN_THREAD_MIN_ENTRIES = 32_768;

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

/** What a write changed, for the structures held in memory to follow it (Stores.derived). */
export interface StoreChange {
  upserted: readonly StoredEntry[];
  deleted: readonly string[];
  /** Ratings the write added (a feedback write). */
  signals?: readonly FeedbackSignal[];
}

interface Derived<T> {
  generation: number;
  value: Promise<T>;
  follow?: (value: T, change: StoreChange) => void;
  snapshot?: Snapshotting<T>;
}

/**
 * How a structure derived from the entries is written to a snapshot file and read back (see
 * Stores.derived). Only structures derived from the entries alone, which a write's change (its
 * ids) lets them follow, have one: a stale snapshot is brought up to date from the change log.
 */
export interface Snapshotting<T> {
  /** What the content depends on besides the generation: a snapshot written under another is not loaded. */
  fingerprint: string;
  write(value: T): SnapshotContent;
  /** Undefined when the content lacks what this store now holds (it is rebuilt). */
  read(content: SnapshotContent): T | undefined;
}

/** Snapshot files and the change log live here, in the database folder. */
const SNAPSHOT_DIR = 'snapshots';
const CHANGE_LOG = 'changes.jsonl';
/** The structures written to snapshot files: Stores.columns, Stores.keywords and the name index (retrieve/mentionCandidates). */
const SNAPSHOT_KEYS = ['columns', 'keywords', 'names', 'adjacency'] as const;
/** The entry edges' snapshot (GraphStore.adjacencySnapshot): usable only at the generation it was written at. */
const ADJACENCY = { kind: 'adjacency', fingerprint: 'adjacency/3' };
/**
 * A long-lived process writes the snapshots of what it holds this long after its last write
 * (and on close): a burst of writes costs one snapshot, and no write waits for one. Only for
 * stores of at most `residentMaxEntries` entries (~1–2 s at 100K): at 1M writing them took 26.7 s,
 * much of it copying and flattening on the caller's thread, when a served store would answer
 * nothing; larger stores write them on close and `memcore index`.
 */
export const SNAPSHOT_AFTER_IDLE_MS = 30_000;

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
export class Stores {
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
  ) {}

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
    await this.logChange(to, 'all');
    this.followWrite({ upserted: [], deleted: [] }, from, to);
    // Every small vector moved, which following a write cannot express for a whole store: the
    // columns are loaded again by the next query (the keyword and name indexes hold no vectors).
    this.derivedByKey.delete('columns');
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
    return { projection: fitPca([...stored.map((s) => s.vector), ...incoming], this.meta.smallDimensions), stored };
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
    } = {},
  ): Promise<Stores> {
    const dir = resolve(path);
    await mkdir(dir, { recursive: true });
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
      };
      await writeMeta(dir, meta);
    }
    if (meta.generation > 0) refuseMissingStores(dir, meta.generation);
    const table = await EntriesTable.open(join(dir, 'lance'), meta.embedder.dimensions, meta.smallDimensions);
    const graph = await KuzuGraphStore.open(join(dir, 'graph.kuzu'));
    const projection = await readProjection(dir, meta);
    const embeddingCache = await EmbeddingCacheTable.open(join(dir, 'lance'), meta.embedder.id, meta.embedder.dimensions);
    const stores = new Stores(
      dir,
      table,
      graph,
      embeddingCache,
      new Journal(join(dir, 'journal')),
      meta,
      projection,
      opts.residentMaxEntries ?? RESIDENT_MAX_ENTRIES,
      opts.scanMaxEntries ?? SCAN_MAX_ENTRIES,
      opts.scanThreadMinEntries ?? SCAN_THREAD_MIN_ENTRIES,
      opts.effectiveness,
    );
    for (const { name, intent, blobs } of await stores.journal.pending()) {
      const change = await stores.applyToStores(intent, { replay: true, blobs });
      await stores.journal.done(name);
      const { to } = await stores.bumpGeneration(intent.op === 'upsert' ? intent.sources : {});
      await stores.logChange(to, change);
    }
    stores.graph.seedAdjacency(() => stores.adjacencyFromSnapshot());
    return stores;
  }

  /**
   * Applies one write to both stores, crash-safe. An upsert intent's vectors are indices into
   * `written.blobs` (serializeStored); `written.upserted`, when the writer has them, are its
   * entries as objects, which spares decoding them back from the journal form (~0.5 s per 50K
   * entries).
   */
  /** Writes of this process under way (apply): the entry edges are not snapshotted meanwhile. */
  private writesRunning = 0;

  async apply(intent: WriteIntent, written: { blobs?: readonly Float32Array[]; upserted?: readonly StoredEntry[] } = {}): Promise<void> {
    this.writesRunning++;
    try {
      await this.applyAndLog(intent, written);
    } finally {
      this.writesRunning--;
    }
  }

  private async applyAndLog(
    intent: WriteIntent,
    written: { blobs?: readonly Float32Array[]; upserted?: readonly StoredEntry[] },
  ): Promise<void> {
    const vectorBytes = (written.blobs ?? []).reduce((n, b) => n + b.byteLength, 0);
    const textBytes = intent.op === 'upsert' ? intent.entries.reduce((n, e) => n + e.entry.title.length + e.entry.content.length, 0) : 0;
    await ensureRoom(this.dir, 3 * (vectorBytes + textBytes));
    const name = await this.journal.begin(intent, written.blobs);
    const change = await this.applyToStores(intent, written);
    await this.journal.done(name);
    const { from, to } = await this.bumpGeneration(intent.op === 'upsert' ? intent.sources : {}, intent.op === 'delete');
    await this.logChange(to, change);
    this.followWrite(change, from, to);
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
    return this.derived(
      'effectiveness',
      async () => new Effectiveness(await readSignals(this.dir), this.effectivenessOptions),
      (e, change) => e.add(change.signals ?? []),
    );
  }

  private readonly derivedByKey = new Map<string, Derived<unknown>>();

  /**
   * A structure derived from the stored entries (name index, entry columns, keyword index), built
   * on first use. With `follow`, the writes of this process update it in place (follow must be
   * idempotent: a build in flight during a write may or may not have seen it); without, or once
   * the generation moved by another process's write, it is built again.
   */
  async derived<T>(
    key: string,
    build: () => Promise<T>,
    follow?: (value: T, change: StoreChange) => void,
    snapshot?: Snapshotting<T>,
  ): Promise<T> {
    const generation = await this.currentGeneration();
    const cached = this.derivedByKey.get(key) as Derived<T> | undefined;
    if (cached && cached.generation === generation) return cached.value;
    // Held at an older generation (another process wrote since): brought up to date from the
    // change log when it has every generation between, rebuilt otherwise.
    const catchUp =
      cached && cached.generation < generation && follow && snapshot
        ? cached.value.then(async (value) =>
            (await this.bringUpToDate(value, follow, cached.generation, generation))
              ? value
              : this.loadResident(key, build, snapshot, generation, follow),
          )
        : undefined;
    const value = catchUp ?? (snapshot ? this.loadResident(key, build, snapshot, generation, follow) : build());
    const entry = { generation, value, follow, snapshot } as Derived<unknown>;
    this.derivedByKey.set(key, entry);
    value.catch(() => this.derivedByKey.get(key) === entry && this.derivedByKey.delete(key));
    return value;
  }

  /** How each structure held in memory was last loaded (`stats().resident`). */
  readonly residentLoads = new Map<string, ResidentLoad>();
  /** The generation of each snapshot file as this process last read or wrote it. */
  private readonly snapshotGenerations = new Map<string, number>();

  private snapshotPath(key: string): string {
    return join(this.dir, SNAPSHOT_DIR, `${key}.snap`);
  }

  /**
   * A structure from its snapshot file when there is one of this generation, or of an older one
   * that the change log brings up to date; from the stores otherwise (and then with a note saying
   * why the file was not used). The stores stay the system of record: nothing here can make a
   * structure differ from one built afresh, which test/resident.test.ts checks.
   */
  private async loadResident<T>(
    key: string,
    build: () => Promise<T>,
    snapshot: Snapshotting<T>,
    generation: number,
    follow?: (value: T, change: StoreChange) => void,
  ): Promise<T> {
    const started = performance.now();
    const done = (value: T, loadedFrom: ResidentLoad['loadedFrom'], note?: string) => {
      this.residentLoads.set(key, { loadedFrom, ms: performance.now() - started, ...(note ? { note } : {}) });
      return value;
    };
    const path = this.snapshotPath(key);
    let note: string | undefined;
    try {
      const found = await readSnapshot(path, { kind: key, fingerprint: snapshot.fingerprint });
      if (found && 'problem' in found) note = `${path} ${found.problem}; rebuilt from the stores`;
      else if (found && found.generation > generation)
        note = `${path} is of generation ${found.generation}, past the store's ${generation}; rebuilt from the stores`;
      else if (found) {
        this.snapshotGenerations.set(key, found.generation);
        const value = snapshot.read(found.content);
        if (value === undefined) note = `${path} lacks what this store now holds; rebuilt from the stores`;
        else if (found.generation === generation) return done(value, 'snapshot');
        else if (follow && (await this.bringUpToDate(value, follow, found.generation, generation))) return done(value, 'caught-up');
        else
          note = `${path} is of generation ${found.generation} and the change log does not reach it to ${generation}; rebuilt from the stores`;
      }
    } catch (e) {
      note = `${path} could not be loaded (${(e as Error).message}); rebuilt from the stores`;
    }
    return done(await build(), 'built', note);
  }

  /**
   * Applies the change log's net change from `from` to `to` to a structure held at `from`: the
   * entries written since are read again (with their vectors), as a write of this process would
   * hand them over. False when the log does not reach.
   */
  private async bringUpToDate<T>(value: T, follow: (value: T, change: StoreChange) => void, from: number, to: number): Promise<boolean> {
    const net = await changesBetween(join(this.dir, SNAPSHOT_DIR, CHANGE_LOG), from, to);
    if (!net) return false;
    const stored = net.upserted.length > 0 ? await this.table.read({ ids: net.upserted }, { withVectors: true }) : [];
    const found = new Set(stored.map((s) => s.entry.id));
    follow(value, {
      upserted: stored.map((s) => ({ entry: s.entry, vector: s.vector!, vectorSmall: s.vectorSmall! })),
      deleted: [...net.deleted, ...net.upserted.filter((id) => !found.has(id))],
    });
    return true;
  }

  /**
   * Writes the snapshot of every structure held whose file is not of the generation it holds
   * (close, the idle timer, and `memcore index`); with `rewrite`, of every structure held (the
   * bench). Returns what it wrote.
   */
  writeSnapshots(opts: { rewrite?: boolean } = {}): Promise<{ key: string; generation: number; bytes: number; ms: number }[]> {
    // One at a time: the idle timer's and a close's would write the same temporary files.
    const run = this.snapshotsWritten.then(() => this.writeSnapshotsNow(opts));
    this.snapshotsWritten = run.catch(() => undefined);
    return run;
  }

  private snapshotsWritten: Promise<unknown> = Promise.resolve();

  private async writeSnapshotsNow(opts: { rewrite?: boolean }): Promise<{ key: string; generation: number; bytes: number; ms: number }[]> {
    if (opts.rewrite) this.snapshotGenerations.clear();
    this.clearSnapshotTimer();
    const written: { key: string; generation: number; bytes: number; ms: number }[] = [];
    await mkdir(join(this.dir, SNAPSHOT_DIR), { recursive: true });
    for (const [key, d] of [...this.derivedByKey]) {
      if (!d.snapshot || this.snapshotGenerations.get(key) === d.generation) continue;
      const started = performance.now();
      const generation = d.generation;
      // Taken in one synchronous step: no write's follow can run halfway through it.
      const content = await d.value.then(
        (v) => d.snapshot!.write(v),
        () => undefined,
      );
      if (!content || d.generation !== generation) continue;
      const bytes = await writeSnapshot(this.snapshotPath(key), { kind: key, fingerprint: d.snapshot.fingerprint, generation }, content);
      this.snapshotGenerations.set(key, generation);
      written.push({ key, generation, bytes, ms: performance.now() - started });
    }
    // The entry edges follow the graph writes of this process, which the generation counts once a
    // write is done: none may be running.
    const generation = this.meta.generation;
    if (this.writesRunning === 0 && this.snapshotGenerations.get(ADJACENCY.kind) !== generation) {
      const started = performance.now();
      const content = await this.graph.adjacencySnapshot();
      if (content && this.writesRunning === 0 && this.meta.generation === generation) {
        const bytes = await writeSnapshot(this.snapshotPath(ADJACENCY.kind), { ...ADJACENCY, generation }, content);
        this.snapshotGenerations.set(ADJACENCY.kind, generation);
        written.push({ key: ADJACENCY.kind, generation, bytes, ms: performance.now() - started });
      }
    }
    if (written.length > 0) {
      // The log is kept back to the oldest snapshot on disk.
      const generations = await Promise.all(
        SNAPSHOT_KEYS.map(async (key) => this.snapshotGenerations.get(key) ?? (await snapshotGeneration(this.snapshotPath(key)))),
      );
      // A structure without a snapshot needs no line of the log.
      const oldest = Math.min(...generations.filter((g) => g !== undefined));
      if (Number.isFinite(oldest)) await forgetChangesThrough(join(this.dir, SNAPSHOT_DIR, CHANGE_LOG), oldest);
    }
    return written;
  }

  private snapshotTimer: NodeJS.Timeout | undefined;

  private clearSnapshotTimer(): void {
    clearTimeout(this.snapshotTimer);
    this.snapshotTimer = undefined;
  }

  /** After a write: the snapshots are written once writes have paused (SNAPSHOT_AFTER_IDLE_MS). */
  private scheduleSnapshots(): void {
    this.clearSnapshotTimer();
    const whenSmall = async () => {
      if ((await this.table.count()) <= this.residentMaxEntries) await this.writeSnapshots();
    };
    this.snapshotTimer = setTimeout(() => void whenSmall().catch(() => undefined), SNAPSHOT_AFTER_IDLE_MS);
    this.snapshotTimer.unref();
  }

  /**
   * The entry edges' snapshot when it is of the current generation: the change log records ids,
   * not edges, so an older one cannot be brought up to date (the graph is scanned instead).
   */
  private async adjacencyFromSnapshot(): Promise<SnapshotContent | undefined> {
    const started = performance.now();
    const path = this.snapshotPath(ADJACENCY.kind);
    const found = await readSnapshot(path, ADJACENCY).catch((e: unknown) => ({ problem: `could not be loaded (${(e as Error).message})` }));
    const generation = await this.currentGeneration();
    const note = !found
      ? undefined
      : 'problem' in found
        ? `${path} ${found.problem}`
        : found.generation !== generation
          ? `${path} is of generation ${found.generation}, the store of ${generation}`
          : undefined;
    if (found && !('problem' in found)) this.snapshotGenerations.set(ADJACENCY.kind, found.generation);
    const usable = found && !('problem' in found) && found.generation === generation ? found.content : undefined;
    this.residentLoads.set(ADJACENCY.kind, {
      loadedFrom: usable ? 'snapshot' : 'built',
      ms: performance.now() - started,
      ...(note ? { note: `${note}; rebuilt from the graph` } : {}),
    });
    return usable;
  }

  /**
   * Records a write's change (`all`: every entry moved) for structures held elsewhere (other
   * processes, snapshot files) to follow.
   */
  private async logChange(generation: number, change: StoreChange | 'all'): Promise<void> {
    const record: ChangeRecord =
      change === 'all'
        ? { generation, all: true }
        : { generation, upserted: change.upserted.map((s) => s.entry.id), deleted: [...change.deleted] };
    await mkdir(join(this.dir, SNAPSHOT_DIR), { recursive: true });
    await appendChange(join(this.dir, SNAPSHOT_DIR, CHANGE_LOG), record);
  }

  /** Carries the derived structures that were current before a write over to the generation after it. */
  private followWrite(change: StoreChange, from: number, to: number): void {
    if ([...this.derivedByKey.values()].some((d) => d.snapshot)) this.scheduleSnapshots();
    for (const [key, d] of this.derivedByKey) {
      if (d.generation === to) continue; // built after the write by a query that saw the new generation first
      if (d.generation !== from || !d.follow) {
        this.derivedByKey.delete(key);
        continue;
      }
      const follow = d.follow;
      d.value = d.value.then((v) => {
        follow(v, change);
        return v;
      });
      d.value.catch(() => this.derivedByKey.get(key) === d && this.derivedByKey.delete(key));
      d.generation = to;
    }
  }

  /** BM25 over every entry's title, aliases and content, in memory (see KeywordIndex). */
  keywords(): Promise<KeywordIndex> {
    return this.derived(
      'keywords',
      async () => new KeywordIndex(await this.table.searchTexts()),
      (index, change) => {
        index.remove(change.deleted);
        index.upsert(change.upserted.map((s) => ({ id: s.entry.id, text: searchText(s.entry), group: s.entry.coreId })));
      },
      { fingerprint: 'keywords/1', write: (index) => index.snapshot(), read: (content) => KeywordIndex.fromSnapshot(content) },
    );
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
    return this.derived(
      'columns',
      async () => {
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
      (columns, change) => {
        const { upserted } = change;
        columns.remove(change.deleted);
        columns.upsert(
          upserted.map((s) => columnRow(s.entry)),
          (i) => upserted[i]!.vector,
          (i) => ({ vectorSmall: upserted[i]!.vectorSmall, record: entryRecord(upserted[i]!.entry) }),
        );
      },
      {
        // What is held depends on the limits: a snapshot taken under others is not loaded.
        fingerprint: `columns/1 ${this.meta.embedder.id} ${dimensions}/${smallDimensions} scan≤${this.scanMaxEntries} whole≤${this.residentMaxEntries}`,
        write: (columns) => columns.snapshot(),
        read: (content) =>
          EntryColumns.fromSnapshot(dimensions, content, {
            small,
            entries: { maxEntries: this.residentMaxEntries, decode: (ipc) => ({ ipc, ...entriesOfIpc(ipc) }) },
            exact,
          }),
      },
    );
  }

  /**
   * Where the searches run for a store of `entries`: what the loaded columns hold, or before they
   * are loaded, what they will hold at this size (not loading them: that is the cold start).
   */
  async searchRunsOn(entries: number): Promise<StoreStats['search']> {
    const loaded = this.derivedByKey.get('columns') as Derived<EntryColumns> | undefined;
    const columns = loaded?.generation === (await this.currentGeneration()) ? await loaded.value.catch(() => undefined) : undefined;
    const on = (held: boolean): SearchRunsOn => (held ? 'memory' : 'lancedb');
    if (columns) return { exact: on(columns.holdsExactVectors), stage1: on(columns.holdsSmallVectors), entries: on(columns.holdsEntries) };
    return {
      exact: on(entries <= this.residentMaxEntries),
      stage1: on(entries <= this.scanMaxEntries),
      entries: on(entries <= this.residentMaxEntries),
    };
  }

  /** The entries of `ids` that exist, in the order asked: from memory while entries are held whole, else one read. */
  async readEntries(ids: readonly string[]): Promise<MemoryEntry[]> {
    const held = (await this.columns()).entries(ids);
    if (held) return held;
    const byId = new Map((await this.table.read({ ids: [...ids] })).map((r) => [r.entry.id, r.entry]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** The meta.json version last read: every write replaces the file (new inode, mtime). */
  private metaStamp = '';

  /**
   * Re-reads the generation another process may have bumped. Asked on every cached query, so the
   * file is read only when its stamp moved: a synchronous stat costs microseconds, an async read
   * of the file ~0.1 ms, which was most of a cache hit.
   */
  async currentGeneration(): Promise<number> {
    let stamp = '';
    try {
      const st = statSync(metaPath(this.dir), { bigint: true });
      stamp = `${st.ino}:${st.mtimeNs}:${st.size}`;
    } catch {
      // missing: keep what we hold
    }
    if (stamp !== '' && stamp === this.metaStamp) return this.meta.generation;
    const fresh = await readMeta(this.dir);
    if (fresh) this.meta = fresh;
    this.metaStamp = stamp;
    return this.meta.generation;
  }

  /** Moves the generation on; `from` is the generation the write found (another process may have moved it since we last looked). */
  private async bumpGeneration(sources: Record<string, string>, forgetSources = false): Promise<{ from: number; to: number }> {
    const fresh = (await readMeta(this.dir)) ?? this.meta;
    // A delete can remove edges that an unchanged file would put back, so its fingerprints go.
    this.meta = { ...fresh, generation: fresh.generation + 1, sources: forgetSources ? {} : { ...fresh.sources, ...sources } };
    await writeMeta(this.dir, this.meta);
    return { from: fresh.generation, to: this.meta.generation };
  }

  async close(): Promise<void> {
    // Best effort: a snapshot that cannot be written is rebuilt on the next open.
    await this.writeSnapshots().catch(() => undefined);
    const columns = this.derivedByKey.get('columns') as Derived<EntryColumns> | undefined;
    await columns?.value.then(
      (c) => c.close(),
      () => undefined,
    );
    this.table.close();
    this.embeddingCache.close();
    await this.graph.close();
  }
}
