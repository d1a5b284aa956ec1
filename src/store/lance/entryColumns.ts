import { CONFIDENCE_LEVELS, type Confidence } from '../../model/types.js';
import type { EntryFilter } from './filter.js';

/** What scoring needs of an entry, known before its row is read. */
export interface EntryFeatures {
  confidence: Confidence;
  importance: number;
  updatedAt: Date;
}

/** One row of the narrow read the columns are built from (see EntriesTable.columns). */
export interface EntryColumnRow {
  id: string;
  coreId: string;
  entryType: string;
  confidenceRank: number;
  importance: number;
  tags: string[];
  sensitivity: string;
  updatedAt: number;
  validFrom: number | null;
  validTo: number | null;
}

/**
 * The narrow columns of every entry, held in memory: what the filters test, what scoring weighs,
 * and the full vector quantised to 8 bits. A query's candidates (a few hundred entries spread
 * over the table) are filtered and scored here, and only the entries that make the bundle are read
 * from LanceDB: reading 260 random rows with their vectors costs ~16 ms at 100K entries, 12 rows
 * ~4 ms. Built from the table once per store generation, never written to directly: the system
 * of record stays LanceDB.
 *
 * Why 8-bit full vectors and not the float small vectors (the same 512 bytes an entry at 512-d):
 * scoring weighs cosine similarity, and the small vectors' cosine moved enough scores to cost two
 * points of 2Wiki all-gold@8, where the quantised cosine is within ~0.001 of the exact one.
 */
export class EntryColumns {
  private readonly slotOf = new Map<string, number>();

  /** Row i's vector, each component scaled to −127…127 by the row's `scales[i]`. */
  private readonly vectors: Int8Array;
  private readonly scales: Float32Array;
  /** Norm of each quantised vector (as scaled back), for its cosine. */
  private readonly norms: Float32Array;

  constructor(
    private readonly rows: EntryColumnRow[],
    /** Row i's full vector at [i·dimensions, (i+1)·dimensions). */
    vectors: Float32Array,
    readonly dimensions: number,
  ) {
    rows.forEach((r, i) => this.slotOf.set(r.id, i));
    this.vectors = new Int8Array(rows.length * dimensions);
    this.scales = new Float32Array(rows.length);
    this.norms = new Float32Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const at = i * dimensions;
      let max = 0;
      for (let d = 0; d < dimensions; d++) max = Math.max(max, Math.abs(vectors[at + d]!));
      const scale = max > 0 ? max / 127 : 1;
      let norm = 0;
      for (let d = 0; d < dimensions; d++) {
        const q = Math.round(vectors[at + d]! / scale);
        this.vectors[at + d] = q;
        norm += q * q;
      }
      this.scales[i] = scale;
      this.norms[i] = Math.sqrt(norm) * scale;
    }
  }

  get size(): number {
    return this.rows.length;
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  /**
   * The filter as a test on ids, with the same meaning as its SQL (entryFilterSql): a test compares
   * the two on the same rows. Unknown ids fail it.
   */
  matcher(filter: EntryFilter): (id: string) => boolean {
    const tests: ((r: EntryColumnRow) => boolean)[] = [];
    const inSet = (values: readonly string[] | undefined, pick: (r: EntryColumnRow) => string) => {
      if (!values) return;
      const set = new Set(values);
      tests.push((r) => set.has(pick(r)));
    };
    inSet(filter.ids, (r) => r.id);
    if (filter.notIds && filter.notIds.length > 0) {
      const not = new Set(filter.notIds);
      tests.push((r) => !not.has(r.id));
    }
    inSet(filter.cores, (r) => r.coreId);
    inSet(filter.entryTypes, (r) => r.entryType);
    inSet(filter.sensitivity, (r) => r.sensitivity);
    if (filter.minConfidence) {
      const min = CONFIDENCE_LEVELS.indexOf(filter.minConfidence) + 1;
      tests.push((r) => r.confidenceRank >= min);
    }
    if (filter.tags) {
      const tags = new Set(filter.tags);
      tests.push((r) => r.tags.some((t) => tags.has(t)));
    }
    if (filter.validAt) {
      const t = filter.validAt.getTime();
      tests.push((r) => (r.validFrom === null || r.validFrom <= t) && (r.validTo === null || r.validTo > t));
    }
    return (id) => {
      const slot = this.slotOf.get(id);
      if (slot === undefined) return false;
      const row = this.rows[slot]!;
      return tests.every((test) => test(row));
    };
  }

  features(id: string): EntryFeatures | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    const r = this.rows[slot]!;
    return { confidence: CONFIDENCE_LEVELS[r.confidenceRank - 1] ?? 'medium', importance: r.importance, updatedAt: new Date(r.updatedAt) };
  }

  /** Cosine similarity of the entry's (quantised) vector to `query`; undefined for an unknown id. */
  similarity(id: string, query: Float32Array): number | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    const at = slot * this.dimensions;
    let dot = 0;
    let qq = 0;
    for (let d = 0; d < this.dimensions; d++) {
      dot += query[d]! * this.vectors[at + d]!;
      qq += query[d]! * query[d]!;
    }
    const denominator = Math.sqrt(qq) * this.norms[slot]!;
    return denominator > 0 ? (dot * this.scales[slot]!) / denominator : 0;
  }

  /** The entry's vector as scaled back from 8 bits (a copy). */
  vector(id: string): Float32Array | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    const out = new Float32Array(this.dimensions);
    const scale = this.scales[slot]!;
    for (let d = 0; d < this.dimensions; d++) out[d] = this.vectors[slot * this.dimensions + d]! * scale;
    return out;
  }
}
