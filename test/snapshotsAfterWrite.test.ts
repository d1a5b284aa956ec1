/**
 * The writer leaves the snapshots current: after `ingest`, `import`, `import-code`, `reembed` and
 * `restore`, each a real CLI process on a small store, every snapshot file is of the store's
 * generation, and a fresh reader loads each structure from its file (none built) and answers the
 * same bundle as a reader that builds everything from the stores. A snapshot left behind by a
 * small write is caught up from the change log, not rebuilt (docs/storage.md, "Snapshots").
 */
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { openMemory, type ContextBundle, type ResidentLoad } from '../src/index.js';
import { SNAPSHOT_KEYS } from '../src/store/resident/residents.js';
import { snapshotGeneration } from '../src/store/snapshot/snapshotFile.js';
import { cliProcesses, cliWithFakeEmbedder } from './cliProcess.js';
import { EXAMPLE_FILE, shopRepo, tempDir, wordHashEmbedder } from './helpers.js';

const { memcore, env } = cliWithFakeEmbedder();
/** The CLI once the folder moved to the fake server's other model (`reembed`). */
const afterReembed = cliProcesses(() => ({ ...env(), MEMCORE_EMBED_MODEL: 'fake-two' }));

const TASK = 'rotate the refresh token when an order is cancelled';

async function storeGeneration(db: string): Promise<number> {
  return (JSON.parse(await readFile(join(db, 'meta.json'), 'utf8')) as { generation: number }).generation;
}

/** The generation each snapshot file was written at (undefined: no file). */
async function snapshotGenerations(db: string): Promise<Record<string, number | undefined>> {
  const generations: Record<string, number | undefined> = {};
  for (const key of SNAPSHOT_KEYS) generations[key] = await snapshotGeneration(join(db, 'snapshots', `${key}.snap`));
  return generations;
}

/** What a bundle says, without its timings (scores to 6 places: recency moves them between two reads). */
const answer = (b: ContextBundle) => ({
  entries: b.entries.map((e) => [e.entry.id, e.score.toFixed(6)]),
  decisions: b.relatedDecisions.map((e) => e.entry.id),
  codeRefs: b.codeRefs,
  goldenPaths: b.goldenPaths.map((p) => p.id),
});

/** A fresh reader (this process, the CLI's configuration): its first bundle and how it loaded each structure. */
async function read(db: string, model = 'fake'): Promise<{ bundle: ReturnType<typeof answer>; loads: Record<string, ResidentLoad> }> {
  const m = await openMemory({ path: db, env: { ...env(), MEMCORE_EMBED_MODEL: model } });
  try {
    const bundle = answer(await m.buildTaskContext(TASK, { maxEntries: 8 }));
    await m.findByCodeReference({ filePath: 'src' }); // the code links too
    return { bundle, loads: (await m.stats()).resident };
  } finally {
    await m.close();
  }
}

/** The same query on a copy of the folder without its snapshots: everything built from the stores. */
async function readBuilt(db: string, model = 'fake'): Promise<ReturnType<typeof answer>> {
  const copy = join(await tempDir(), 'copy');
  await cp(db, copy, { recursive: true });
  await rm(join(copy, 'snapshots'), { recursive: true, force: true });
  const { bundle, loads } = await read(copy, model);
  expect(Object.values(loads).every((l) => l.loadedFrom === 'built')).toBe(true);
  return bundle;
}

/**
 * Every snapshot file is there, each of the store's generation or (the entry structures only)
 * behind by no more entries than the change log leaves a reader to catch up; a fresh reader loads
 * each from its file (none built) and answers as a build would. Returns the generations.
 */
async function expectReady(db: string, model = 'fake'): Promise<{ generation: number; behind: string[] }> {
  const generation = await storeGeneration(db);
  expect(generation).toBeGreaterThan(0);
  const generations = await snapshotGenerations(db);
  const built = await readBuilt(db, model);
  const { bundle, loads } = await read(db, model);
  const behind: string[] = [];
  for (const key of SNAPSHOT_KEYS) {
    expect(generations[key], key).toBeDefined();
    if (generations[key] === generation) expect(loads[key]?.loadedFrom, key).toBe('snapshot');
    else {
      behind.push(key);
      expect(['columns', 'keywords', 'names']).toContain(key);
      expect(loads[key]?.loadedFrom, key).toBe('caught-up');
      expect(loads[key]?.caughtUp?.fromGeneration, key).toBe(generations[key]);
      expect(loads[key]?.caughtUp?.entries, key).toBeLessThanOrEqual(DEFAULTS.store.snapshotCatchUpMaxEntries);
    }
  }
  expect(bundle).toEqual(built);
  expect(bundle.entries.length).toBeGreaterThan(0);
  return { generation, behind };
}

/** Every snapshot file is of the store's generation, and a fresh reader loads them all. */
async function expectCurrent(db: string, model = 'fake'): Promise<void> {
  expect((await expectReady(db, model)).behind).toEqual([]);
}

async function run(args: string[], cli = memcore): Promise<string> {
  const r = await cli(args);
  expect(r.code, r.stderr).toBe(EXIT.ok);
  return r.stdout;
}

describe('snapshots after a write', () => {
  it('ingest, import and import-code leave every snapshot current', async () => {
    const root = await tempDir();
    const db = join(root, 'db');
    await run(['ingest', EXAMPLE_FILE, '--db', db]);
    await expectCurrent(db);

    const docs = join(root, 'docs');
    await mkdir(docs);
    await writeFile(join(docs, 'tokens.md'), '# Token rotation\n\nRefresh tokens rotate on every use; a reused one revokes the family.\n');
    await writeFile(join(docs, 'orders.md'), '# Cancelling orders\n\nA cancelled order releases its stock reservation.\n');
    // Two documents, a few entries: a bulk command still leaves the reader nothing to catch up.
    await run(['import', docs, '--db', db]);
    await expectCurrent(db);

    await run(['import-code', await shopRepo(), '--codebase', 'shop', '--db', db]);
    await expectCurrent(db);
  }, 180_000);

  it('reembed and restore leave every snapshot current', async () => {
    const root = await tempDir();
    const db = join(root, 'db');
    await run(['ingest', EXAMPLE_FILE, '--db', db]);
    const baseURL = env().MEMCORE_EMBED_BASE_URL!;
    await run(['reembed', '--embedder', 'openai:fake-two', '--dimensions', '8', '--base-url', baseURL, '--db', db]);
    await expectCurrent(db, 'fake-two');

    await run(['backup', join(root, 'backup'), '--db', db], afterReembed.memcore);
    const restored = join(root, 'restored');
    await run(['restore', join(root, 'backup'), '--db', restored], afterReembed.memcore);
    await expectCurrent(restored, 'fake-two');
  }, 180_000);

  it('the library: the last close after ingestDocument leaves every snapshot current, after upsert a catch-up of what it wrote', async () => {
    const dir = join(await tempDir(), 'db');
    const entries = Array.from({ length: 40 }, (_, i) => ({
      id: `n${i}`,
      core_id: 'notes',
      title: `Note ${i}`,
      content: `token note ${i}`,
    }));
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await m.ingestDocument({ entries: entries.slice(0, 30) });
    await m.close();
    const ingested = await storeGeneration(dir);
    expect(await snapshotGenerations(dir)).toEqual(Object.fromEntries(SNAPSHOT_KEYS.map((k) => [k, ingested])));

    const writer = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await writer.upsert(entries.slice(30));
    await writer.close();
    const upserted = await storeGeneration(dir);
    expect(await snapshotGenerations(dir)).toEqual({
      columns: ingested,
      keywords: ingested,
      names: ingested,
      adjacency: upserted,
      'code-links': upserted,
    });
    const reader = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await reader.keywordSearch('note 35', { limit: 40 })).map((h) => h.entry.id)).toContain('n35');
      expect((await reader.stats()).resident.keywords).toMatchObject({
        loadedFrom: 'caught-up',
        caughtUp: { fromGeneration: ingested, entries: 10 },
      });
    } finally {
      await reader.close();
    }
  });

  it('a small write leaves the entry snapshots to the change log, and a reader catches up rather than rebuilds', async () => {
    const db = join(await tempDir(), 'db');
    await run(['ingest', EXAMPLE_FILE, '--db', db]);
    const before = await storeGeneration(db);
    // A write that loads none of the entry structures: their snapshots stay one generation behind.
    await run([
      'remember',
      '--title',
      'Refresh token reuse',
      '--content',
      'A reused refresh token revokes every token of its family.',
      '--core',
      'notes',
      '--db',
      db,
    ]);
    const after = await storeGeneration(db);
    expect(after).toBe(before + 1);
    const generations = await snapshotGenerations(db);
    const caughtUpKeys = SNAPSHOT_KEYS.filter((k) => generations[k] === before);
    expect(caughtUpKeys.length).toBeGreaterThan(0);
    // The graph's own structures cannot be caught up from ids: the writer left them current.
    expect(generations.adjacency).toBe(after);
    expect(generations['code-links']).toBe(after);

    const built = await readBuilt(db);
    const { bundle, loads } = await read(db);
    for (const key of caughtUpKeys) {
      expect(loads[key]?.loadedFrom, key).toBe('caught-up');
      expect(loads[key]?.caughtUp, key).toEqual({ fromGeneration: before, entries: 1 });
    }
    expect(bundle).toEqual(built);
  }, 180_000);
});
