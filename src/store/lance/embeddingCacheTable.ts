import { createHash } from 'node:crypto';
import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { sqlIn } from './filter.js';
import { toFloat32 } from './entriesTable.js';
import { plainRows } from './plainRows.js';
import { storeFailure, translateNativeErrors } from '../storeErrors.js';

/**
 * Vectors by (model id, dimensions, text hash), kept across runs in the database folder, so text
 * that was embedded once — a deleted and re-added entry, a second file with the same entry — is
 * never sent to the model again.
 */
export class EmbeddingCacheTable {
  private constructor(
    private readonly table: lancedb.Table,
    private readonly model: string,
    private readonly dimensions: number,
    /** The LanceDB folder, which a failure names (translateNativeErrors). */
    readonly location: string,
  ) {}

  static async open(dir: string, model: string, dimensions: number): Promise<EmbeddingCacheTable> {
    const schema = new arrow.Schema([
      new arrow.Field('key', new arrow.Utf8(), false),
      new arrow.Field('vector', new arrow.FixedSizeList(dimensions, new arrow.Field('item', new arrow.Float32(), true)), false),
    ]);
    try {
      const db = await lancedb.connect(dir);
      const table = await db.createEmptyTable('embedding_cache', schema, { existOk: true });
      return new EmbeddingCacheTable(table, model, dimensions, dir);
    } catch (e) {
      throw storeFailure('the embedding cache', dir, e);
    }
  }

  key(text: string): string {
    return createHash('sha256').update(`${this.model}\u0000${this.dimensions}\u0000${text}`).digest('hex');
  }

  /** Cached vectors for the texts that have one, in one read. */
  async get(texts: string[]): Promise<Map<string, Float32Array>> {
    if (texts.length === 0) return new Map();
    await this.writing;
    const keyToText = new Map(texts.map((t) => [this.key(t), t]));
    const rows = await plainRows<{ key: string; vector: Iterable<number> }>(this.table.query().where(sqlIn('key', [...keyToText.keys()])));
    return new Map(rows.map((r) => [keyToText.get(r.key)!, toFloat32(r.vector)]));
  }

  /** The puts not yet written: `get` and `flush` wait for them. */
  private writing: Promise<void> = Promise.resolve();

  /**
   * Caches vectors of texts `get` just found absent, in the background: a write that embedded
   * them may go on (its commit runs while this one does) or wait for the returned promise (an
   * ingest, to resume from the slices saved), and the next `get` waits for it. Appended,
   * not merged by key: a merge joins the rows with every key the table holds and grows with it.
   * Both were 74 ms of a lone `remember` on the example memory, its largest part after the model
   * and the commit. Writes of a folder run one at a time, so a text is not put twice (if it were,
   * `get` takes either copy). A put that fails loses nothing but the cache row.
   */
  put(items: { text: string; vector: Float32Array }[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    const rows = [...new Map(items.map((i) => [this.key(i.text), { key: this.key(i.text), vector: i.vector }])).values()];
    this.writing = this.writing.then(async () => {
      await this.table.add(rows).catch(() => undefined);
    });
    return this.writing;
  }

  /** Waits for the puts under way. */
  flush(): Promise<void> {
    return this.writing;
  }

  close(): void {
    this.table.close();
  }
}

translateNativeErrors(EmbeddingCacheTable, 'the embedding cache', ['get']);
