import { norm } from '../../embed/embedder.js';
import { MatrixKernel } from '../../kernel/matrixKernel.js';
import { FullVectors } from './fullVectors.js';
import { CONFIDENCE_LEVELS, type Confidence, type MemoryEntry } from '../../model/types.js';
import type { EntryColumnRow, LoadedEntries } from '../lance/entriesTable.js';

export type { EntryColumnRow };
import type { EntryFilter } from '../../model/entryFilter.js';
import type { LaterSections, PositionedSection, SnapshotArray, SnapshotContent } from '../snapshot/snapshotFile.js';
import { entryFromRecord } from './entryRecord.js';
import { grown } from './grown.js';
import { TopK } from '../../kernel/topK.js';
import { slotByKey, slotsSortedByKey } from '../../kernel/sortedIndexOf.js';

/** What scoring needs of an entry, known before its row is read. */
export interface EntryFeatures {
  coreId: string;
  /** Where the entry came from (`source`), which ratings also average over. */
  source: string | null;
  confidence: Confidence;
  importance: number;
  /** The entry's own date, which recency runs from: `updated_at` (see MemoryEntry.updatedAt). */
  updatedAt: Date;
}

/** The columns of one entry that EntryColumns holds (besides its vector). */

export function columnRow(e: MemoryEntry): EntryColumnRow {
  return {
    id: e.id,
    coreId: e.coreId,
    source: e.source,
    entryType: e.entryType,
    confidenceRank: CONFIDENCE_LEVELS.indexOf(e.confidence) + 1,
    importance: e.importance,
    tags: [...e.tags],
    sensitivity: e.sensitivity,
    createdAt: e.createdAt.getTime(),
    updatedAt: e.updatedAt.getTime(),
    validFrom: e.validFrom?.getTime() ?? null,
    validTo: e.validTo?.getTime() ?? null,
  };
}

/** What EntryColumns holds of an entry besides its columns: the small vector (for the stage-1 scan) and, for a written entry, the entry itself (entryRecord). */
export interface HeldEntry {
  vectorSmall: Float32Array;
  record?: string;
}

const NO_VECTOR = new Float32Array(0);

/** Every entry's small vector, slot by slot with the columns, for the stage-1 scan. */
interface SmallVectors {
  maxEntries: number;
  /** Slot i's small vector scaled to unit length (zero stays zero), so a product ranks as a cosine; 8-bit. */
  kernel: MatrixKernel;
}

/** Every entry whole, slot by slot with the columns. */
interface WholeEntries {
  maxEntries: number;
  /** Entries written since the load (entryRecord), by slot. */
  records: (string | undefined)[];
  /** Entries as loaded, slot i being loaded row i (when no record replaced it). */
  loaded: LoadedEntries;
}

/** What the columns hold beyond the narrow ones, each up to its own store size (Stores.columns). */
export interface HoldOptions {
  /**
   * The small vectors as loaded (`smallDimensions` floats a row), held while the store has at most
   * `maxEntries`. From `helperMinRows` entries the scan runs on a helper thread (see
   * startNearestSmall); without it, never.
   */
  small?: { maxEntries: number; smallDimensions: number; vectors: Float32Array; helperMinRows?: number };
  /** The entries as loaded, held whole while the store has at most `maxEntries`. */
  entries?: { maxEntries: number; loaded: LoadedEntries };
  /** Exact search from memory (a second 8-bit level of the full vectors) while the store has at most `maxEntries`. */
  exact?: { maxEntries: number; helperMinRows?: number };
}

/** The fields of a row that EntryColumns keeps as they are; the others live in FilterColumns. */
type HeldRow = Pick<EntryColumnRow, 'id' | 'tags'>;

/** The tags of a row without any, shared (a row's tags are replaced, never changed): 32 bytes a row less at 1M rows. */
const NO_TAGS: readonly string[] = Object.freeze([]);

/** A string column's values as small integer codes, in order of first appearance. */
class Codes {
  private readonly codeOf = new Map<string, number>();

  /** `values`: the values by code, as a snapshot took them. */
  constructor(readonly values: string[] = []) {
    values.forEach((v, code) => this.codeOf.set(v, code));
  }

  code(value: string): number {
    let code = this.codeOf.get(value);
    if (code === undefined) {
      this.codeOf.set(value, (code = this.codeOf.size));
      this.values.push(value);
    }
    return code;
  }

  /** A mask over the codes: 1 for the codes of `values` (values never seen have none). */
  allowing(values: readonly string[]): Uint8Array {
    const mask = new Uint8Array(this.codeOf.size);
    for (const v of values) {
      const code = this.codeOf.get(v);
      if (code !== undefined) mask[code] = 1;
    }
    return mask;
  }
}

/**
 * The entries written since the held ones were loaded, as a snapshot keeps them: their slots, and
 * their JSON records as UTF-8 with offsets. Arrays rather than values, so that they can be read
 * later with the loaded entries: among the values, which load before the first answer, 1M records
 * of the bench's size took ~1.4 s to decode (v8.deserialize of 337 MB, measured alone).
 */
export const RECORD_ARRAYS = ['records.slots', 'records.offsets', 'records.bytes'] as const;

function recordArrays(records: readonly (string | undefined)[]): Record<(typeof RECORD_ARRAYS)[number], SnapshotArray> {
  const encoder = new TextEncoder();
  const slots: number[] = [];
  const encoded: Uint8Array[] = [];
  records.forEach((record, slot) => {
    if (record === undefined) return;
    slots.push(slot);
    encoded.push(encoder.encode(record));
  });
  const offsets = new Uint32Array(encoded.length + 1);
  encoded.forEach((bytes, i) => (offsets[i + 1] = offsets[i]! + bytes.length));
  const bytes = new Uint8Array(offsets[encoded.length]!);
  encoded.forEach((part, i) => bytes.set(part, offsets[i]!));
  return { 'records.slots': Uint32Array.from(slots), 'records.offsets': offsets, 'records.bytes': bytes };
}

function recordsOf(arrays: Partial<Record<string, SnapshotArray>>): (string | undefined)[] {
  const [slots, offsets, bytes] = RECORD_ARRAYS.map((name) => arrays[name]!);
  const decoder = new TextDecoder();
  const records: (string | undefined)[] = [];
  for (let i = 0; i < slots!.length; i++)
    records[slots![i]!] = decoder.decode((bytes as Uint8Array).subarray(offsets![i]!, offsets![i + 1]!));
  return records;
}

const FILTER_ARRAYS = [
  'coreCodes',
  'sourceCodes',
  'typeCodes',
  'sensitivityCodes',
  'confidenceRanks',
  'importance',
  'createdAt',
  'validFrom',
  'validTo',
] as const;

/** The columns a filter tests, by slot: see EntryColumns.filterColumns. */
class FilterColumns {
  cores = new Codes();
  entryTypes = new Codes();
  sensitivity = new Codes();
  /** Sources, not a filter: what ratings average over (scoring features); -1 is no source. */
  sources = new Codes();
  sourceCodes = new Int32Array(16);
  coreCodes = new Int32Array(16);
  typeCodes = new Int32Array(16);
  sensitivityCodes = new Int32Array(16);
  confidenceRanks = new Int8Array(16);
  importance = new Int8Array(16);
  createdAt = new Float64Array(16);
  /** When the entry takes effect: `valid_from`, or `created_at` when it has none. */
  validFrom = new Float64Array(16);
  /** +Infinity where the entry has no end. */
  validTo = new Float64Array(16);

  ensureCapacity(slots: number): void {
    this.coreCodes = grown(this.coreCodes, slots, (n) => new Int32Array(n));
    this.sourceCodes = grown(this.sourceCodes, slots, (n) => new Int32Array(n));
    this.typeCodes = grown(this.typeCodes, slots, (n) => new Int32Array(n));
    this.sensitivityCodes = grown(this.sensitivityCodes, slots, (n) => new Int32Array(n));
    this.confidenceRanks = grown(this.confidenceRanks, slots, (n) => new Int8Array(n));
    this.importance = grown(this.importance, slots, (n) => new Int8Array(n));
    this.createdAt = grown(this.createdAt, slots, (n) => new Float64Array(n));
    this.validFrom = grown(this.validFrom, slots, (n) => new Float64Array(n));
    this.validTo = grown(this.validTo, slots, (n) => new Float64Array(n));
  }

  /** The columns of slots 0…n−1 (copies), for a snapshot. */
  snapshot(n: number): { arrays: Record<string, SnapshotArray>; codes: Record<string, string[]> } {
    const arrays: Record<string, SnapshotArray> = {};
    for (const name of FILTER_ARRAYS) arrays[name] = this[name].slice(0, n);
    return {
      arrays,
      codes: {
        cores: this.cores.values,
        entryTypes: this.entryTypes.values,
        sensitivity: this.sensitivity.values,
        sources: this.sources.values,
      },
    };
  }

  /** Takes back what `snapshot` gave; the arrays become these columns' own. */
  restore(arrays: Record<string, SnapshotArray>, codes: Record<string, string[]>): void {
    for (const name of FILTER_ARRAYS) (this[name] as SnapshotArray) = arrays[name]!;
    this.cores = new Codes(codes.cores);
    this.entryTypes = new Codes(codes.entryTypes);
    this.sensitivity = new Codes(codes.sensitivity);
    this.sources = new Codes(codes.sources);
  }

  set(slot: number, row: EntryColumnRow): void {
    this.coreCodes[slot] = this.cores.code(row.coreId);
    this.sourceCodes[slot] = row.source === null ? -1 : this.sources.code(row.source);
    this.typeCodes[slot] = this.entryTypes.code(row.entryType);
    this.sensitivityCodes[slot] = this.sensitivity.code(row.sensitivity);
    this.confidenceRanks[slot] = row.confidenceRank;
    this.importance[slot] = row.importance;
    this.createdAt[slot] = row.createdAt;
    this.validFrom[slot] = row.validFrom ?? row.createdAt;
    this.validTo[slot] = row.validTo ?? Infinity;
  }
}

/**
 * The narrow columns of every entry, held in memory: what the filters test, what scoring weighs,
 * and the full vector quantised to 8 bits. A query's candidates (a few hundred entries spread
 * over the table) are filtered and scored here, and only the entries that make the bundle are read
 * from LanceDB: reading 260 random rows with their vectors costs ~16 ms at 100K entries, 12 rows
 * ~4 ms. Loaded from the table once, then kept in step by the writes of the same process (see
 * Residents); LanceDB stays the system of record.
 *
 * Why 8-bit full vectors and not the float small vectors (the same 512 bytes an entry at 512-d):
 * scoring weighs cosine similarity, and the small vectors' cosine moved enough scores to cost two
 * points of 2Wiki all-gold@8, where the quantised cosine is within ~0.001 of the exact one.
 */
export class EntryColumns {
  /**
   * Values the query path derives from the whole of the columns and keeps with them, snapshot
   * included (the stage-1 calibration: 64 sampled searches). The columns do not know what they
   * mean; whoever derives one decides when it is stale.
   */
  readonly derived = new Map<string, unknown>();
  /** Slot by entry id; after a snapshot load, made by the first write or once lookups add up (see `slotOfId`). */
  private slotMap: Map<string, number> | undefined = new Map();
  /**
   * Until then, a snapshot's live slots ordered by id, searched: a first query looks up a few
   * thousand ids, where a map of every id cost a fresh process ~0.3–0.5 s at 1M entries.
   */
  private idOrder: Uint32Array | undefined;
  /** Lookups answered by searching `idOrder`. */
  private searched = 0;
  private live = 0;
  /**
   * By slot, what of a row is not in the typed columns below; a removed entry leaves its slot
   * empty (a reload compacts).
   */
  private readonly rows: (HeldRow | undefined)[] = [];
  /**
   * Per slot, the row's importance and date (0 for a free slot): typed, as a snapshot holds them,
   * rather than two boxed numbers in each row's object (~50 MB at 1M rows).
   */
  private rowImportance = new Float64Array(16);
  private rowUpdatedAt = new Float64Array(16);
  /** Slot i's full vector in 8 bits, and while `hold.exact` allows the level exact search needs. */
  private readonly full: FullVectors;
  /**
   * The filtered columns (and confidence), slot by slot in typed arrays (strings as codes), so that
   * a filter is tested without touching row objects: the stage-1 scan tests every entry that scores
   * well enough to enter its top (a few thousand a query at 100K), at ~0.4 µs a row on objects.
   */
  private readonly filterColumns = new FilterColumns();

  /** Present while the store is small enough for its stage 1 to be a scan in memory (see `hold`). */
  private small: SmallVectors | undefined;
  /** Present while the store is small enough to hold its entries whole (see `hold`). */
  private whole: WholeEntries | undefined;
  private readonly exactMaxEntries: number;

  /**
   * With `hold.small`, every entry's small vector is held too, so stage 1 is a scan in memory
   * (`nearestSmall`); with `hold.entries`, every entry whole, so the bundle is read from memory
   * (`entries`). Each is held up to its own store size: a store that grows past it stops holding
   * that part, which goes back to LanceDB.
   */
  constructor(
    readonly dimensions: number,
    rows: EntryColumnRow[] = [],
    vectors: Float32Array = new Float32Array(),
    hold: HoldOptions = {},
  ) {
    const capacity = Math.max(16, rows.length);
    const { small, entries, exact } = hold;
    this.full = new FullVectors(dimensions, capacity, {
      residuals: exact !== undefined && rows.length <= exact.maxEntries,
      helperMinRows: exact?.helperMinRows,
    });
    this.exactMaxEntries = exact?.maxEntries ?? 0;
    if (small && rows.length <= small.maxEntries) {
      const kernel = new MatrixKernel(new Float32Array(0), 0, small.smallDimensions, {
        capacity,
        precision: 'i8',
        helperMinRows: small.helperMinRows,
      });
      this.small = { maxEntries: small.maxEntries, kernel };
    }
    if (entries && rows.length <= entries.maxEntries) {
      this.whole = { maxEntries: entries.maxEntries, records: [], loaded: entries.loaded };
    }
    const d = small?.smallDimensions ?? 0;
    // Loaded entries are read through `entries.entryAt`: what is held of a row here is its small vector (empty when none is held).
    const heldOf = (i: number): HeldEntry => ({ vectorSmall: small ? small.vectors.subarray(i * d, (i + 1) * d) : NO_VECTOR });
    this.upsert(rows, (i) => vectors.subarray(i * dimensions, (i + 1) * dimensions), small || entries ? heldOf : undefined);
  }

  /**
   * Everything held, slot for slot (removed entries' slots too), for a snapshot file: the vectors
   * as quantised, the columns as coded, the loaded entries as their Arrow IPC bytes and those
   * written since as records. `fromSnapshot` takes it back with no row parsed or quantised.
   */
  snapshot(): SnapshotContent {
    const n = this.rows.length;
    const prefixed = (prefix: string, arrays: Record<string, SnapshotArray>) =>
      Object.fromEntries(Object.entries(arrays).map(([k, v]) => [prefix + k, v]));
    const filter = this.filterColumns.snapshot(n);
    const { whole } = this;
    const tags: [number, string[]][] = [];
    this.rows.forEach((r, slot) => r && r.tags.length > 0 && tags.push([slot, r.tags]));
    return {
      arrays: {
        ...prefixed('full.', this.full.snapshot()),
        ...(this.small ? prefixed('small.', this.small.kernel.exportQuantisedRows()) : {}),
        ...filter.arrays,
        rowImportance: this.rowImportance.slice(0, n),
        updatedAt: this.rowUpdatedAt.slice(0, n),
        ...(whole ? { entries: whole.loaded.ipc, ...recordArrays(whole.records) } : {}),
        idOrder: this.idOrder ?? this.liveSlotsById(),
      },
      values: {
        ids: this.rows.map((r) => r?.id ?? null),
        tags,
        codes: filter.codes,
        derived: Object.fromEntries(this.derived),
      },
    };
  }

  /**
   * Columns as `snapshot` wrote them, holding what a build of the same entries under `hold` would
   * (each part by the number of live entries; `hold.entries.decode` turns the snapshot's Arrow IPC bytes
   * into the loaded entries). Undefined when the snapshot lacks a part that would be held: build
   * from the stores then.
   */
  static fromSnapshot(
    dimensions: number,
    { arrays, values, later }: SnapshotContent & { later?: LaterSections },
    hold: {
      small?: Omit<NonNullable<HoldOptions['small']>, 'vectors'>;
      entries?: { maxEntries: number; decode: (ipc: Uint8Array) => LoadedEntries };
      exact?: HoldOptions['exact'];
    },
  ): EntryColumns | undefined {
    const ids = values.ids as (string | null)[];
    const live = ids.reduce((n, id) => (id === null ? n : n + 1), 0);
    const wants = (part: { maxEntries: number } | undefined) => part !== undefined && live <= part.maxEntries;
    const ipc = arrays.entries;
    const has = (name: string) => arrays[name] !== undefined || (later?.names.includes(name) ?? false);
    const idOrder = arrays.idOrder;
    if (
      !(idOrder instanceof Uint32Array) ||
      idOrder.length !== live ||
      (wants(hold.entries) && !((ipc instanceof Uint8Array || has('entries')) && RECORD_ARRAYS.every(has))) ||
      (wants(hold.small) && !arrays['small.values']) ||
      (wants(hold.exact) && !has('full.residualValues'))
    ) {
      return undefined;
    }
    const entriesNow = wants(hold.entries) && ipc instanceof Uint8Array && RECORD_ARRAYS.every((name) => arrays[name] !== undefined);
    const columns = new EntryColumns(dimensions, [], new Float32Array(), {
      small: wants(hold.small) ? { ...hold.small!, vectors: new Float32Array() } : undefined,
      entries: entriesNow ? { maxEntries: hold.entries!.maxEntries, loaded: hold.entries!.decode(ipc) } : undefined,
      exact: hold.exact,
    });
    if (!wants(hold.exact)) columns.full.dropResiduals();
    const unprefixed = (prefix: string) =>
      Object.fromEntries(
        Object.entries(arrays)
          .filter(([k]) => k.startsWith(prefix))
          .map(([k, v]) => [k.slice(prefix.length), v]),
      );
    const residualsLater = wants(hold.exact) && !arrays['full.residualValues'];
    columns.full.restore(unprefixed('full.'), { residualsLater });
    if (columns.small) columns.small.kernel.setQuantisedRows(arrays['small.values'] as Int8Array, arrays['small.scales'] as Float32Array);
    if (columns.whole) columns.whole.records = recordsOf(arrays);
    // The residual level and the entries' columns are not needed to rank: they are read when
    // first needed (exact search, a write, a snapshot) or once the process has had a moment (see
    // `settled`), and until then reads of entries go to LanceDB. A one-shot process never reads them.
    const entriesLater = wants(hold.entries) && !entriesNow;
    if (later && (residualsLater || entriesLater)) {
      // Only these of the arrays read now are kept for later: a closure in this scope would keep
      // every array alive, the 8-bit vectors beside the kernels' copies of them (640 MB at 1M).
      const heldNow: Partial<Record<string, SnapshotArray>> = Object.fromEntries(
        ['entries', ...RECORD_ARRAYS].flatMap((name) => (arrays[name] ? [[name, arrays[name]]] : [])),
      );
      columns.laterParts = EntryColumns.laterPartsOf(columns, later, heldNow, {
        residualsLater,
        entries: entriesLater ? hold.entries : undefined,
      });
    } else later?.release();
    columns.filterColumns.restore(arrays, values.codes as Record<string, string[]>);
    columns.rowImportance = arrays.rowImportance as Float64Array<ArrayBuffer>;
    columns.rowUpdatedAt = arrays.updatedAt as Float64Array<ArrayBuffer>;
    const tagsOf = new Map(values.tags as [number, string[]][]);
    ids.forEach((id, slot) => {
      if (id === null) {
        columns.rows.push(undefined);
        return;
      }
      columns.live++;
      columns.rows.push({ id, tags: tagsOf.get(slot) ?? (NO_TAGS as string[]) });
    });
    [columns.slotMap, columns.idOrder] = [undefined, idOrder];
    for (const [key, value] of Object.entries((values.derived ?? {}) as Record<string, unknown>)) columns.derived.set(key, value);
    return columns;
  }

  /**
   * The parts of a columns snapshot read after the rest (EntryColumns.fromSnapshot): out of its
   * scope, so that they keep only what they name.
   */
  private static laterPartsOf(
    columns: EntryColumns,
    later: LaterSections,
    heldNow: Partial<Record<string, SnapshotArray>>,
    {
      residualsLater,
      entries: entriesHold,
    }: { residualsLater: boolean; entries?: { maxEntries: number; decode: (ipc: Uint8Array) => LoadedEntries } },
  ): NonNullable<EntryColumns['laterParts']> {
    const entriesLater = entriesHold !== undefined;
    const [valuesName, scalesName, errorsName] = ['full.residualValues', 'full.residualScales', 'full.residualErrors'];
    const failed = (e: unknown) => {
      columns.full.dropResiduals();
      columns.lazyProblem = (e as Error).message;
    };
    // The residual level: its scales and errors (12 MB at 1M) read in, its values (512 MB) left in
    // the file, where exact search reads the few hundred rows it refines; whole for a write.
    let inFile: Promise<void> | undefined;
    let whole: Promise<void> | undefined;
    const residuals = (values: () => Promise<SnapshotArray | PositionedSection | undefined>) =>
      Promise.all([values(), later.read(scalesName), later.read(errorsName)]).then(([residualValues, residualScales, residualErrors]) => {
        if (!residualValues) throw new Error('was released');
        columns.full.installResiduals({
          residualValues: residualValues as Int8Array | PositionedSection,
          residualScales,
          residualErrors,
        });
      }, failed);
    const residualsInFile = () =>
      residualsLater ? (whole ?? (inFile ??= residuals(() => Promise.resolve(later.positioned(valuesName))))) : Promise.resolve();
    const residualsWhole = () => (residualsLater ? (whole ??= residuals(() => later.read(valuesName))) : Promise.resolve());
    let entriesRead: Promise<void> | undefined;
    const entries = () => {
      if (!entriesLater) return Promise.resolve();
      const read = (name: string) => (heldNow[name] ? Promise.resolve(heldNow[name]) : later.read(name));
      return (entriesRead ??= Promise.all([read('entries'), ...RECORD_ARRAYS.map(read)]).then(
        ([bytes, ...recordParts]) => {
          const records = recordsOf(Object.fromEntries(RECORD_ARRAYS.map((name, i) => [name, recordParts[i]!])));
          columns.whole = { maxEntries: entriesHold!.maxEntries, records, loaded: entriesHold!.decode(bytes as Uint8Array) };
        },
        (e: unknown) => void (columns.lazyProblem = (e as Error).message), // not held: read from LanceDB
      ));
    };
    // The values left in the file are checked once, a chunk at a time, without holding them.
    const checked = () =>
      residualsInFile().then(async () => {
        const values = whole ? undefined : later.positioned(valuesName);
        await values?.verify().catch((e: unknown) => !whole && failed(e));
      });
    let read!: (problem: string | undefined) => void;
    const done = new Promise<string | undefined>((resolve) => (read = resolve));
    const report = <T>(parts: Promise<T>) => parts.then(() => read(columns.lazyProblem));
    let started: Promise<void> | undefined;
    let quiet: Promise<void> | undefined;
    return {
      // Everything whole: what a write or a snapshot needs.
      start: () => (started ??= report(Promise.all([entries(), residualsWhole()]))),
      // What the owner reads once the process has had a moment (Residents): the residual values stay in the file.
      quiet: () => (quiet ??= report(Promise.all([entries(), checked()]))),
      exact: residualsInFile,
      done,
      release: () => later.release(),
    };
  }

  /** The parts a snapshot hands over later (see fromSnapshot): read them now, or give them up. */
  private laterParts:
    | {
        start: () => Promise<void>;
        quiet: () => Promise<void>;
        exact: () => Promise<void>;
        done: Promise<string | undefined>;
        release: () => void;
      }
    | undefined;
  /** Why a part a snapshot was to hand over later did not come (the file was damaged meanwhile, say). */
  lazyProblem: string | undefined;

  /**
   * Resolves once every part a snapshot hands over later is in (or known not to come). Exact
   * search awaits it, and nothing may write to the columns before it.
   */
  settled(): Promise<void> {
    return this.laterParts?.start() ?? Promise.resolve();
  }

  /**
   * Resolves once exact search can run from memory, if it can: the residual level's scales in,
   * its values read where they lie in the snapshot file until a write brings them in (`settled`).
   */
  exactReady(): Promise<void> {
    return this.laterParts?.exact() ?? Promise.resolve();
  }

  /**
   * What the owner reads once the process has had a moment: the entries whole, and the residual
   * level's values checked in their file (not held: ~512 MB at 1M entries).
   */
  whenQuiet(): Promise<void> {
    return this.laterParts?.quiet() ?? Promise.resolve();
  }

  /** Resolves, once the later parts were read (without asking for them), to why one did not come. */
  laterPartsRead(): Promise<string | undefined> {
    return this.laterParts?.done ?? Promise.resolve(undefined);
  }

  /** Whether entries are held whole: `entries` answers only then. */
  get holdsEntries(): boolean {
    return this.whole !== undefined;
  }

  /** Whether small vectors are held: `nearestSmall` answers only then. */
  get holdsSmallVectors(): boolean {
    return this.small !== undefined;
  }

  get size(): number {
    return this.live;
  }

  private get slotOf(): Map<string, number> {
    if (!this.slotMap) {
      const slotMap = new Map<string, number>();
      this.rows.forEach((row, slot) => row && slotMap.set(row.id, slot));
      [this.slotMap, this.idOrder] = [slotMap, undefined];
    }
    return this.slotMap;
  }

  /**
   * A one-shot process answers its query with a few thousand searches; a long-lived one soon makes
   * the map (at an eighth of the store's size in lookups), since a search costs ~20 comparisons.
   */
  private slotOfId(id: string): number | undefined {
    if (this.slotMap || ++this.searched > Math.max(4096, this.live >> 3)) return this.slotOf.get(id);
    return slotByKey(this.idOrder!, (slot) => this.rows[slot]!.id, id);
  }

  /** Every live slot, ordered by its id (UTF-16 code units, as `<` compares). */
  private liveSlotsById(): Uint32Array {
    return slotsSortedByKey(this.slotOf.values(), (slot) => this.rows[slot]!.id);
  }

  /**
   * Adds or replaces entries; `vectorOf(i)` is the full vector of `rows[i]`, `heldOf(i)` what is
   * held of it besides (without it, small vectors and entries stop being held).
   */
  upsert(rows: readonly EntryColumnRow[], vectorOf: (i: number) => Float32Array, heldOf?: (i: number) => HeldEntry): void {
    // Counted before the write, generously (replacements count as new): a store near a limit stops holding a little early.
    this.small?.kernel.assertIdle();
    const fits = (held: { maxEntries: number } | undefined) => heldOf !== undefined && this.live + rows.length <= (held?.maxEntries ?? 0);
    if (!fits(this.small)) {
      this.small?.kernel.close();
      this.small = undefined;
    }
    if (!fits(this.whole)) this.whole = undefined;
    if (this.live + rows.length > this.exactMaxEntries) this.full.dropResiduals();
    const { small, whole } = this;
    rows.forEach((row, i) => {
      let slot = this.slotOf.get(row.id);
      if (slot === undefined) {
        slot = this.rows.length;
        this.slotOf.set(row.id, slot);
        this.live++;
        this.rows.push(undefined);
        this.ensureCapacity(this.rows.length);
      }
      this.rows[slot] = { id: row.id, tags: row.tags.length > 0 ? row.tags : (NO_TAGS as string[]) };
      this.rowImportance = grown(this.rowImportance, slot + 1, (n) => new Float64Array(n));
      this.rowUpdatedAt = grown(this.rowUpdatedAt, slot + 1, (n) => new Float64Array(n));
      this.rowImportance[slot] = row.importance;
      this.rowUpdatedAt[slot] = row.updatedAt;
      this.filterColumns.set(slot, row);
      this.full.set(slot, vectorOf(i));
      if (!small && !whole) return;
      const { vectorSmall, record } = heldOf!(i);
      if (small) {
        const length = norm(vectorSmall);
        small.kernel.setRow(slot, vectorSmall, length > 0 ? 1 / length : 0);
      }
      if (whole && record !== undefined) whole.records[slot] = record;
    });
  }

  remove(ids: Iterable<string>): void {
    this.small?.kernel.assertIdle();
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      this.slotOf.delete(id);
      this.live--;
      this.rows[slot] = undefined;
      this.rowImportance[slot] = 0;
      this.rowUpdatedAt[slot] = 0;
      if (this.whole) this.whole.records[slot] = undefined;
    }
  }

  private ensureCapacity(slots: number): void {
    this.filterColumns.ensureCapacity(slots);
  }

  has(id: string): boolean {
    return this.slotOfId(id) !== undefined;
  }

  /**
   * The filter as a test on ids, with the same meaning as its SQL (entryFilterSql): a test compares
   * the two on the same rows. Unknown ids fail it.
   */
  matcher(filter: EntryFilter): (id: string) => boolean {
    const test = this.slotTest(filter);
    return (id) => {
      const slot = this.slotOfId(id);
      return slot !== undefined && test(slot);
    };
  }

  /**
   * The share of entries the filter lets through, estimated on `sample` slots (exact below that
   * size). Tells a search whether filtering after it is cheaper than pushing the filter down. The
   * slots are picked with a prime stride, not evenly spaced, since ingest order is often periodic
   * (round-robin over cores), and an even spacing could land on the same core every time.
   */
  passRate(filter: EntryFilter, sample = 1024): number {
    const test = this.slotTest(filter);
    const slots = this.sampledSlots(sample);
    return slots.length === 0 ? 0 : slots.filter(test).length / slots.length;
  }

  /** Ids of up to `count` entries spread over the store, the same ones every time (as passRate picks them). */
  sampleIds(count: number): string[] {
    return this.sampledSlots(count).map((slot) => this.rows[slot]!.id);
  }

  /** Occupied slots among up to `count` spread over the store. */
  private sampledSlots(count: number): number[] {
    const n = this.rows.length;
    const out: number[] = [];
    for (let k = 0; k < Math.min(n, count); k++) {
      const slot = n <= count ? k : (k * 2_654_435_761) % n;
      if (this.rows[slot]) out.push(slot);
    }
    return out;
  }

  /** The filter as a test on an occupied slot, on the typed columns; only ids and tags read the row. */
  private slotTest(filter: EntryFilter): (slot: number) => boolean {
    const columns = this.filterColumns;
    const rows = this.rows;
    const rowTests: ((r: HeldRow) => boolean)[] = [];
    if (filter.ids) {
      const ids = new Set(filter.ids);
      rowTests.push((r) => ids.has(r.id));
    }
    if (filter.notIds && filter.notIds.length > 0) {
      const not = new Set(filter.notIds);
      rowTests.push((r) => !not.has(r.id));
    }
    if (filter.tags) {
      const tags = new Set(filter.tags);
      rowTests.push((r) => r.tags.some((t) => tags.has(t)));
    }
    const cores = filter.cores && columns.cores.allowing(filter.cores);
    const types = filter.entryTypes && columns.entryTypes.allowing(filter.entryTypes);
    const notTypes = filter.notEntryTypes && columns.entryTypes.allowing(filter.notEntryTypes);
    const sensitivity = filter.sensitivity && columns.sensitivity.allowing(filter.sensitivity);
    const minConfidence = filter.minConfidence ? CONFIDENCE_LEVELS.indexOf(filter.minConfidence) + 1 : 0;
    const validAt = filter.validAt?.getTime();
    const minImportance = filter.minImportance ?? -Infinity;
    const createdFrom = filter.createdAfter?.getTime() ?? -Infinity;
    const createdBefore = filter.createdBefore?.getTime() ?? Infinity;
    const { coreCodes, typeCodes, sensitivityCodes, confidenceRanks, importance, createdAt, validFrom, validTo } = columns;
    return (slot) => {
      if (cores && cores[coreCodes[slot]!] === 0) return false;
      if (types && types[typeCodes[slot]!] === 0) return false;
      if (notTypes && notTypes[typeCodes[slot]!] === 1) return false;
      if (sensitivity && sensitivity[sensitivityCodes[slot]!] === 0) return false;
      if (confidenceRanks[slot]! < minConfidence) return false;
      if (importance[slot]! < minImportance) return false;
      if (!(createdAt[slot]! >= createdFrom && createdAt[slot]! < createdBefore)) return false;
      if (validAt !== undefined && !(validFrom[slot]! <= validAt && validTo[slot]! > validAt)) return false;
      if (rowTests.length > 0) {
        const row = rows[slot]!;
        for (const test of rowTests) if (!test(row)) return false;
      }
      return true;
    };
  }

  /**
   * The `limit` entries passing `filter` nearest `query` by cosine on the small vectors: a scan of
   * every held vector in 8 bits (WebAssembly SIMD, ~0.8 ms for 100K entries of 128 dimensions,
   * cosines within ~0.01), the filter tested only on entries good enough to enter the top `limit`
   * so far. Nearest first; undefined when small vectors are not held, or the query has no direction.
   */
  nearestSmall(query: Float32Array, filter: EntryFilter, limit: number): { id: string; similarity: number }[] | undefined {
    return this.startNearestSmall(query)?.(filter, limit);
  }

  /**
   * `nearestSmall` in two halves: the scan of every small vector starts now, on a helper thread
   * for a store of at least `helperMinRows` entries, and the function returned ranks its result.
   * The caller works meanwhile (the keyword search), and must call the function before anything
   * else touches the columns: in the same synchronous stretch of code, with no `await` between.
   */
  startNearestSmall(query: Float32Array): ((filter: EntryFilter, limit: number) => { id: string; similarity: number }[]) | undefined {
    const small = this.small;
    if (!small) return undefined;
    const queryNorm = norm(query);
    if (!(queryNorm > 0)) return undefined;
    const products = small.kernel.startProducts(query);
    return (filter, limit) => {
      // Ranked on sums · scales, the product without the query's own scale (`step`), in one pass.
      const { sums, scales, step } = products();
      const test = this.slotTest(filter);
      const rows = this.rows;
      const top = new TopK(limit, (a, b) => rows[a]!.id > rows[b]!.id);
      let toBeat = -Infinity;
      for (let slot = 0, n = sums.length; slot < n; slot++) {
        const score = sums[slot]! * scales[slot]!;
        if (!(score >= toBeat)) continue;
        if (rows[slot] !== undefined && test(slot) && top.offer(slot, score) && top.full) toBeat = top.worstScore;
      }
      const scale = step / queryNorm;
      return top.sorted().map((slot) => ({ id: rows[slot]!.id, similarity: sums[slot]! * scales[slot]! * scale }));
    };
  }

  /** Whether the stage-1 scan now runs on a helper thread. */
  get scansOnThread(): boolean {
    return this.small?.kernel.helperRunning ?? false;
  }

  /** Stops the scan's helper thread, if one runs. */
  close(): void {
    this.laterParts?.release();
    this.small?.kernel.close();
    this.full.close();
  }

  /**
   * The held entries of `ids` that exist, in the order asked; undefined when entries are not held,
   * or when a loaded row is not the entry its slot says (only a table holding an id twice could do
   * that), so that the caller reads LanceDB instead.
   */
  entries(ids: readonly string[]): MemoryEntry[] | undefined {
    const whole = this.whole;
    if (!whole) return undefined;
    const out: MemoryEntry[] = [];
    for (const id of ids) {
      const slot = this.slotOfId(id);
      if (slot === undefined) continue;
      const record = whole.records[slot];
      const entry = record !== undefined ? entryFromRecord(record) : slot < whole.loaded.count ? whole.loaded.entryAt(slot) : undefined;
      if (entry && entry.id !== id) return undefined;
      if (entry) out.push(entry);
    }
    return out;
  }

  /**
   * The filter as a test on ids that answers with the entry's scoring features when it passes
   * (undefined otherwise, and for unknown ids): one lookup of the id for both. `{}` lets every
   * known entry through.
   */
  featuresIfPassing(filter: EntryFilter): (id: string) => EntryFeatures | undefined {
    const test = this.slotTest(filter);
    const { filterColumns } = this;
    return (id) => {
      const slot = this.slotOfId(id);
      if (slot === undefined || !test(slot)) return undefined;
      const confidence = CONFIDENCE_LEVELS[filterColumns.confidenceRanks[slot]! - 1] ?? 'medium';
      const source = filterColumns.sourceCodes[slot]!;
      return {
        coreId: filterColumns.cores.values[filterColumns.coreCodes[slot]!]!,
        source: source < 0 ? null : filterColumns.sources.values[source]!,
        confidence,
        importance: this.rowImportance[slot]!,
        updatedAt: new Date(this.rowUpdatedAt[slot]!),
      };
    };
  }

  /** Cosine similarity of each entry's (quantised) vector to `query`, NaN for an unknown id; the query's norm is taken once. */
  similarities(ids: readonly string[], query: Float32Array): Float64Array {
    return this.full.cosines(
      ids.map((id) => this.slotOfId(id) ?? -1),
      query,
      norm(query, this.dimensions),
    );
  }

  /**
   * Ids that hold the `limit` entries passing `filter` nearest `query` by exact cosine, best first,
   * with a cosine and its error bound (~1e-4), and the floor every entry left out is below: see
   * FullVectors.exactCandidates. The caller ranks them on their float vectors. Undefined when the
   * store is past `hold.exact`: search LanceDB then.
   */
  exactCandidates(
    query: Float32Array,
    filter: EntryFilter,
    limit: number,
  ): { candidates: { id: string; cosine: number; bound: number }[]; floor: number } | undefined {
    const test = this.slotTest(filter);
    const rows = this.rows;
    // A filter naming a few ids (a small part of the store) is searched on those slots alone.
    const among = filter.ids && filter.ids.length * 8 < this.size ? filter.ids.flatMap((id) => this.slotOfId(id) ?? []) : undefined;
    const found = this.full.exactCandidates(query, limit, (slot) => rows[slot] !== undefined && test(slot), among && [...new Set(among)]);
    return (
      found && {
        candidates: found.candidates.map(({ slot, cosine, bound }) => ({ id: rows[slot]!.id, cosine, bound })),
        floor: found.floor,
      }
    );
  }

  /** Where the residual level exact search refines with is: in memory, left in its snapshot file, or not (yet) held. */
  get residualsHeld(): 'memory' | 'file' | undefined {
    return this.full.residualsHeld;
  }

  /** Whether exact search runs from memory (`exactCandidates` answers). */
  get holdsExactVectors(): boolean {
    return this.full.exact;
  }

  /** The entry's vector as scaled back from 8 bits (a copy). */
  vector(id: string): Float32Array | undefined {
    const slot = this.slotOfId(id);
    return slot === undefined ? undefined : this.full.vector(slot);
  }
}
