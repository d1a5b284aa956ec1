import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import type { MemoryEntry } from '../../model/types.js';
import { MemcoreError } from '../../model/errors.js';
import { confidenceRank, entryFilterSql, type EntryFilter } from './filter.js';
import { plainRows, rowsOf } from './plainRows.js';
import type { KeywordDocument } from '../resident/keywordIndex.js';
import { storeFailure, translateNativeErrors } from '../storeErrors.js';
import { RECORD_ENTRY_TYPES } from '../../model/entryFilter.js';

interface ColumnLayout {
  name: string;
  type: 'utf8' | 'int32' | 'float64' | 'bool' | 'list<utf8>' | 'vector' | 'vector_small';
  nullable: boolean;
  /** For a column added after tables were made: the SQL value it takes in their rows. */
  added?: string;
}
interface TableLayout {
  table: string;
  columns: ColumnLayout[];
}

const layout = JSON.parse(readFileSync(new URL('../../../schema/lance-entries.json', import.meta.url), 'utf8')) as TableLayout;

function arrowSchema(dimensions: number, smallDimensions: number): arrow.Schema {
  const vector = (n: number) => new arrow.FixedSizeList(n, new arrow.Field('item', new arrow.Float32(), true));
  const types: Record<ColumnLayout['type'], () => arrow.DataType> = {
    utf8: () => new arrow.Utf8(),
    int32: () => new arrow.Int32(),
    float64: () => new arrow.Float64(),
    bool: () => new arrow.Bool(),
    'list<utf8>': () => new arrow.List(new arrow.Field('item', new arrow.Utf8(), true)),
    vector: () => vector(dimensions),
    vector_small: () => vector(smallDimensions),
  };
  return new arrow.Schema(layout.columns.map((c) => new arrow.Field(c.name, types[c.type](), c.nullable)));
}

/** A stored entry together with its vectors. */
/** An entry's filter and scoring fields as the resident entry columns hold them (store/resident/entryColumns.ts). */
export interface EntryColumnRow {
  id: string;
  coreId: string;
  source: string | null;
  entryType: string;
  confidenceRank: number;
  importance: number;
  tags: string[];
  sensitivity: string;
  createdAt: number;
  updatedAt: number;
  validFrom: number | null;
  validTo: number | null;
}

export interface StoredEntry {
  entry: MemoryEntry;
  vector: Float32Array;
  vectorSmall: Float32Array;
}

/** Row shape of the `entries` table (see schema/lance-entries.json). */
interface EntryRow {
  id: string;
  core_id: string;
  title: string;
  aliases: string[];
  content: string;
  search_text: string;
  entry_type: string;
  confidence: string;
  confidence_rank: number;
  importance: number;
  tags: string[];
  source: string | null;
  sensitivity: string;
  created_at: number;
  updated_at: number;
  valid_from: number | null;
  valid_to: number | null;
  content_hash: string;
  pinned: boolean;
  vector: Float32Array;
  vector_small: Float32Array;
}

type ReadRow = Omit<EntryRow, 'tags' | 'aliases' | 'vector' | 'vector_small'> & {
  tags: Iterable<string> | null;
  aliases: Iterable<string> | null;
  vector?: Iterable<number>;
  vector_small?: Iterable<number>;
};

/**
 * Copies a vector cell out of a result row. LanceDB hands back Arrow vectors: their `toArray()`
 * is a typed-array view, far cheaper than iterating the cell element by element.
 */
export function toFloat32(cell: Iterable<number> | { toArray(): ArrayLike<number> }): Float32Array {
  if (typeof (cell as { toArray?: unknown }).toArray === 'function')
    return Float32Array.from((cell as { toArray(): ArrayLike<number> }).toArray());
  return Float32Array.from(cell as Iterable<number>);
}

/** Title, aliases and content in one column: what the keyword index reads. */
const SEARCH_TEXT = 'search_text';
const UPSERT_BATCH = 10_000;
/** What a read returns: every column but the vectors and the derived search text (a copy of title, aliases and content). */
const ENTRY_COLUMNS = layout.columns
  .filter((c) => c.type !== 'vector' && c.type !== 'vector_small' && c.name !== SEARCH_TEXT)
  .map((c) => c.name);

/** The text keyword search matches: title, aliases and content. */
export function searchText(e: MemoryEntry): string {
  return [e.title, ...e.aliases, e.content].join('\n');
}

function toRow(s: StoredEntry): EntryRow {
  const e = s.entry;
  return {
    id: e.id,
    core_id: e.coreId,
    title: e.title,
    aliases: e.aliases,
    content: e.content,
    search_text: searchText(e),
    entry_type: e.entryType,
    confidence: e.confidence,
    confidence_rank: confidenceRank(e.confidence),
    importance: e.importance,
    tags: e.tags,
    source: e.source,
    sensitivity: e.sensitivity,
    created_at: e.createdAt.getTime(),
    updated_at: e.updatedAt.getTime(),
    valid_from: e.validFrom?.getTime() ?? null,
    valid_to: e.validTo?.getTime() ?? null,
    content_hash: e.contentHash,
    pinned: e.pinned,
    // typed arrays: rowsToArrow copies each column into one buffer
    vector: s.vector,
    vector_small: s.vectorSmall,
  };
}

/**
 * Apache Arrow as LanceDB loads it (CommonJS; an ESM import is another copy of the classes).
 * LanceDB takes a Table as it is only when it is an instance of its own copy; rows, or a Table
 * of the other copy, it rebuilds value by value: ~0.4 s a 5,000-entry write against ~0.1 s.
 */
const lanceArrow = createRequire(import.meta.url)('apache-arrow') as typeof arrow;

/** Arrow's validity bitmap (bit i set: value i present) and the count of absent values. */
function validity(values: readonly unknown[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null || v === undefined) nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

/** UTF-8 strings as one byte buffer and their offsets: Arrow's own builder costs ~10× as much. */
function utf8Data(values: readonly (string | null | undefined)[]): arrow.Data<arrow.Utf8> {
  const valueOffsets = new Int32Array(values.length + 1);
  let total = 0;
  values.forEach((v, i) => {
    if (v !== null && v !== undefined) total += Buffer.byteLength(v);
    valueOffsets[i + 1] = total;
  });
  const data = new Uint8Array(total);
  const writer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  values.forEach((v, i) => {
    if (v) writer.write(v, valueOffsets[i]!, 'utf8');
  });
  return lanceArrow.makeData({ type: new lanceArrow.Utf8(), length: values.length, ...validity(values), valueOffsets, data });
}

/** Rows as one record batch in the table's schema, column by column; each vector column is one copied buffer. */
function rowsToArrow(rows: EntryRow[], schema: arrow.Schema): arrow.Table {
  const columns = schema.fields.map((field) => {
    const values = rows.map((r) => r[field.name as keyof EntryRow]);
    const type = field.type as arrow.DataType;
    if (lanceArrow.DataType.isFixedSizeList(type)) {
      const flat = new Float32Array(rows.length * type.listSize);
      values.forEach((v, i) => flat.set(v as Float32Array, i * type.listSize));
      const item = lanceArrow.makeData({ type: type.children[0]!.type as arrow.Float32, length: flat.length, data: flat });
      return lanceArrow.makeData({ type, length: rows.length, nullCount: 0, child: item });
    }
    if (lanceArrow.DataType.isUtf8(type)) return utf8Data(values as (string | null)[]);
    if (lanceArrow.DataType.isList(type) && lanceArrow.DataType.isUtf8(type.children[0]!.type)) {
      const lists = values as (readonly string[] | null)[];
      const valueOffsets = new Int32Array(lists.length + 1);
      lists.forEach((l, i) => (valueOffsets[i + 1] = valueOffsets[i]! + (l?.length ?? 0)));
      const child = utf8Data(lists.flatMap((l) => l ?? []));
      return lanceArrow.makeData({ type: type as arrow.List<arrow.Utf8>, length: lists.length, ...validity(lists), valueOffsets, child });
    }
    return lanceArrow.vectorFromArray(values, field.type).data[0]!;
  });
  const batch = lanceArrow.makeData({ type: new lanceArrow.Struct(schema.fields), length: rows.length, nullCount: 0, children: columns });
  return new lanceArrow.Table([new lanceArrow.RecordBatch(schema, batch)]);
}

function storedFromRow(r: ReadRow): StoredEntryOrEntry {
  return {
    entry: fromRow(r),
    vector: r.vector ? toFloat32(r.vector) : undefined,
    vectorSmall: r.vector_small ? toFloat32(r.vector_small) : undefined,
  };
}

function fromRow(r: ReadRow): MemoryEntry {
  return {
    id: r.id,
    coreId: r.core_id,
    title: r.title,
    aliases: r.aliases ? Array.from(r.aliases) : [],
    content: r.content,
    entryType: r.entry_type,
    confidence: r.confidence as MemoryEntry['confidence'],
    importance: r.importance,
    tags: r.tags ? Array.from(r.tags) : [],
    source: r.source ?? null,
    sensitivity: r.sensitivity as MemoryEntry['sensitivity'],
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    validFrom: r.valid_from === null || r.valid_from === undefined ? null : new Date(r.valid_from),
    validTo: r.valid_to === null || r.valid_to === undefined ? null : new Date(r.valid_to),
    contentHash: r.content_hash,
    pinned: r.pinned === true,
  };
}

/** A search hit: the id and how it ranked. Rows are read afterwards, once per query, for the hits that survive. */
export interface VectorHit {
  id: string;
  /** 1 − cosine distance. */
  similarity: number;
}

/** Entries read in bulk and held as Arrow columns (the IPC bytes they were decoded from, shared, not copied). */
export interface LoadedEntries {
  ipc: Uint8Array;
  count: number;
  entryAt: (i: number) => MemoryEntry;
}

/** The entries of an Arrow IPC table of the entry columns, each decoded when asked for. */
export function entriesOfIpc(ipc: Uint8Array): Omit<LoadedEntries, 'ipc'> {
  const table = lanceArrow.tableFromIPC(ipc);
  // Per batch, its first row and its columns.
  const batches = table.batches.map((batch, b) => ({
    start: table.batches.slice(0, b).reduce((sum, x) => sum + x.numRows, 0),
    columns: ENTRY_COLUMNS.map((name) => [name, batch.getChild(name)!] as const),
  }));
  const entryAt = (i: number) => {
    let lo = 0;
    for (let hi = batches.length - 1; lo < hi;) {
      const mid = (lo + hi + 1) >> 1;
      if (batches[mid]!.start <= i) lo = mid;
      else hi = mid - 1;
    }
    const { start, columns } = batches[lo]!;
    // Assigned in one order into a fresh object: Object.fromEntries cost ~40% of the read.
    const row: Record<string, unknown> = {};
    for (const [name, column] of columns) row[name] = column.get(i - start);
    return fromRow(row as ReadRow);
  };
  return { count: table.numRows, entryAt };
}

/** Thin adapter over the LanceDB `entries` table: storage only, no ranking. */
export class EntriesTable {
  /**
   * Entries with a validity bound, the newest creation time among the others, and the ids of the
   * records never in effect (retractions), read once and forgotten by every write through this table.
   */
  private timeBounded:
    Promise<{ bounded: { id: string; from: number | null; to: number | null }[]; newestCreated: number; records: string[] }> | undefined;

  private constructor(
    private readonly table: lancedb.Table,
    /** The table's schema as LanceDB reports it (its Arrow copy), for building writes. */
    private readonly schema: arrow.Schema,
    /** The LanceDB folder, for `scanStored`'s handle of its own. */
    private readonly dir: string,
  ) {}

  /**
   * The filter as SQL, with `validAt` turned into the few ids it excludes. The range test on
   * valid_from/valid_to/created_at (with its IS NULL arms) costs ~10 ms a search at 100K entries,
   * while entries with a validity bound are usually few and a time after the newest creation
   * excludes no other: their bounds are held here, and the filter becomes `NOT (id IN (…))`, or
   * nothing. For an earlier time, or past 256 excluded ids, the range test it is. Records that
   * are never in effect (retractions, which every search leaves out) are few too: left out by id.
   */
  private async whereSql(given: EntryFilter): Promise<string | undefined> {
    let filter = given;
    const records =
      filter.notEntryTypes?.length === RECORD_ENTRY_TYPES.length && filter.notEntryTypes.every((t) => RECORD_ENTRY_TYPES.includes(t));
    if (!filter.validAt && !records) return entryFilterSql(filter);
    this.timeBounded ??= Promise.all([
      plainRows<{ id: string; valid_from: unknown; valid_to: unknown }>(
        this.table.query().where('valid_from IS NOT NULL OR valid_to IS NOT NULL').select(['id', 'valid_from', 'valid_to']),
      ),
      this.table.query().where('valid_from IS NULL').select(['created_at']).toArrow(),
      plainRows<{ id: string }>(
        this.table
          .query()
          .where(entryFilterSql({ entryTypes: RECORD_ENTRY_TYPES })!)
          .select(['id']),
      ),
    ]).then(
      ([rows, created, recordRows]) => {
        let newestCreated = -Infinity;
        for (const batch of created.batches)
          for (const t of batch.getChild('created_at')!.toArray() as Float64Array) if (t > newestCreated) newestCreated = t;
        const bounded = rows.map((r) => ({
          id: String(r.id),
          from: r.valid_from == null ? null : Number(r.valid_from),
          to: r.valid_to == null ? null : Number(r.valid_to),
        }));
        return { bounded, newestCreated, records: recordRows.map((r) => String(r.id)) };
      },
      (e: unknown) => {
        this.timeBounded = undefined;
        throw e;
      },
    );
    const held = await this.timeBounded;
    if (records && held.records.length <= 256)
      filter = { ...filter, notEntryTypes: undefined, notIds: [...(filter.notIds ?? []), ...held.records] };
    if (!filter.validAt) return entryFilterSql(filter);
    const t = filter.validAt.getTime();
    const { bounded, newestCreated } = held;
    if (newestCreated > t) return entryFilterSql(filter);
    const excluded = bounded.filter((b) => (b.from !== null && b.from > t) || (b.to !== null && b.to <= t)).map((b) => b.id);
    if (excluded.length > 256) return entryFilterSql(filter);
    return entryFilterSql({ ...filter, validAt: undefined, notIds: [...(filter.notIds ?? []), ...excluded] });
  }

  /** The LanceDB folder, which a failure names (translateNativeErrors). */
  get location(): string {
    return this.dir;
  }

  /** The lengths of the stored vectors (doctor rebuilding a lost meta.json), or undefined when there is no table. */
  static async vectorSizes(dir: string): Promise<{ dimensions: number; smallDimensions: number } | undefined> {
    const db = await lancedb.connect(dir);
    if (!(await db.tableNames()).includes(layout.table)) return undefined;
    const schema = await (await db.openTable(layout.table)).schema();
    const size = (name: string) => (schema.fields.find((f) => f.name === name)?.type as arrow.FixedSizeList | undefined)?.listSize;
    const dimensions = size('vector');
    const smallDimensions = size('vector_small');
    return dimensions && smallDimensions ? { dimensions, smallDimensions } : undefined;
  }

  static async open(dir: string, dimensions: number, smallDimensions: number): Promise<EntriesTable> {
    let table: lancedb.Table;
    let schema: arrow.Schema;
    try {
      const db = await lancedb.connect(dir);
      // Opened rather than created when it exists: a table from an older layout would not match the schema.
      table = (await db.tableNames()).includes(layout.table)
        ? await db.openTable(layout.table)
        : await db.createEmptyTable(layout.table, arrowSchema(dimensions, smallDimensions), { existOk: true });
      schema = await table.schema();
      // Columns added since a table was made are added to it, with the value older rows mean.
      const added = layout.columns.filter((c) => c.added !== undefined && !schema.fields.some((f) => f.name === c.name));
      if (added.length > 0) {
        await table.addColumns(added.map((c) => ({ name: c.name, valueSql: c.added! })));
        schema = await table.schema();
      }
    } catch (e) {
      throw storeFailure('the entries table', dir, e);
    }
    const vectorField = schema.fields.find((f) => f.name === 'vector');
    const size = (vectorField?.type as arrow.FixedSizeList | undefined)?.listSize;
    if (size !== dimensions) {
      throw new MemcoreError(`the entries table holds ${size}-dimension vectors, the embedder gives ${dimensions}`, 'MODEL_MISMATCH');
    }
    return new EntriesTable(table, schema, dir);
  }

  /**
   * Insert or replace by id, in merges of at most 10,000 rows: LanceDB's hash join for a merge
   * reserves memory from a fixed pool (100 MB), and re-deriving 100K rows in one merge fails with
   * "Resources exhausted". Each merge is idempotent, so a crash between two is repaired by replay.
   * Rows in `newIds`, which the caller knows the table does not hold, are appended instead: a merge
   * joins against the whole table, so its cost grows with the table, an append's does not. Only a
   * single writer that has just checked may pass `newIds`; a replay must not (an append is not
   * idempotent).
   */
  async upsert(entries: readonly StoredEntry[], opts: { newIds?: ReadonlySet<string> } = {}): Promise<void> {
    if (entries.length === 0) return;
    const appended = opts.newIds ? entries.filter((e) => opts.newIds!.has(e.entry.id)) : [];
    const merged = appended.length > 0 ? entries.filter((e) => !opts.newIds!.has(e.entry.id)) : entries;
    try {
      if (appended.length > 0) await this.table.add(rowsToArrow(appended.map(toRow), this.schema));
      for (let i = 0; i < merged.length; i += UPSERT_BATCH) {
        await this.table
          .mergeInsert('id')
          .whenMatchedUpdateAll()
          .whenNotMatchedInsertAll()
          .execute(rowsToArrow(merged.slice(i, i + UPSERT_BATCH).map(toRow), this.schema));
      }
    } finally {
      this.timeBounded = undefined; // after the write: a read meanwhile may have loaded the old bounds
    }
  }

  async delete(ids: readonly string[]): Promise<void> {
    const where = entryFilterSql({ ids });
    if (ids.length > 0 && where) await this.table.delete(where).finally(() => (this.timeBounded = undefined));
  }

  /**
   * The full vectors of those of `ids` that exist, by id: one read of two columns, ~1.5 ms for a
   * dozen rows at 100K entries where reading the entries too costs ~3 ms.
   */
  async vectorsOf(ids: readonly string[]): Promise<Map<string, Float32Array>> {
    const where = entryFilterSql({ ids });
    if (ids.length === 0 || !where) return new Map();
    const rows = await plainRows<{ id: string; vector: Parameters<typeof toFloat32>[0] }>(
      this.table.query().where(where).select(['id', 'vector']),
    );
    return new Map(rows.map((r) => [r.id, toFloat32(r.vector)]));
  }

  /** Entries matching the filter, in one read; with vectors when asked. */
  async read(filter: EntryFilter, opts: { withVectors?: boolean; limit?: number } = {}): Promise<StoredEntryOrEntry[]> {
    let q = this.table.query().select(opts.withVectors ? [...ENTRY_COLUMNS, 'vector', 'vector_small'] : ENTRY_COLUMNS);
    const where = await this.whereSql(filter);
    if (where) q = q.where(where);
    if (opts.limit !== undefined) q = q.limit(opts.limit);
    return (await plainRows<ReadRow>(q)).map(storedFromRow);
  }

  /**
   * Every row with its vectors, `batchRows` at a time (the last batch fewer), as of the table's version when the
   * scan starts: the rows come from a handle of their own checked out at that version, so writes
   * meanwhile (a refit re-writing the rows it reads) neither repeat nor skip any. Holds one batch
   * at a time, where `read` holds the whole table (~2.5 GB of vectors at 1M entries).
   */
  async *scanStored(batchRows: number): AsyncGenerator<StoredEntry[]> {
    const { snapshot, close } = await this.atCurrentVersion();
    try {
      const pending: StoredEntry[] = [];
      for await (const batch of snapshot.query().select([...ENTRY_COLUMNS, 'vector', 'vector_small'])) {
        for (const row of rowsOf<ReadRow>(batch)) pending.push(storedFromRow(row) as StoredEntry);
        while (pending.length >= batchRows) yield pending.splice(0, batchRows);
      }
      if (pending.length > 0) yield pending;
    } finally {
      close();
    }
  }

  /** A handle of its own on the table, checked out at the version it has now: a scan of it sees no later write. */
  private async atCurrentVersion(): Promise<{ snapshot: lancedb.Table; close: () => void }> {
    const db = await lancedb.connect(this.dir);
    const snapshot = await db.openTable(layout.table).catch((e: unknown) => {
      db.close();
      throw e;
    });
    const close = () => {
      snapshot.close();
      db.close();
    };
    try {
      await snapshot.checkout(await this.table.version());
    } catch (e) {
      close();
      throw e;
    }
    return { snapshot, close };
  }

  /**
   * `count` full vectors spread evenly over the table (row ⌊i·rows/count⌋, the rows fitPca samples
   * of all of them), read as a stream: a fit needs a few thousand, not every vector in memory.
   */
  async sampleVectors(count: number): Promise<Float32Array[]> {
    const rows = await this.table.countRows();
    const step = rows / Math.min(count, rows);
    const out: Float32Array[] = [];
    let row = 0;
    for await (const batch of this.table.query().select(['vector'])) {
      const vectors = batch.getChild('vector')!;
      for (let i = 0; i < batch.numRows; i++, row++) {
        if (row === Math.floor(out.length * step)) out.push(toFloat32(vectors.get(i) as Iterable<number>));
      }
    }
    return out;
  }

  /**
   * The narrow columns of every entry, with the full vectors (row i's at i·dimensions), for
   * EntryColumns; with `hold.smallDimensions`, also the small vectors (row i's at i·smallDimensions),
   * for the stage-1 scan; with `hold.entries`, `entryAt(i)`, row i as an entry, for EntryColumns to
   * hold entries whole. `entryAt` reads from the Arrow columns of this one scan, kept (without the
   * vector columns, which are copied out): building 100K entries up front cost ~1 s, reading the dozen a query needs costs microseconds.
   */
  async columnRows(
    dimensions: number,
    hold: { smallDimensions?: number; entries?: boolean } = {},
  ): Promise<{ rows: EntryColumnRow[]; vectors: Float32Array; smallVectors?: Float32Array; entries?: LoadedEntries }> {
    const narrow = [
      'id',
      'core_id',
      'entry_type',
      'confidence_rank',
      'importance',
      'tags',
      'sensitivity',
      'created_at',
      'updated_at',
      'valid_from',
      'valid_to',
      'source',
    ];
    const { smallDimensions, entries } = hold;
    // Read as a stream, batch by batch, from a handle checked out at the table's version (as
    // scanStored): the whole table as one Arrow result held ~2.5 GB of vectors at 1M entries
    // beside the copies made here, and a writer's close that builds the columns passed 11 GB.
    const { snapshot, close } = await this.atCurrentVersion();
    try {
      const count = await snapshot.countRows();
      const rows: EntryColumnRow[] = [];
      const vectors = new Float32Array(count * dimensions);
      const smallVectors = smallDimensions ? new Float32Array(count * smallDimensions) : undefined;
      // The entry columns of each batch copied into IPC bytes of their own: the batch's columns are
      // views into one buffer that also holds the vectors (~2.5 KB an entry), which the copy lets go.
      const entryParts: Uint8Array[] = [];
      // The vectors of a batch are one Float32 buffer: copied whole, not cell by cell.
      const copyVectors = (batch: arrow.RecordBatch, name: string, into: Float32Array, width: number) => {
        const values = batch.getChild(name)!.data[0]!.children[0]!;
        into.set((values.values as Float32Array).subarray(values.offset, values.offset + batch.numRows * width), rows.length * width);
      };
      const columns = [
        ...(entries ? [...new Set([...narrow, ...ENTRY_COLUMNS])] : narrow),
        'vector',
        ...(smallDimensions ? ['vector_small'] : []),
      ];
      for await (const batch of snapshot.query().select(columns)) {
        if (rows.length + batch.numRows > count)
          throw new MemcoreError(`the entries table holds more rows than it counted (${count})`, 'STORE');
        const [id, core, type, rank, importance, tags, sensitivity, created, updated, from, to, source] = narrow.map((name) =>
          batch.getChild(name)!,
        );
        copyVectors(batch, 'vector', vectors, dimensions);
        if (smallVectors) copyVectors(batch, 'vector_small', smallVectors, smallDimensions!);
        if (entries) entryParts.push(lanceArrow.tableToIPC(new lanceArrow.Table(batch).select(ENTRY_COLUMNS)));
        for (let i = 0; i < batch.numRows; i++) {
          const t = tags!.get(i) as Iterable<string> | null;
          rows.push({
            id: id!.get(i) as string,
            coreId: core!.get(i) as string,
            source: (source!.get(i) as string | null) ?? null,
            entryType: type!.get(i) as string,
            confidenceRank: rank!.get(i) as number,
            importance: importance!.get(i) as number,
            tags: t ? Array.from(t) : [],
            sensitivity: sensitivity!.get(i) as string,
            createdAt: created!.get(i) as number,
            updatedAt: updated!.get(i) as number,
            validFrom: (from!.get(i) as number | null) ?? null,
            validTo: (to!.get(i) as number | null) ?? null,
          });
        }
      }
      const read = {
        rows,
        vectors: rows.length === count ? vectors : vectors.subarray(0, rows.length * dimensions),
        smallVectors: smallVectors && (rows.length === count ? smallVectors : smallVectors.subarray(0, rows.length * smallDimensions!)),
      };
      if (!entries) return read;
      // One IPC form for every batch, which a snapshot of the columns writes as it is.
      const entryBatches = entryParts.flatMap((part) => lanceArrow.tableFromIPC(part).batches);
      const entriesIpc =
        entryBatches.length > 0
          ? lanceArrow.tableToIPC(new lanceArrow.Table(entryBatches))
          : lanceArrow.tableToIPC(lanceArrow.tableFromArrays({}).select([]));
      return { ...read, entries: { ipc: entriesIpc, ...entriesOfIpc(entriesIpc) } };
    } finally {
      close();
    }
  }

  /**
   * How many entries each core and each entry type holds (`stats()`): a read of those two columns
   * only, where reading every row whole took 35 s at 1M entries.
   */
  async tally(): Promise<{ entries: number; cores: Record<string, number>; entryTypes: Record<string, number> }> {
    const cores: Record<string, number> = {};
    const entryTypes: Record<string, number> = {};
    let entries = 0;
    for await (const batch of this.table.query().select(['core_id', 'entry_type'])) {
      const core = batch.getChild('core_id')!;
      const type = batch.getChild('entry_type')!;
      for (let i = 0; i < batch.numRows; i++) {
        const c = core.get(i) as string;
        const t = type.get(i) as string;
        cores[c] = (cores[c] ?? 0) + 1;
        entryTypes[t] = (entryTypes[t] ?? 0) + 1;
      }
      entries += batch.numRows;
    }
    return { entries, cores, entryTypes };
  }

  /** Id, search text (title, aliases, content) and core of every entry, for the keyword index. */
  async searchTexts(): Promise<KeywordDocument[]> {
    const result = await this.table.query().select(['id', 'core_id', SEARCH_TEXT]).toArrow();
    const out: KeywordDocument[] = [];
    for (const batch of result.batches) {
      const ids = batch.getChild('id')!;
      const cores = batch.getChild('core_id')!;
      const texts = batch.getChild(SEARCH_TEXT)!;
      for (let i = 0; i < batch.numRows; i++)
        out.push({ id: ids.get(i) as string, text: texts.get(i) as string, group: cores.get(i) as string });
    }
    return out;
  }

  /** Id, title, aliases and content of every entry (all cores, all validity), for auto-linking; a narrow read. */
  async linkTexts(): Promise<{ id: string; title: string; aliases: string[]; content: string }[]> {
    const rows = await plainRows<{ id: string; title: string; aliases: Iterable<string> | null; content: string }>(
      this.table.query().select(['id', 'title', 'aliases', 'content']),
    );
    return rows.map((r) => ({ id: r.id, title: r.title, aliases: r.aliases ? Array.from(r.aliases) : [], content: r.content }));
  }

  /** Id, title and aliases of every entry (all cores, all validity), for name matching; a narrow read. */
  async names(): Promise<{ id: string; title: string; aliases: string[] }[]> {
    const rows = await plainRows<{ id: string; title: string; aliases: Iterable<string> | null }>(
      this.table.query().select(['id', 'title', 'aliases']),
    );
    return rows.map((r) => ({ id: r.id, title: r.title, aliases: r.aliases ? Array.from(r.aliases) : [] }));
  }

  /**
   * Nearest entries by cosine distance on `column`, the filter (if any) pushed down before the
   * limit. Only ids and distances: reading the other columns of 100 hits costs more than the
   * search itself at 100K entries (~6 of ~9 ms), their float vectors ~2–3 ms.
   */
  async nearest(
    vector: Float32Array,
    opts: { column?: 'vector' | 'vector_small'; filter?: EntryFilter; limit: number },
  ): Promise<VectorHit[]> {
    let q = this.table
      .vectorSearch(Array.from(vector))
      .column(opts.column ?? 'vector')
      .distanceType('cosine')
      // Partitions of the IVF index a search probes (stores past scanMaxEntries search the index); LanceDB's default.
      .nprobes(20)
      .select(['id', '_distance'])
      .limit(opts.limit);
    const where = opts.filter && (await this.whereSql(opts.filter));
    if (where) q = q.where(where);
    const rows = await plainRows<{ id: string; _distance?: number }>(q);
    return rows.map((r) => ({ id: r.id, similarity: 1 - (r._distance ?? 1) }));
  }

  /**
   * (Re)builds every index: scalar indexes on the filter columns, and an ANN index on
   * `vector_small` once there are enough rows for one to beat a scan; then folds new rows in.
   * (Keyword search is the in-memory KeywordIndex over `search_text`, not a LanceDB index.)
   */
  async buildIndexes(opts: { annMinRows: number }): Promise<{ scalar: string[]; ann: boolean; rows: number }> {
    const rows = await this.table.countRows();
    if (rows === 0) return { scalar: [], ann: false, rows };
    const scalar = ['id', 'core_id', 'entry_type', 'confidence_rank', 'sensitivity', 'valid_to'];
    for (const column of scalar) {
      const config = column === 'id' || column === 'valid_to' ? lancedb.Index.btree() : lancedb.Index.bitmap();
      await this.table.createIndex(column, { config, replace: true });
    }
    await this.table.createIndex('tags', { config: lancedb.Index.labelList(), replace: true });
    const ann = rows >= opts.annMinRows;
    if (ann) {
      await this.table.createIndex('vector_small', {
        config: lancedb.Index.ivfFlat({ distanceType: 'cosine', numPartitions: Math.max(1, Math.round(Math.sqrt(rows))) }),
        replace: true,
      });
    }
    // Compacts, and drops the versions before this one: a refit has just rewritten every row, and
    // the old files would otherwise stay for a week (LanceDB's default), doubling the table.
    await this.table.optimize({ cleanupOlderThan: new Date() });
    return { scalar: [...scalar, 'tags'], ann, rows };
  }

  /** The table's indexes by column, and for each the rows written since it was built (not in it yet). */
  async indexHealth(): Promise<{ column: string; unindexedRows: number }[]> {
    const out: { column: string; unindexedRows: number }[] = [];
    for (const index of await this.table.listIndices()) {
      const stats = await this.table.indexStats(index.name);
      out.push({ column: index.columns.join(','), unindexedRows: stats?.numUnindexedRows ?? 0 });
    }
    return out;
  }

  async count(filter: EntryFilter = {}): Promise<number> {
    return this.table.countRows(await this.whereSql(filter));
  }

  /** Table version: changes on every write, so tests can see that a no-op wrote nothing. */
  async version(): Promise<number> {
    return this.table.version();
  }

  close(): void {
    this.table.close();
  }
}

translateNativeErrors(EntriesTable, 'the entries table', [
  'upsert',
  'delete',
  'read',
  'vectorsOf',
  'tally',
  'sampleVectors',
  'columnRows',
  'searchTexts',
  'names',
  'nearest',
  'buildIndexes',
  'indexHealth',
  'count',
  'version',
]);

export interface StoredEntryOrEntry {
  entry: MemoryEntry;
  vector: Float32Array | undefined;
  vectorSmall: Float32Array | undefined;
}
