import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import * as lancedb from '@lancedb/lancedb';
import { openMemory, MemoryFileError, type MemoryEngine } from '../src/index.js';
import { project, type Projection } from '../src/embed/matryoshka.js';
import { EntriesTable } from '../src/store/lance/entriesTable.js';
import { serializeStored } from '../src/store/stores.js';
import { Journal } from '../src/store/journal/journal.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { graphBinding, graphFileName } from '../src/store/graph/drivers.js';
import type { NativeQueryResult } from '../src/store/graph/cypherGraphDriver.js';

/** Reads what is really on disk, with the stores' own clients, behind the engine's back. */
async function onDisk(
  dir: string,
): Promise<{ lanceIds: string[]; lanceVersion: number; graphIds: string[]; edges: number; related: string[] }> {
  const db = await lancedb.connect(join(dir, 'lance'));
  const table = await db.openTable('entries');
  const lanceIds = ((await table.query().select(['id']).toArray()) as { id: string }[]).map((r) => r.id).sort();
  const lanceVersion = await table.version();
  table.close();
  const binding = await graphBinding(DEFAULTS.store.graph);
  const g = new binding.Database(join(dir, graphFileName(DEFAULTS.store.graph)));
  const conn = new binding.Connection(g);
  const q = async (cypher: string) => {
    const r = (await conn.query(cypher)) as NativeQueryResult;
    const rows = r.getAllSync();
    r.close();
    return rows;
  };
  const graphIds = (await q('MATCH (e:MemoryEntry) RETURN e.id AS id')).map((r) => String(r.id)).sort();
  const edges = Number((await q('MATCH ()-[r]->() RETURN count(r) AS n'))[0]!.n);
  const related = (await q('MATCH (a)-[r:RELATED]->(b) RETURN a.id AS a, b.id AS b, r.weight AS w, r.kind AS k'))
    .map((r) => `${String(r.a)}→${String(r.b)} ${String(r.w)} ${String(r.k)}`)
    .sort();
  await conn.close();
  await g.close();
  return { lanceIds, lanceVersion, graphIds, edges, related };
}

async function withEngine<T>(dir: string, fn: (m: MemoryEngine) => Promise<T>, embedder = wordHashEmbedder()): Promise<T> {
  const m = await openMemory({ path: dir, embedder });
  try {
    return await fn(m);
  } finally {
    await m.close();
  }
}

describe('ingest → buildTaskContext on the example core (offline local model)', () => {
  it('answers a realistic task with seeds, graph reasons, code and golden paths', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir });
    try {
      const report = await m.ingest(EXAMPLE_FILE);
      expect(report.entries).toEqual({ added: 44, updated: 0, unchanged: 0 });
      expect(report.embedded).toBe(44);

      const bundle = await m.buildTaskContext('Add a refresh-token endpoint that rotates tokens for the mobile app');
      const ids = bundle.entries.map((e) => e.entry.id);
      expect(ids[0]).toBe('auth-refresh-rotation');
      expect(ids).toContain('auth-refresh-reuse-race');
      expect(ids).toContain('auth-revocation-store');
      // superseded by auth-refresh-rotation: left out, and said so
      expect(ids).not.toContain('auth-refresh-long-lived');
      expect(bundle.notes.join(' ')).toMatch(/auth-refresh-long-lived \(by auth-refresh-rotation\)/);
      // secrets stay out unless asked for
      expect(ids).not.toContain('cp-secret-rotation-runbook');
      // every entry says why it is there
      for (const e of bundle.entries) expect(e.why.length).toBeGreaterThan(0);
      expect(bundle.entries[0]!.why[0]).toMatchObject({ kind: 'vector', rank: 1 });
      // code and golden paths of the chosen entries
      expect(bundle.codeRefs[0]!.code.filePath).toBe('src/auth/tokenService.ts');
      expect(bundle.codeRefs[0]!.relevance).toBe(1);
      const refresh = bundle.goldenPaths.find((p) => p.id === 'gp-refresh-flow')!;
      expect(refresh.steps.map((s) => s.order)).toEqual([1, 2, 3, 4]);
      expect(refresh.steps[0]!.code.symbol).toBe('refreshHandler');
      expect(Object.keys(bundle.timings)).toEqual(['embed', 'candidates', 'expand', 'supersede', 'score', 'read', 'code']);
      expect(bundle.cacheHit).toBe(false);
    } finally {
      await m.close();
    }
  });
});

describe('graph expansion', () => {
  it('reaches entries the vector search did not, with the edge path, up to depth', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'seed', title: 'kafka consumer offsets', content: 'commit kafka offsets after processing' },
          { id: 'hop1', title: 'poison messages', content: 'park unprocessable records in a dead letter topic' },
          { id: 'hop2', title: 'alerting', content: 'page the owner when the parking lot grows' },
          { id: 'hop3', title: 'rotation', content: 'who is on call this week' },
        ],
        relations: [
          { type: 'DEPENDS_ON', from: 'seed', to: 'hop1' },
          { type: 'RELATED', from: 'hop2', to: 'hop1', weight: 0.5 },
          { type: 'RELATED', from: 'hop2', to: 'hop3' },
        ],
      });
      // what the walk reaches, whatever the evidence cut would keep of it
      const b = await m.buildTaskContext('kafka offsets commit', { threshold: 0.3, seeds: 1, evidenceCut: false });
      const byId = new Map(b.entries.map((e) => [e.entry.id, e]));
      expect([...byId.keys()].sort()).toEqual(['hop1', 'hop2', 'seed']);
      expect(byId.get('hop2')!.why).toEqual([
        {
          kind: 'graph',
          seedId: 'seed',
          hops: 2,
          path: [
            { type: 'DEPENDS_ON', from: 'seed', to: 'hop1' },
            { type: 'RELATED', from: 'hop2', to: 'hop1' },
          ],
        },
      ]);
      expect(byId.get('hop1')!.score).toBeGreaterThan(byId.get('hop2')!.score);
      const deeper = await m.buildTaskContext('kafka offsets commit', { threshold: 0.3, seeds: 1, depth: 3, evidenceCut: false });
      expect(deeper.entries.map((e) => e.entry.id)).toContain('hop3');
      const onlyRelated = await m.buildTaskContext('kafka offsets commit', { threshold: 0.3, seeds: 1, relationTypes: ['RELATED'] });
      expect(onlyRelated.entries.map((e) => e.entry.id)).toEqual(['seed']);
      const none = await m.buildTaskContext('kafka offsets commit', { threshold: 0.3, depth: 0 });
      expect(none.entries.map((e) => e.entry.id)).toEqual(['seed']);
    });
  });
});

describe('writes', () => {
  it('re-ingesting the same file changes nothing and embeds nothing', async () => {
    const dir = await tempDir();
    const embedder = wordHashEmbedder();
    await withEngine(dir, (m) => m.ingest(EXAMPLE_FILE), embedder);
    const before = await onDisk(dir);
    const generation = await withEngine(dir, async (m) => (await m.stats()).generation, embedder);
    embedder.calls = 0;
    const again = await withEngine(dir, (m) => m.ingest(EXAMPLE_FILE), embedder);
    expect(again).toMatchObject({ entries: { added: 0, updated: 0, unchanged: 44 }, embedded: 0, changed: false });
    expect(embedder.calls).toBe(0);
    expect(await onDisk(dir)).toEqual(before);
    expect(await withEngine(dir, async (m) => (await m.stats()).generation, embedder)).toBe(generation);
    expect(before.edges).toBe(72);
  });

  it("changing an entry's text re-embeds only it and moves it in the ranking", async () => {
    const dir = await tempDir();
    const embedder = wordHashEmbedder();
    await withEngine(
      dir,
      async (m) => {
        const doc = (text: string) => ({
          core_id: 'c',
          entries: [
            { id: 'a', title: 'redis cache eviction', content: 'use allkeys-lru' },
            { id: 'b', title: 'postgres vacuum', content: text },
          ],
        });
        await m.ingestDocument(doc('autovacuum settings'));
        const before = await m.semanticSearch('redis cache eviction policy', { limit: 2 });
        expect(before[0]!.entry.id).toBe('a');
        embedder.calls = 0;
        const r = await m.ingestDocument(doc('redis cache eviction policy redis cache eviction'));
        expect(r).toMatchObject({ entries: { added: 0, updated: 1, unchanged: 1 }, embedded: 1 });
        expect(embedder.calls).toBe(1);
        const after = await m.semanticSearch('redis cache eviction policy', { limit: 2 });
        expect(after[0]!.entry.id).toBe('b');
        expect(after[0]!.similarity).toBeGreaterThan(before.find((h) => h.entry.id === 'b')!.similarity);
        // metadata-only change: no embedding, updated row
        embedder.calls = 0;
        const meta = await m.ingestDocument({
          core_id: 'c',
          entries: [{ id: 'a', title: 'redis cache eviction', content: 'use allkeys-lru', importance: 9 }],
        });
        expect(meta).toMatchObject({ entries: { updated: 1 }, embedded: 0 });
        expect((await m.getEntries(['a']))[0]!.importance).toBe(9);
      },
      embedder,
    );
  });

  it('delete removes an entry and its edges from both stores', async () => {
    const dir = await tempDir();
    await withEngine(dir, (m) => m.ingest(EXAMPLE_FILE));
    const before = await onDisk(dir);
    expect(await withEngine(dir, (m) => m.delete(['auth-refresh-rotation', 'no-such-id']))).toEqual({ deleted: 1 });
    const after = await onDisk(dir);
    expect(after.lanceIds).toEqual(before.lanceIds.filter((id) => id !== 'auth-refresh-rotation'));
    expect(after.graphIds).toEqual(after.lanceIds);
    // rotation had 1 SUPERSEDES, 1 DEPENDS_ON out, 1 DEPENDS_ON in, 1 RELATED, 2 REFERENCES_CODE, 1 IMPLEMENTS
    expect(after.edges).toBe(before.edges - 7);
    const hits = await withEngine(dir, (m) => m.semanticSearch('rotate refresh tokens on every use', { limit: 44 }));
    expect(hits.map((h) => h.entry.id)).not.toContain('auth-refresh-rotation');
  });

  it('a rejected file writes nothing, and the error names file, record and field', async () => {
    const dir = await tempDir();
    await withEngine(dir, (m) => m.ingest(EXAMPLE_FILE));
    const before = await onDisk(dir);
    const bad = join(dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify({
        entries: [{ id: 'new-1', core_id: 'x', title: 'fine', content: 'fine' }],
        relations: [
          { type: 'DEPENDS_ON', from: 'new-1', to: 'auth-es256' },
          { type: 'RELATED', from: 'new-1', to: 'ghost' },
        ],
      }),
    );
    const err = await withEngine(dir, (m) => m.ingest(bad).catch((e: unknown) => e));
    expect(err).toBeInstanceOf(MemoryFileError);
    expect((err as Error).message).toBe(
      `${bad}: relations[1] (RELATED "new-1" → "ghost"): field "to": unknown entry id "ghost" (not in this file nor in the store)`,
    );
    expect(await onDisk(dir)).toEqual(before);
    // a relation to an entry that exists only in the store is fine
    await writeFile(
      bad,
      JSON.stringify({
        entries: [{ id: 'new-1', core_id: 'x', title: 'fine', content: 'fine' }],
        relations: [{ type: 'DEPENDS_ON', from: 'new-1', to: 'auth-es256' }],
      }),
    );
    await withEngine(dir, (m) => m.ingest(bad));
    expect((await onDisk(dir)).edges).toBe(before.edges + 1);
  });

  it('re-linking updates an edge in place: one edge per pair and type, last properties win', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({ core_id: 'c', entries: ['a', 'b', 'c'].map((id) => ({ id, title: `entry ${id}`, content: id })) });
      await m.link([
        { type: 'RELATED', from: 'a', to: 'b', weight: 0.5 },
        { type: 'RELATED', from: 'a', to: 'b', weight: 0.9, kind: 'mention' },
        { type: 'DEPENDS_ON', from: 'b', to: 'c' },
      ]);
      await m.link([
        { type: 'RELATED', from: 'a', to: 'b', weight: 0.3 },
        { type: 'RELATED', from: 'a', to: 'c' },
        { type: 'DEPENDS_ON', from: 'b', to: 'c' },
      ]);
    });
    const disk = await onDisk(dir);
    expect(disk.edges).toBe(3);
    expect(disk.related).toEqual(['a→b 0.3 related', 'a→c 1 related']);
  });

  it('replays a write that was journaled but not finished', async () => {
    const dir = await tempDir();
    await withEngine(dir, (m) =>
      m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'a', title: 'alpha', content: 'one' },
          { id: 'b', title: 'beta', content: 'two' },
        ],
      }),
    );
    // a crash after the journal entry was written, before either store was touched
    await writeFile(join(dir, 'journal', '000000000000001-1-0.json'), JSON.stringify({ op: 'delete', ids: ['a'] }));
    await writeFile(join(dir, 'journal', '000000000000002-1-0.json.tmp'), '{"op": "delete", "ids": ["b"]');
    const ids = await withEngine(dir, async (m) => (await m.getEntries(['a', 'b'])).map((e) => e.id));
    expect(ids).toEqual(['b']);
    expect((await onDisk(dir)).graphIds).toEqual(['b']);
    expect(await readdir(join(dir, 'journal'))).toEqual([]);
  });

  it('replays a journaled upsert of rows that were already appended without duplicating them, from a journal file of either format', async () => {
    const dir = await tempDir();
    await withEngine(dir, (m) =>
      m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'a', title: 'alpha', content: 'one' },
          { id: 'b', title: 'beta', content: 'two' },
        ],
      }),
    );
    const table = await EntriesTable.open(join(dir, 'lance'), 64, 16);
    const [a] = await table.read({ ids: ['a'] }, { withVectors: true });
    table.close();
    const rewrite = (title: string, blobs: Float32Array[]) => {
      const entries = [serializeStored({ entry: { ...a!.entry, title }, vector: a!.vector!, vectorSmall: a!.vectorSmall! }, blobs)];
      const graph = { entries: [{ id: 'a', coreId: 'c', title, entryType: 'note' }], codeLocations: [], goldenPaths: [], relations: [] };
      return { op: 'upsert' as const, entries, newIds: ['a'], graph, sources: {} };
    };
    // a crash after the rows of a write that appended 'a' (found absent then) reached LanceDB, before the journal was cleared
    const blobs: Float32Array[] = [];
    await new Journal(join(dir, 'journal')).begin(rewrite('alpha again', blobs), blobs);
    expect(await withEngine(dir, async (m) => (await m.getEntries(['a', 'b'])).map((e) => e.title))).toEqual(['alpha again', 'beta']);
    // the JSON intent of earlier versions, vectors as base64 of their float32 bytes
    const base64 = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
    const old = rewrite('alpha once more', []);
    old.entries = old.entries.map((e) => ({ ...e, vector: base64(a!.vector!), vectorSmall: base64(a!.vectorSmall!) }));
    await writeFile(join(dir, 'journal', '000000000000001-1-0.json'), JSON.stringify(old));
    expect(await withEngine(dir, async (m) => (await m.getEntries(['a', 'b'])).map((e) => e.title))).toEqual(['alpha once more', 'beta']);
    expect((await onDisk(dir)).lanceIds).toEqual(['a', 'b']); // merged on replay, not appended again
    const reopened = await EntriesTable.open(join(dir, 'lance'), 64, 16);
    const [replayed] = await reopened.read({ ids: ['a'] }, { withVectors: true });
    reopened.close();
    expect(Array.from(replayed!.vector!)).toEqual(Array.from(a!.vector!));
    expect(Array.from(replayed!.vectorSmall!)).toEqual(Array.from(a!.vectorSmall!));
    expect(await readdir(join(dir, 'journal'))).toEqual([]);
  });

  it('refuses a damaged journal file rather than replaying part of it', async () => {
    const dir = await tempDir();
    await withEngine(dir, (m) => m.ingestDocument({ core_id: 'c', entries: [{ id: 'a', title: 'alpha', content: 'one' }] }));
    const journal = new Journal(join(dir, 'journal'));
    const name = await journal.begin({ op: 'delete', ids: ['a'] }, [Float32Array.from([1, 2, 3])]);
    const bytes = await readFile(join(dir, 'journal', name));
    await writeFile(join(dir, 'journal', name), bytes.subarray(0, bytes.length - 4));
    await expect(openMemory({ path: dir, embedder: wordHashEmbedder(64) })).rejects.toThrow(/journal intent .* is damaged/);
    await writeFile(join(dir, 'journal', name), bytes);
    expect(await withEngine(dir, async (m) => (await m.getEntries(['a'])).length)).toBe(0);
  });

  it('fits the projection before the write that brings the store to 256 entries and writes every row once under it', async () => {
    const dir = await tempDir();
    const words = wordHashEmbedder(64);
    const embedder = { ...words, id: 'test:untruncatable', truncatable: false, embed: words.embed };
    const entries = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        id: `e${from + i}`,
        title: `entry ${from + i}`,
        content: `word${(from + i) % 37} word${(from + i) % 11} topic${(from + i) % 5}`,
      }));
    await withEngine(dir, (m) => m.ingestDocument({ core_id: 'c', entries: entries(0, 100) }), embedder);
    await expect(readFile(join(dir, 'projection.json'), 'utf8')).rejects.toThrow(); // under 256: the prefix serves
    const writes = vi.spyOn(EntriesTable.prototype, 'upsert'); // calls through: counts the rows written
    await withEngine(dir, (m) => m.ingestDocument({ core_id: 'c', entries: entries(100, 200) }, { source: 'more' }), embedder);
    // one write of 300 rows (200 new, 100 re-derived), not 200 under the prefix and then all 300 again
    expect(writes.mock.calls.map(([rows]) => rows.length)).toEqual([300]);
    writes.mockRestore();
    const projection = JSON.parse(await readFile(join(dir, 'projection.json'), 'utf8')) as Projection;
    expect(projection).toMatchObject({ kind: 'pca', dimensions: 16, fittedOn: 300 });
    const table = await EntriesTable.open(join(dir, 'lance'), 64, 16);
    const rows = await table.read({}, { withVectors: true });
    table.close();
    expect(rows).toHaveLength(300);
    for (const r of rows) expect(Array.from(r.vectorSmall!)).toEqual(Array.from(project(r.vector!, projection)));
  });

  it('refuses to open a database with another embedding model', async () => {
    const dir = await tempDir();
    await withEngine(dir, (m) => m.ingestDocument({ core_id: 'c', entries: [{ title: 'a', content: 'b' }] }), wordHashEmbedder(64));
    await expect(openMemory({ path: dir, embedder: wordHashEmbedder(32) })).rejects.toThrow(
      /built with embedder test:word-hash-64 \(64-d\)/,
    );
  });
});

describe('hostile ids, core names and tags', () => {
  const nasty = [
    "o'brien",
    'back\\slash',
    "x' OR '1'='1",
    '日本語 🔑',
    'quote"double',
    'new↵line (a line break itself is outside the id grammar)',
    'MATCH (n) DETACH DELETE n',
  ];

  it('round-trips through both stores and every filter', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        entries: nasty.map((s, i) => ({ id: s, core_id: `core ${s}`, title: `entry ${i} ${s}`, content: `text ${i}`, tags: [s] })),
        code_locations: [{ id: "c'1", codebase_id: "cb'\\", file_path: "src/it's\\here.ts", symbol: "s'y" }],
        relations: [
          ...nasty.slice(1).map((s, i) => ({ type: 'RELATED' as const, from: nasty[i]!, to: s })),
          { type: 'REFERENCES_CODE', from: nasty[0]!, to: "c'1" },
        ],
      });
      for (const [i, s] of nasty.entries()) {
        const hits = await m.semanticSearch(`entry ${i}`, { cores: [`core ${s}`], tags: [s], limit: 5 });
        expect(hits.map((h) => h.entry.id)).toEqual([s]);
      }
      expect((await m.getEntries(nasty)).map((e) => e.id)).toEqual(nasty);
      const refs = await m.findByCodeReference({ filePath: "it's\\", symbol: "s'y", codebaseId: "cb'\\" });
      expect(refs.map((r) => r.entry.id)).toEqual([nasty[0]]);
      const b = await m.buildTaskContext('entry 0', {
        cores: nasty.map((s) => `core ${s}`),
        seeds: 1,
        depth: 10,
        threshold: -1,
        maxEntries: 20,
        evidenceCut: false,
      });
      expect(b.entries.map((e) => e.entry.id).sort()).toEqual([...nasty].sort());
      expect((await m.delete([nasty[2]!])).deleted).toBe(1);
      expect((await m.stats()).entries).toBe(nasty.length - 1);
    });
  });
});

describe('time and supersession', () => {
  it('drops superseded and expired entries, and returns them with asOf', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'old', title: 'deploy with fabric scripts', content: 'deploy deploy', created_at: '2020-01-01' },
          { id: 'new', title: 'deploy with argo', content: 'deploy deploy', created_at: '2024-01-01', valid_from: '2024-01-01' },
          { id: 'gone', title: 'deploy freeze fridays', content: 'deploy', valid_from: '2021-01-01', valid_to: '2023-01-01' },
        ],
        relations: [{ type: 'SUPERSEDES', from: 'new', to: 'old' }],
      });
      const now = await m.buildTaskContext('deploy', { threshold: 0 });
      expect(now.entries.map((e) => e.entry.id)).toEqual(['new']);
      const then = await m.buildTaskContext('deploy', { threshold: 0, asOf: new Date('2022-06-01') });
      expect(then.entries.map((e) => e.entry.id).sort()).toEqual(['gone', 'old']);
    });
  });
});

describe('filters, budget and options', () => {
  it('pushes filters down before the limit and packs to maxTokens', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const hits = await m.semanticSearch('database', { cores: ['common-patterns'], entryTypes: ['lesson'], limit: 1 });
      expect(hits.map((h) => h.entry.id)).toEqual(['cp-integration-tests-db']);
      const high = await m.semanticSearch('tokens', { minConfidence: 'high', limit: 44 });
      expect(high.every((h) => h.entry.confidence === 'high')).toBe(true);
      const secret = await m.semanticSearch('signing key vault', { sensitivity: ['secret'], limit: 5 });
      expect(secret.map((h) => h.entry.id)).toEqual(['cp-secret-rotation-runbook']);
      const b = await m.buildTaskContext('jwt refresh token', { maxTokens: 120, threshold: -1 });
      expect(b.entries.reduce((n, e) => n + e.tokens, 0)).toBeLessThanOrEqual(120);
      expect(b.entries.length).toBeGreaterThan(0);
    });
  });

  it('rejects bad options with a message naming the option', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await expect(m.buildTaskContext('')).rejects.toThrow(/task must be a non-empty string/);
      await expect(m.buildTaskContext('x', { depth: -1 })).rejects.toThrow(/depth must be an integer from 0 to 10/);
      await expect(m.buildTaskContext('x', { maxEntries: 1.5 })).rejects.toThrow(/maxEntries/);
      await expect(m.buildTaskContext('x', { threshold: 2 })).rejects.toThrow(/threshold is a cosine similarity/);
      await expect(m.buildTaskContext('x', { minConfidence: 'sure' as never })).rejects.toThrow(/minConfidence must be one of/);
      await expect(m.buildTaskContext('x', { relationTypes: ['LIKES' as never] })).rejects.toThrow(/relationTypes/);
      await expect(m.buildTaskContext('x', { cores: [''] })).rejects.toThrow(/cores must be a list/);
      await expect(m.semanticSearch('x', { limit: 0 })).rejects.toThrow(/limit must be/);
      await expect(m.findByCodeReference({})).rejects.toThrow(/needs filePath, symbol or codebaseId/);
      await expect(m.delete([''])).rejects.toThrow(/delete: ids\[0\]: id "" must not be empty/);
    });
  });

  it('aborts with an AbortError', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      const ac = new AbortController();
      ac.abort();
      await expect(m.buildTaskContext('anything', { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
      await expect(m.semanticSearch('anything', { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    });
  });
});

describe('code and golden paths', () => {
  it('stores doubles exactly whatever the order of integers and fractions', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'a', title: 'a', content: 'a' },
          { id: 'b', title: 'b', content: 'b' },
        ],
        code_locations: [
          { id: 'x', codebase_id: 'k', file_path: 'x.ts' },
          { id: 'y', codebase_id: 'k', file_path: 'y.ts' },
        ],
        relations: [
          { type: 'REFERENCES_CODE', from: 'a', to: 'x', relevance: 1 },
          { type: 'REFERENCES_CODE', from: 'b', to: 'y', relevance: 0.25 },
        ],
      });
      expect((await m.findByCodeReference({ codebaseId: 'k' })).map((r) => [r.entry.id, r.relevance])).toEqual([
        ['a', 1],
        ['b', 0.25],
      ]);
    });
  });

  it('stores golden-path steps whose key concepts are empty, alone or mixed', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        golden_paths: [{ id: 'g1', name: 'one', steps: [{ code: 'x' }] }],
        code_locations: [{ id: 'x', codebase_id: 'k', file_path: 'x.ts' }],
      });
      await m.ingestDocument({
        code_locations: [{ id: 'y', codebase_id: 'k', file_path: 'y.ts' }],
        golden_paths: [{ id: 'g2', name: 'two', steps: [{ code: 'x' }, { code: 'y', key_concepts: ['a b', 'c'] }] }],
      });
      expect((await m.getGoldenPath('g1'))!.steps.map((s) => s.keyConcepts)).toEqual([[]]);
      expect((await m.getGoldenPath('g2'))!.steps.map((s) => s.keyConcepts)).toEqual([[], ['a b', 'c']]);
    });
  });

  it('finds entries by file substring, symbol and codebase; golden paths in step order', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const refs = await m.findByCodeReference({ filePath: 'src/auth/' });
      expect(new Set(refs.map((r) => r.entry.id))).toEqual(
        new Set(['auth-refresh-rotation', 'auth-refresh-reuse-race', 'auth-revocation-store', 'auth-clock-skew', 'auth-es256']),
      );
      expect(refs[0]!.relevance).toBe(1);
      expect((await m.findByCodeReference({ symbol: 'withTransaction' })).map((r) => r.entry.id)).toEqual(['cp-transactions']);
      expect(await m.findByCodeReference({ filePath: 'nowhere/' })).toEqual([]);
      const path = await m.getGoldenPath('gp-add-column');
      expect(path!.steps.map((s) => s.code.filePath)).toEqual([
        'migrations/20250301120000_add_orders_currency.ts',
        'scripts/backfill.ts',
        'src/api/v2/mappers/money.ts',
        '.github/workflows/release.yml',
      ]);
      expect(path!.steps[1]!.keyConcepts).toEqual(['batches', 'WAL']);
      expect(path!.steps[0]!.code.symbol).toBeNull();
      expect(await m.getGoldenPath('nope')).toBeNull();
    });
  });
});
