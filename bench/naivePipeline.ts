/**
 * The naive pipeline as the seed design sketches it, kept here only to compare against:
 * separate small-dim and full-dim searches, filters pasted into strings, one graph query per
 * seed, then a fetch by id list. (Pasting values into queries is what memcore itself never does.)
 */
import * as lancedb from '@lancedb/lancedb';
import { join } from 'node:path';
import type { NativeConnection, NativeDatabase, NativeQueryResult } from '../src/store/graph/cypherGraphDriver.js';
import { graphBinding, graphDriverOf, graphFileName } from '../src/store/graph/drivers.js';
import { readMeta } from '../src/store/meta.js';

export class NaivePipeline {
  private constructor(
    private readonly table: lancedb.Table,
    private readonly db: NativeDatabase,
    private readonly conn: NativeConnection,
  ) {}

  /** Opens the folder's own files, the graph with the database it was made with (a process loads only one). */
  static async open(dir: string): Promise<NaivePipeline> {
    const table = await (await lancedb.connect(join(dir, 'lance'))).openTable('entries');
    const driver = graphDriverOf(await readMeta(dir));
    const binding = await graphBinding(driver);
    const db = new binding.Database(join(dir, graphFileName(driver)));
    return new NaivePipeline(table, db, new binding.Connection(db));
  }

  async query(vector: Float32Array, small: Float32Array, cores: string[]): Promise<string[]> {
    const filter = `core_id IN (${cores.map((c) => `'${c}'`).join(', ')})`;
    const smallHits = await this.table
      .vectorSearch(Array.from(small))
      .column('vector_small')
      .distanceType('cosine')
      .where(filter)
      .select(['id', '_distance'])
      .limit(100)
      .toArray();
    const fullHits = await this.table
      .vectorSearch(Array.from(vector))
      .column('vector')
      .distanceType('cosine')
      .where(filter)
      .select(['id', '_distance'])
      .limit(100)
      .toArray();
    const seeds = [...new Set([...fullHits, ...smallHits].map((r) => r.id as string))].slice(0, 6);
    const reached = new Set<string>(seeds);
    for (const id of seeds) {
      const r = (await this.conn.query(
        `MATCH (s:MemoryEntry {id: '${id}'})-[:RELATED|DEPENDS_ON*1..2]-(t:MemoryEntry) RETURN DISTINCT t.id AS id`,
      )) as NativeQueryResult;
      for (const row of r.getAllSync()) reached.add(String(row.id));
      r.close();
    }
    const rows = await this.table
      .query()
      .where(`id IN (${[...reached].map((id) => `'${id}'`).join(', ')})`)
      .select(['id', 'title', 'content'])
      .toArray();
    return rows.map((r) => r.id as string);
  }

  /** The floor for the vector stage: one plain LanceDB vector search. */
  async plainVector(vector: Float32Array, k: number): Promise<string[]> {
    return (
      await this.table
        .vectorSearch(Array.from(vector))
        .column('vector')
        .distanceType('cosine')
        .select(['id', '_distance'])
        .limit(k)
        .toArray()
    ).map((r) => r.id as string);
  }

  async close(): Promise<void> {
    this.table.close();
    await this.conn.close();
    await this.db.close();
  }
}
