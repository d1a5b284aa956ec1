/**
 * `memcore export` writes the memory file format; ingesting it into an empty folder gives the
 * same store: entries field by field (dates, pins, validity, secrets when asked for), code
 * locations, golden paths with their steps, and every relation with its attributes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serializeMemoryDocument, type MemoryEngine, type Sensitivity } from '../src/index.js';
import { EXAMPLE_FILE, tempDir, withEngine } from './helpers.js';

const ALL: Sensitivity[] = ['public', 'internal', 'secret'];

async function everything(m: MemoryEngine) {
  const doc = await m.exportMemory({ sensitivity: ALL });
  const entries = await m.getEntries(
    doc.entries!.map((e) => e.id!),
    { sensitivity: ALL },
  );
  // What the store holds, not how often it was written or how this process loaded it.
  const { generation: _generation, resident: _resident, ...stats } = await m.stats();
  return { doc, entries, stats };
}

describe('export', () => {
  it('round-trips through YAML, JSONL and JSON into an empty folder', async () => {
    const dir = await tempDir();
    const before = await withEngine(join(dir, 'a'), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      await m.ingestDocument(
        {
          core_id: 'ops',
          entries: [
            {
              id: 'pin',
              title: 'Run pnpm, not npm',
              aliases: ['pnpm rule'],
              content: 'npm breaks the workspace links.',
              pinned: true,
              tags: ['tooling'],
            },
            {
              id: 'old',
              title: 'Deploy on Fridays',
              content: 'We used to.',
              created_at: '2020-01-01',
              valid_to: '2021-01-01',
              importance: 2,
            },
            { id: 'key', title: 'Signing key location', content: "It's in the vault at kv/'sign'\\\\key.", sensitivity: 'secret' },
            { id: 'mention', title: 'Why pnpm', content: 'See Run pnpm, not npm: it keeps the lockfile honest.' },
          ],
          relations: [{ type: 'DEPENDS_ON', from: 'pin', to: 'key' }],
        },
        { autoLink: true },
      );
      // A change of text moves updated_at past created_at: the export must keep both.
      await new Promise((r) => setTimeout(r, 5));
      await m.upsert([
        {
          id: 'pin',
          core_id: 'ops',
          title: 'Run pnpm, not npm',
          aliases: ['pnpm rule'],
          content: 'npm breaks the workspace links; pnpm 9.',
          pinned: true,
          tags: ['tooling'],
        },
      ]);
      return everything(m);
    });
    expect(before.entries.find((e) => e.id === 'pin')!.updatedAt.getTime()).toBeGreaterThan(
      before.entries.find((e) => e.id === 'pin')!.createdAt.getTime(),
    );
    expect(before.doc.relations).toContainEqual({
      type: 'RELATED',
      from: 'mention',
      to: 'pin',
      weight: expect.any(Number),
      kind: 'mention',
    });
    expect(before.doc.golden_paths!.length).toBe(3);

    for (const format of ['yaml', 'jsonl', 'json'] as const) {
      const file = join(dir, `export.${format}`);
      await writeFile(file, serializeMemoryDocument(before.doc, format));
      const after = await withEngine(join(dir, `b-${format}`), async (m) => {
        await m.ingest(file);
        return everything(m);
      });
      expect(after.doc, format).toEqual(before.doc);
      expect(after.entries, format).toEqual(before.entries);
      expect(after.stats, format).toEqual(before.stats);
    }
  });

  it('leaves out secrets unless asked, and keeps a core on its own ingestible', async () => {
    const dir = await tempDir();
    await withEngine(join(dir, 'a'), async (m) => {
      await m.ingest(EXAMPLE_FILE);
      await m.upsert([{ id: 'key', core_id: 'auth-jwt', title: 'Signing key', content: 'zqsecret', sensitivity: 'secret' }]);
      await m.link([{ type: 'RELATED', from: 'auth-refresh-rotation', to: 'key' }]);
      const plain = await m.exportMemory();
      expect(JSON.stringify(plain)).not.toContain('zqsecret');
      expect(plain.relations!.some((r) => r.to === 'key' || r.from === 'key')).toBe(false);
      const auth = await m.exportMemory({ cores: ['auth-jwt'] });
      expect(new Set(auth.entries!.map((e) => e.core_id))).toEqual(new Set(['auth-jwt']));
      await writeFile(join(dir, 'auth.yaml'), serializeMemoryDocument(auth, 'yaml'));
    });
    await withEngine(join(dir, 'b'), async (m) => {
      const report = await m.ingest(join(dir, 'auth.yaml'));
      expect(report.entries.added).toBeGreaterThan(5);
      expect((await m.stats()).cores).toEqual({ 'auth-jwt': report.entries.added });
    });
  });
});
