import { existsSync } from 'node:fs';
/**
 * Backups on real stores: taken while writes go on, restored as the store stood at one instant,
 * checked against their checksums and counts before anything is replaced.
 */
import { appendFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreMemory } from '../src/index.js';
import { EXAMPLE_FILE, tempDir, withEngine } from './helpers.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { graphFileName } from '../src/store/graph/drivers.js';

/** The graph file of a folder made with the default graph database. */
const GRAPH_FILE = graphFileName(DEFAULTS.store.graph);

describe('backup and restore', () => {
  it('takes a copy while writes go on that restores to the store as it stood at one instant', async () => {
    const dir = await tempDir();
    let taken = -1;
    await withEngine(join(dir, 'live'), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      let written = 0;
      const writes = (async () => {
        for (let i = 0; i < 12; i++) {
          await m.remember({
            title: `Note ${i}`,
            content: `zqnote${i} about refresh tokens`,
            core: 'notes',
            related: ['auth-refresh-rotation'],
          });
          written = i + 1;
        }
      })();
      while (written < 4) await new Promise((r) => setTimeout(r, 5));
      const backup = m.backup(join(dir, 'backup'));
      const manifest = await backup;
      taken = manifest.counts.entries - 44;
      await writes;
      expect(taken).toBeGreaterThanOrEqual(4);
      expect(taken).toBeLessThan(12);
      expect(manifest.files.some((f) => f.path === GRAPH_FILE)).toBe(true);
      expect(manifest.files.some((f) => f.path.startsWith('server.'))).toBe(false);
      // snapshots are derived: left out, and built again by the restored store
      expect(existsSync(join(dir, 'live', 'snapshots', 'changes.jsonl'))).toBe(true);
      expect(manifest.files.some((f) => f.path.startsWith('snapshots'))).toBe(false);
    });
    const manifest = await restoreMemory(join(dir, 'backup'), { path: join(dir, 'restored') });
    await withEngine(join(dir, 'restored'), async (m) => {
      const stats = await m.stats();
      expect(stats.entries).toBe(manifest.counts.entries);
      expect(stats.generation).toBe(manifest.generation);
      // The notes written before the copy, and none after.
      const notes = (await m.listEntries({ cores: ['notes'] })).map((e) => e.title).sort();
      expect(notes).toEqual(Array.from({ length: taken }, (_, i) => `Note ${i}`).sort());
      expect(
        (await m.entryDetails('auth-refresh-rotation'))!.links.filter((l) => l.type === 'RELATED' && l.to === 'auth-refresh-rotation'),
      ).toHaveLength(taken);
      expect((await m.hybridSearch('zqnote0')).map((h) => h.entry.title)).toContain('Note 0');
    });
  });

  it('refuses a damaged backup, a non-empty target without force, and a backup inside its folder', async () => {
    const dir = await tempDir();
    await withEngine(join(dir, 'live'), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      await m.backup(join(dir, 'backup'));
      await expect(m.backup(join(dir, 'backup'))).rejects.toThrow(/is not empty; back up into a new folder/);
      await expect(m.backup(join(dir, 'live', 'inner'))).rejects.toThrow(/cannot go inside the folder it copies/);
    });
    // A target that holds something is replaced only when asked to.
    await withEngine(join(dir, 'other'), (m) => m.upsert([{ id: 'x', core_id: 'c', title: 'Other store', content: 'kept until forced' }]));
    await expect(restoreMemory(join(dir, 'backup'), { path: join(dir, 'other') })).rejects.toThrow(/is not empty; pass --force/);
    await withEngine(join(dir, 'other'), async (m) => expect((await m.stats()).entries).toBe(1));
    await restoreMemory(join(dir, 'backup'), { path: join(dir, 'other'), force: true });
    await withEngine(join(dir, 'other'), async (m) => {
      expect((await m.stats()).entries).toBe(44);
      expect(await m.getEntries(['x'])).toEqual([]);
    });
    // One byte more in one file: refused by its checksum, nothing replaced.
    const lance = (await readdir(join(dir, 'backup', 'lance', 'entries.lance', 'data')))[0]!;
    await appendFile(join(dir, 'backup', 'lance', 'entries.lance', 'data', lance), 'x');
    await expect(restoreMemory(join(dir, 'backup'), { path: join(dir, 'fresh') })).rejects.toThrow(
      `backup ${join(dir, 'backup')} is damaged: lance/entries.lance/data/${lance} does not match its checksum`,
    );
    expect((await readdir(dir)).filter((f) => f.includes('fresh'))).toEqual([]);
    await expect(restoreMemory(join(dir, 'nowhere'))).rejects.toThrow(/is not a memcore backup/);
  });
});
