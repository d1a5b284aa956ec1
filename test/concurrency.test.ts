/**
 * One engine serving many clients (what `memcore serve` does): writes queue one behind another,
 * reads run among them, and a reader never gets an answer from before a write that has returned.
 */
import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';

describe('reads during writes on one engine', () => {
  it('answers every read, and each write is in the next context after it returns', async () => {
    const m = await openMemory({ path: await tempDir(), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const errors: string[] = [];
      let writing = true;
      let reads = 0;
      const writes = (async () => {
        for (let i = 0; i < 15; i++) {
          const { id } = await m.remember({
            title: `Refresh note zq${i}`,
            content: `Token rotation detail zq${i}, see rotateRefreshToken.`,
            related: ['auth-refresh-rotation'],
          });
          // The same task was asked (and cached) by the readers a moment ago.
          const bundle = await m.buildTaskContext(`refresh note zq${i}`);
          if (!bundle.entries.some((e) => e.entry.id === id)) errors.push(`write ${i} missing from the next context`);
        }
        writing = false;
      })();
      const readers = Array.from({ length: 3 }, async () => {
        for (let i = 0; writing; i = (i + 1) % 15) {
          try {
            await m.buildTaskContext(`refresh note zq${i}`);
            await m.traverse('auth-refresh-rotation', { depth: 2 });
            await m.entryDetails('auth-refresh-rotation');
            await m.hybridSearch(`rotation detail zq${i}`);
            reads++;
          } catch (e) {
            errors.push((e as Error).message);
          }
        }
      });
      await Promise.all([writes, ...readers]);
      expect(errors).toEqual([]);
      expect(reads).toBeGreaterThan(0);
      expect((await m.stats()).entries).toBe(44 + 15);
      expect(
        (await m.entryDetails('auth-refresh-rotation'))!.links.filter((l) => l.type === 'RELATED' && l.to === 'auth-refresh-rotation'),
      ).toHaveLength(15);
    } finally {
      await m.close();
    }
  });
});
