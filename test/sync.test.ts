import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { openMemory } from '../src/index.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

const entry = (title: string, extra: Record<string, unknown> = {}) => ({
  id: title.toLowerCase().replace(/\W+/g, '-'),
  title,
  content: `${title}: the details.`,
  ...extra,
});

describe('ingest --sync: the store follows its memory file', () => {
  it('removes entries, code, paths and relations the file no longer holds, and only those', async () => {
    const dir = await tempDir();
    const file = join(dir, 'memory.yaml');
    const db = join(dir, '.memcore');
    const full = {
      core_id: 'api',
      entries: [entry('Keep'), entry('Drop'), entry('Linked')],
      code_locations: [
        { id: 'c-keep', codebase_id: 'api', file_path: 'src/a.ts' },
        { id: 'c-drop', codebase_id: 'api', file_path: 'src/b.ts' },
      ],
      golden_paths: [{ id: 'p-drop', name: 'Old walkthrough', steps: [{ code: 'c-keep' }] }],
      relations: [
        { type: 'RELATED', from: 'keep', to: 'linked' },
        { type: 'REFERENCES_CODE', from: 'keep', to: 'c-drop' },
        { type: 'REFERENCES_CODE', from: 'linked', to: 'c-keep' },
      ],
    };
    await writeFile(file, stringify(full));
    const m = await openMemory({ path: db, embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(file);
      // another source states one of the same entries: a sync of memory.yaml leaves it
      await m.ingestDocument({ core_id: 'api', entries: [entry('Drop')] }, { source: 'team-notes' });
      await writeFile(
        file,
        stringify({
          core_id: 'api',
          entries: [entry('Keep'), entry('Linked')],
          code_locations: [full.code_locations[0]],
          relations: [full.relations[2]],
        }),
      );

      const plain = await m.ingest(file);
      expect(plain.sync).toBeUndefined();
      expect((await m.stats()).codeLocations).toBe(2); // without --sync nothing goes

      const synced = await m.ingest(file, { sync: true });
      expect(synced.sync).toEqual({ removed: { entries: 0, codeLocations: 1, goldenPaths: 1, relations: 3 }, expired: [], keptInUse: [] });
      const stats = await m.stats();
      expect(stats).toMatchObject({ entries: 3, codeLocations: 1, goldenPaths: 0 });
      expect(stats.relations).toMatchObject({ RELATED: 0, REFERENCES_CODE: 1, PATH_STEP: 0 });
      expect((await m.getEntries(['drop'])).map((e) => e.id)).toEqual(['drop']); // team-notes still holds it

      // once team-notes drops it too, it goes
      const notes = await m.ingestDocument({ core_id: 'api', entries: [entry('Other')] }, { source: 'team-notes', sync: true });
      expect(notes.sync?.removed.entries).toBe(1);
      expect(await m.getEntries(['drop'])).toEqual([]);
      expect((await m.keywordSearch('Drop details')).map((h) => h.entry.id)).not.toContain('drop');

      // unchanged: a second sync is a no-op
      const again = await m.ingest(file, { sync: true });
      expect(again.changed).toBe(false);
      expect(again.sync?.removed).toEqual({ entries: 0, codeLocations: 0, goldenPaths: 0, relations: 0 });
    } finally {
      await m.close();
    }
  });

  it('expires instead of removing an entry others depend on, and keeps code that others reference', async () => {
    const dir = await tempDir();
    const file = join(dir, 'a.yaml');
    const m = await openMemory({ path: join(dir, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      await writeFile(
        file,
        stringify({
          core_id: 'api',
          entries: [entry('Base rule'), entry('Stays')],
          code_locations: [{ id: 'c1', codebase_id: 'api', file_path: 'src/c.ts' }],
        }),
      );
      await m.ingest(file);
      await m.remember({
        core: 'api',
        title: 'Depends on the base rule',
        content: 'Built on it.',
        dependsOn: ['base-rule'],
        code: [{ file: 'src/c.ts', codebase: 'api' }],
        autoLink: false,
      });
      await m.link([{ type: 'REFERENCES_CODE', from: 'stays', to: 'c1' }]);
      await writeFile(file, stringify({ core_id: 'api', entries: [entry('Stays')] }));
      const report = await m.ingest(file, { sync: true });
      expect(report.sync?.expired).toEqual(['base-rule']);
      expect(report.sync?.removed.entries).toBe(0);
      const [base] = await m.getEntries(['base-rule']);
      expect(base?.validTo).not.toBeNull();
      // expired: gone from answers, still there for the entry that depends on it
      expect((await m.buildTaskContext('base rule details', { maxTokens: 2000 })).entries.map((e) => e.entry.id)).not.toContain(
        'base-rule',
      );

      // the code location c1 is still referenced by "stays" through link(), which is no file's
      expect(report.sync?.keptInUse).toEqual(['c1']);
      expect(await m.getGoldenPath('none')).toBeNull();
      expect((await m.findByCodeReference({ filePath: 'src/c.ts' })).map((h) => h.entry.id).sort()).toEqual(
        ['stays', (await m.listEntries({ cores: ['api'] })).find((e) => e.title.startsWith('Depends'))!.id].sort(),
      );
    } finally {
      await m.close();
    }
  });

  it('names sources by their path from the project, whatever the working directory', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'm.yaml'), stringify({ core_id: 'x', entries: [entry('One')] }));
    const m = await openMemory({ path: join(dir, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await m.ingest(join(dir, 'm.yaml'))).source).toBe('m.yaml');
      await expect(m.ingestDocument({ core_id: 'x', entries: [] }, { sync: true })).rejects.toThrow(/sync needs a source/);
    } finally {
      await m.close();
    }
  });
});
