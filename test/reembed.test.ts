/**
 * Moving a folder to another embedding model: built beside the old one while it keeps answering
 * and taking writes, swapped in with every acknowledged write, and resumed after an interruption
 * without embedding again what was already done.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Embedder, Sensitivity } from '../src/index.js';
import { EXAMPLE_FILE, tempDir, withEngine, wordHashEmbedder } from './helpers.js';

const ALL: Sensitivity[] = ['public', 'internal', 'secret'];

/** A second model: the same words hashed into another number of dimensions, under another id. */
function otherModel(dimensions = 48): Embedder & { calls: number } {
  return Object.assign(wordHashEmbedder(dimensions), { id: `test:other-${dimensions}` });
}

describe('reembed', () => {
  it('moves to a new model while reads and writes go on, losing nothing', async () => {
    const dir = join(await tempDir(), 'db');
    await withEngine(dir, async (m) => {
      await m.ingest(EXAMPLE_FILE);
      await m.upsert([{ id: 'key', core_id: 'ops', title: 'Signing key', content: 'In the vault.', sensitivity: 'secret', pinned: true }]);
      const before = await m.exportMemory({ sensitivity: ALL });
      const next = otherModel();
      let done = false;
      const written: string[] = [];
      const traffic = (async () => {
        for (let i = 0; !done; i++) {
          written.push((await m.remember({ title: `During ${i}`, content: `zqduring${i} refresh token note`, core: 'notes' })).id);
          expect((await m.hybridSearch('refresh token rotation')).length).toBeGreaterThan(0);
        }
      })();
      // Reads alone, as fast as they go: none may meet the folder mid-swap.
      let reads = 0;
      const readFailures: string[] = [];
      const reader = (async () => {
        while (!done) {
          try {
            await m.keywordSearch('refresh token');
            await m.getEntries(['auth-refresh-rotation']);
            reads++;
          } catch (e) {
            readFailures.push((e as Error).message);
          }
        }
      })();
      const progress: string[] = [];
      const report = await m.reembed(next, { onProgress: (p) => progress.push(p) });
      done = true;
      await traffic;
      await reader;
      expect(readFailures).toEqual([]);
      expect(reads).toBeGreaterThan(0);
      expect(report).toMatchObject({ from: 'test:word-hash-64', to: 'test:other-48' });
      expect(progress.some((p) => p.startsWith('re-embedding entries'))).toBe(true);
      expect(m.embedder.id).toBe('test:other-48');
      const stats = await m.stats();
      expect(stats.embedder).toEqual({ id: 'test:other-48', dimensions: 48 });
      // Every write acknowledged during the move is there, and the rest as it was.
      expect((await m.getEntries(written)).map((e) => e.id)).toEqual(written);
      const after = await m.exportMemory({ sensitivity: ALL });
      expect(after.entries!.filter((e) => e.core_id !== 'notes')).toEqual(before.entries);
      expect(after.relations).toEqual(before.relations);
      expect(after.golden_paths).toEqual(before.golden_paths);
      expect((await m.semanticSearch('zqduring0 refresh token note', { cores: ['notes'], limit: 1 }))[0]!.entry.title).toBe('During 0');
      expect((await readdir(dirname(dir))).filter((f) => f !== 'db')).toEqual([]); // nothing left beside it
    });
    // The folder now opens with the new model only.
    await expect(withEngine(dir, async () => undefined)).rejects.toThrow(/built with embedder test:other-48/);
    await withEngine(dir, async (m) => expect((await m.stats()).entries).toBeGreaterThan(45), { embedder: otherModel() });
  });

  it('resumes an interrupted move without embedding again what it had done', async () => {
    const dir = join(await tempDir(), 'db');
    await withEngine(dir, async (m) => {
      await m.ingest(EXAMPLE_FILE);
      await m.upsert(
        Array.from({ length: 556 }, (_, i) => ({ id: `n${i}`, core_id: 'notes', title: `Note ${i}`, content: `Resumable note ${i}.` })),
      );
      // The model goes away after its first slice (256 texts): the next call fails.
      const failing = otherModel();
      const embed = failing.embed.bind(failing);
      failing.embed = async (texts, signal) => {
        if (failing.calls >= 256) throw new Error('the embedding server went away');
        return embed(texts, signal);
      };
      await expect(m.reembed(failing)).rejects.toThrow(/the embedding server went away/);
      expect(failing.calls).toBe(256);
      // The old folder still answers with the old model; the new one waits beside it.
      expect(m.embedder.id).toBe('test:word-hash-64');
      expect((await m.keywordSearch('refresh')).length).toBeGreaterThan(0);
      expect((await readdir(dirname(dir))).some((f) => f.includes('reembed-test_other-48'))).toBe(true);

      const fresh = otherModel();
      const report = await m.reembed(fresh);
      expect(report).toMatchObject({ to: 'test:other-48', entries: 600 });
      // The first slice came from the new folder's cache; only the rest went to the model.
      expect(fresh.calls).toBe(600 - 256);
      expect(report.embedded).toBe(600 - 256);
      expect((await m.stats()).entries).toBe(600);
      expect(existsSync(dir)).toBe(true);
      await expect(m.reembed(otherModel())).rejects.toThrow(/already uses test:other-48/);
    });
  });
});
