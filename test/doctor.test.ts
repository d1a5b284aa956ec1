/**
 * memcore doctor on folders damaged for real: a graph node or a table row gone, the graph file
 * deleted, meta.json, the projection or a journal file spoiled, a data file truncated. Each is
 * found, named with what it means, and repaired where it can be derived; open refuses the rest.
 */
import { open, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorMemory, openMemory } from '../src/index.js';
import { EntriesTable } from '../src/store/lance/entriesTable.js';
import { EXIT, main } from '../src/cli/main.js';
import { EXAMPLE_FILE, tempDir, withEngine, wordHashEmbedder } from './helpers.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { graphFileName, openGraphStore } from '../src/store/graph/drivers.js';

/** The graph file of a folder made with the default graph database. */
const GRAPH_FILE = graphFileName(DEFAULTS.store.graph);
const GRAPH_FILE_PATTERN = GRAPH_FILE.replace('.', '\\.');

async function store(): Promise<string> {
  const dir = join(await tempDir(), 'db');
  await withEngine(dir, async (m) => {
    await m.ingest(EXAMPLE_FILE);
    await m.index();
  });
  return dir;
}

const bad = (report: Awaited<ReturnType<typeof doctorMemory>>) =>
  report.findings.filter((f) => !f.ok).map((f) => `${f.check}: ${f.message}`);

describe('doctor', () => {
  it('finds nothing wrong with a healthy folder, and says so with exit 0', async () => {
    const dir = await store();
    const report = await doctorMemory(dir);
    expect(bad(report)).toEqual([]);
    expect(report.healthy).toBe(true);
    expect(report.findings.map((f) => f.check)).toEqual(['meta', 'journal', 'projection', 'entries', 'graph', 'agreement', 'indexes']);
    const out: string[] = [];
    expect(await main(['doctor', '--db', dir], { out: (t) => out.push(t), err: () => undefined, isTTY: false })).toBe(EXIT.ok);
    expect(out.join('\n')).toMatch(/ok +agreement: the table and the graph hold the same entries\nok +indexes: .*\nhealthy$/);
  });

  it('repairs a table and a graph that disagree, from the side that holds the data', async () => {
    const dir = await store();
    const graph = await openGraphStore(DEFAULTS.store.graph, join(dir, GRAPH_FILE));
    await graph.deleteEntries(['auth-access-ttl']);
    await graph.close();
    const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as {
      embedder: { dimensions: number };
      smallDimensions: number;
    };
    const table = await EntriesTable.open(join(dir, 'lance'), meta.embedder.dimensions, meta.smallDimensions);
    await table.delete(['api-contract-tests']);
    table.close();

    const report = await doctorMemory(dir);
    expect(report.healthy).toBe(false);
    expect(bad(report)).toEqual([
      'agreement: 1 entries in the table have no graph node ("auth-access-ttl"): searches find them, the graph never reaches them',
      'agreement: 1 graph nodes have no entry in the table ("api-contract-tests"): their text is gone',
    ]);
    const out: string[] = [];
    expect(await main(['doctor', '--db', dir], { out: (t) => out.push(t), err: () => undefined, isTTY: false })).toBe(EXIT.store);
    expect(out.join('\n')).toContain('--repair would add their graph nodes from the table');

    const repaired = await doctorMemory(dir, { repair: true });
    expect(repaired.healthy).toBe(true);
    expect(repaired.findings.filter((f) => f.repaired).length).toBe(2);
    expect(bad(await doctorMemory(dir))).toEqual([]);
    await withEngine(dir, async (m) => {
      expect((await m.stats()).entries).toBe(43);
      expect(await m.traverse('auth-access-ttl')).toEqual([]); // a node again; its edges only a backup holds
    });
  });

  it('rebuilds a deleted graph file from the table, naming what is lost', async () => {
    const dir = await store();
    await rm(join(dir, GRAPH_FILE));
    await expect(openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} })).rejects.toThrow(
      new RegExp(`${GRAPH_FILE_PATTERN} \\(relations, code locations, golden paths\\) is missing`),
    );
    const report = await doctorMemory(dir);
    expect(bad(report)[0]).toMatch(
      new RegExp(`^graph: ${GRAPH_FILE_PATTERN} is missing: relations, code locations and golden paths are gone`),
    );
    await doctorMemory(dir, { repair: true });
    await withEngine(dir, async (m) => {
      const stats = await m.stats();
      expect(stats.entries).toBe(44);
      expect(stats.codeLocations).toBe(0);
      expect((await m.hybridSearch('refresh token rotation')).length).toBeGreaterThan(0);
    });
  });

  it('refits a spoiled projection and reports spoiled meta, journal and data files', async () => {
    const dir = await store();
    await writeFile(join(dir, 'projection.json'), '{"kind": "pca"');
    expect(bad(await doctorMemory(dir))[0]).toMatch(/^projection: .*projection\.json/);
    expect((await doctorMemory(dir, { repair: true })).healthy).toBe(true);
    await withEngine(dir, async (m) => expect((await m.keywordSearch('refresh')).length).toBeGreaterThan(0));

    await writeFile(join(dir, 'journal', '000000000000001-1-0.journal'), 'not a journal');
    expect(bad(await doctorMemory(dir))[0]).toMatch(/^journal: .*000000000000001-1-0\.journal/);
    await rm(join(dir, 'journal', '000000000000001-1-0.journal'));

    const data = join(dir, 'lance', 'entries.lance', 'data');
    const [file] = await readdir(data);
    await truncate(join(data, file!), 100);
    expect(bad(await doctorMemory(dir))[0]).toMatch(/^entries: .*entries table could not be read/);

    // The graph file overwritten.
    const graphFile = join(dir, GRAPH_FILE);
    const handle = await open(graphFile, 'r+');
    const { size } = await handle.stat();
    await handle.write(Buffer.alloc(size, 0xab), 0, size, 0);
    await handle.close();
    const graphReport = await doctorMemory(dir);
    expect(bad(graphReport).some((f) => f.startsWith('graph: '))).toBe(true);
    await expect(openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} })).rejects.toMatchObject({ code: 'STORE' });

    await writeFile(join(dir, 'meta.json'), '{"formatVersion": 1');
    const report = await doctorMemory(dir);
    expect(bad(report)).toHaveLength(1);
    expect(bad(report)[0]).toMatch(/^meta: .*meta\.json.*Restore it from a backup/);
  });
});
