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
    const keyToText = new Map(texts.map((t) => [this.key(t), t]));
    const rows = await plainRows<{ key: string; vector: Iterable<number> }>(this.table.query().where(sqlIn('key', [...keyToText.keys()])));
    return new Map(rows.map((r) => [keyToText.get(r.key)!, toFloat32(r.vector)]));
  }

  async put(items: { text: string; vector: Float32Array }[]): Promise<void> {
    if (items.length === 0) return;
    const rows = items.map((i) => ({ key: this.key(i.text), vector: i.vector }));
    await this.table.mergeInsert('key').whenNotMatchedInsertAll().execute(rows);
  }

  close(): void {
    this.table.close();
  }
}

translateNativeErrors(EmbeddingCacheTable, 'the embedding cache', ['get', 'put']);
