import * as lancedb from '@lancedb/lancedb';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { tempDir, withEngine, wordHashEmbedder } from './helpers.js';

describe('core memory: the static layer of a core', () => {
  it('puts pinned entries first, then the most important, within the token budget', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        core_id: 'web',
        entries: [
          { id: 'trivia', title: 'The logo is teal', content: 'Brand colour.', importance: 2 },
          { id: 'vital', title: 'Never log tokens', content: 'Tokens in logs leak; the logger redacts them.', importance: 10 },
          { id: 'pinned', title: 'Run pnpm, not npm', content: 'npm breaks the workspace links.', importance: 3, pinned: true },
          { id: 'retired', title: 'Use Webpack', content: 'Old build.', importance: 9, valid_to: '2020-01-01' },
        ],
      });
      await m.remember({ title: 'Other core', content: 'Not in web.', core: 'api', pinned: true });
      const memory = await m.coreMemory('web');
      expect(memory.entries.map((e) => e.id)).toEqual(['pinned', 'vital', 'trivia']);
      expect(memory.entries[0]!.pinned).toBe(true);
      expect(memory.text).toMatch(/^<memory>\n.*\n- Run pnpm, not npm[\s\S]*- Never log tokens[\s\S]*- The logo is teal[\s\S]*<\/memory>$/);
      const tight = await m.coreMemory('web', { maxTokens: 60 });
      expect(tight.text).toContain('Run pnpm, not npm');
      expect(tight.text).not.toContain('The logo is teal');
      expect(tight.text).toMatch(/more items? left out for the token budget/);
      await expect(m.coreMemory('web', { maxTokens: 0 })).rejects.toThrow(/maxTokens must be an integer from 1/);
      await expect(m.coreMemory('web', { max: 5 } as never)).rejects.toThrow(/coreMemory/);
      // Un-pinning is a change like any other.
      await m.upsert([
        { id: 'pinned', core_id: 'web', title: 'Run pnpm, not npm', content: 'npm breaks the workspace links.', importance: 3 },
      ]);
      expect((await m.coreMemory('web')).entries.map((e) => e.id)).toEqual(['vital', 'pinned', 'trivia']);
    });
  });

  it('opens a table made before `pinned` existed, adding the column as false', async () => {
    const dir = await tempDir();
    const options = { path: dir, embedder: wordHashEmbedder(), env: {} };
    await withEngine(dir, async (m) =>
      m.upsert([{ id: 'old', core_id: 'c', title: 'An old entry', content: 'Written by an earlier memcore.' }]),
    );
    const table = await (await lancedb.connect(join(dir, 'lance'))).openTable('entries');
    await table.dropColumns(['pinned']);
    expect((await table.schema()).fields.map((f) => f.name)).not.toContain('pinned');
    table.close();
    const m = await openMemory(options);
    try {
      expect((await m.getEntries(['old']))[0]).toMatchObject({ id: 'old', pinned: false });
      await m.upsert([{ id: 'new', core_id: 'c', title: 'A new entry', content: 'Pinned.', pinned: true }]);
      expect((await m.coreMemory('c')).entries.map((e) => [e.id, e.pinned])).toEqual([
        ['new', true],
        ['old', false],
      ]);
    } finally {
      await m.close();
    }
  });
});
