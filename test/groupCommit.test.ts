/**
 * Group commit (engine/groupCommit.ts, store/writeGroup.ts): writes that arrive together share one
 * journaled commit, each caller answered after it; a bad write fails alone; a write that needs an
 * earlier one of its group runs after it; the same entry written twice at once keeps the last.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMemory, type Embedder, type MemoryEngine } from '../src/index.js';
import { readMeta } from '../src/store/meta.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

async function withMemory(fn: (m: MemoryEngine, dir: string) => Promise<void>): Promise<void> {
  const dir = join(await tempDir(), 'db');
  const m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
  try {
    await fn(m, dir);
  } finally {
    await m.close();
  }
}

const generation = async (dir: string) => (await readMeta(dir))!.generation;

describe('group commit', () => {
  it('commits writes that arrive together once, answers each, and keeps every one exactly once', async () => {
    await withMemory(async (m, dir) => {
      await m.remember({ title: 'Warm up the store', content: 'first write, alone' });
      const before = await generation(dir);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => m.remember({ title: `Group note ${i}`, content: `note ${i} of the group`, core: 'g' })),
      );
      expect(results.map((r) => r.created)).toEqual(Array(12).fill(true));
      // One commit moves the generation once: 12 writes queued in one tick share it.
      expect(await generation(dir)).toBe(before + 1);
      const listed = (await m.listEntries({ cores: ['g'], limit: 100 })).map((e) => e.id).sort();
      expect(listed).toEqual(results.map((r) => r.id).sort());
      expect(await readdir(join(dir, 'journal')).catch(() => [])).toEqual([]);
    });
  });

  it('fails only the bad write of a group, and links entries of one group that mention each other', async () => {
    await withMemory(async (m) => {
      const [a, b, bad] = await Promise.allSettled([
        m.remember({ title: 'Ledger reconciliation', content: 'Run it nightly; see Payout batching.', core: 'g' }),
        m.remember({ title: 'Payout batching', content: 'Batch payouts hourly.', core: 'g' }),
        m.remember({ title: 'Broken', content: 'names an entry nobody wrote', related: ['no-such-entry'], core: 'g' }),
      ]);
      expect(a.status).toBe('fulfilled');
      expect(b.status).toBe('fulfilled');
      expect(bad.status).toBe('rejected');
      expect(((bad as PromiseRejectedResult).reason as Error).message).toMatch(/unknown entry id "no-such-entry"/);
      const [ledger, payout] = [
        (a as PromiseFulfilledResult<{ id: string }>).value.id,
        (b as PromiseFulfilledResult<{ id: string }>).value.id,
      ];
      const details = await m.entryDetails(ledger);
      expect(details!.links.some((e) => e.type === 'RELATED' && e.from === ledger && e.to === payout)).toBe(true);
      expect((await m.listEntries({ cores: ['g'] })).map((e) => e.title).sort()).toEqual(['Ledger reconciliation', 'Payout batching']);
    });
  });

  it('runs a write that needs an earlier one of its group after it, in the order sent', async () => {
    await withMemory(async (m) => {
      const [made, linked, again] = await Promise.all([
        m.remember({ id: 'first-entry', title: 'First entry', content: 'version one', core: 'g' }),
        m.link([{ type: 'DEPENDS_ON', from: 'first-entry', to: 'first-entry-dep' }]).catch((e: Error) => e),
        m.remember({ id: 'first-entry', title: 'First entry', content: 'version two', core: 'g' }),
      ]);
      expect(made.created).toBe(true);
      // The link names an entry nobody wrote: it fails on its own turn, not for want of the first write.
      expect((linked as Error).message).toMatch(/unknown entry id "first-entry-dep"/);
      expect(again.created).toBe(false);
      const [entry] = await m.getEntries(['first-entry']);
      expect(entry!.content).toBe('version two');
      expect((await m.listEntries({ cores: ['g'] })).length).toBe(1);
      const [dep, link] = await Promise.all([
        m.remember({ id: 'first-entry-dep', title: 'Its dependency', content: 'needed first', core: 'g' }),
        m.link([{ type: 'DEPENDS_ON', from: 'first-entry', to: 'first-entry-dep' }]),
      ]);
      expect(dep.created).toBe(true);
      expect(link.relations).toBe(1);
      const edges = (await m.entryDetails('first-entry'))!.links;
      expect(edges.some((e) => e.type === 'DEPENDS_ON' && e.to === 'first-entry-dep')).toBe(true);
    });
  });

  it('keeps a delete and feedback in their place among grouped writes', async () => {
    await withMemory(async (m) => {
      const results = await Promise.allSettled([
        m.remember({ id: 'kept', title: 'Kept entry', content: 'stays', core: 'g' }),
        m.remember({ id: 'gone', title: 'Gone entry', content: 'goes', core: 'g' }),
        m.delete(['gone']),
        m.remember({ id: 'later', title: 'Later entry', content: 'after the delete', core: 'g' }),
        m.feedback({ entryId: 'kept', useful: true }),
      ]);
      expect(results.map((r) => r.status)).toEqual(Array(5).fill('fulfilled'));
      expect((await m.listEntries({ cores: ['g'] })).map((e) => e.id).sort()).toEqual(['kept', 'later']);
    });
  });

  it('embeds the texts of a group in one call of the model', async () => {
    const words = wordHashEmbedder();
    const batches: number[] = [];
    const embedder: Embedder = { ...words, embed: (texts, signal) => (batches.push(texts.length), words.embed(texts, signal)) };
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder, env: {} });
    try {
      await m.remember({ title: 'Alone first', content: 'one text, one call' });
      batches.length = 0;
      await Promise.all(Array.from({ length: 6 }, (_, i) => m.remember({ title: `Batched ${i}`, content: `text ${i}` })));
      expect(batches).toEqual([6]);
      expect((await m.listEntries({ limit: 10 })).map((e) => e.title).sort()).toEqual([
        'Alone first',
        ...Array.from({ length: 6 }, (_, i) => `Batched ${i}`),
      ]);
    } finally {
      await m.close();
    }
  });

  it('does not embed again a text the embedding cache holds, early or in a group', async () => {
    const words = wordHashEmbedder();
    const embedded: string[] = [];
    const embedder: Embedder = { ...words, embed: (texts, signal) => (embedded.push(...texts), words.embed(texts, signal)) };
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder, env: {} });
    try {
      await m.remember({ title: 'Cached lesson', content: 'its vector is in the cache' });
      expect(embedded).toHaveLength(1);
      embedded.length = 0;
      // The same text again (an agent storing a lesson twice), alone and beside a new one.
      await m.remember({ title: 'Cached lesson', content: 'its vector is in the cache' });
      await Promise.all([
        m.remember({ title: 'Cached lesson', content: 'its vector is in the cache' }),
        m.remember({ title: 'New lesson', content: 'only this one goes to the model' }),
      ]);
      expect(embedded).toEqual([expect.stringContaining('New lesson')]);
    } finally {
      await m.close();
    }
  });

  it("embeds a write's text while it waits for the write before it, and commits it once", async () => {
    const words = wordHashEmbedder();
    const order: string[] = [];
    let release!: () => void;
    const firstHeld = new Promise<void>((resolve) => (release = resolve));
    const embedder: Embedder = {
      ...words,
      embed: async (texts, signal) => {
        const first = texts.some((t) => t.includes('Held first'));
        order.push(first ? 'embed first' : `embed ${texts.length} more`);
        if (first) await firstHeld;
        return words.embed(texts, signal);
      },
    };
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder, env: {} });
    try {
      const first = m.remember({ title: 'Held first', content: 'its model call waits' }).then(() => void order.push('first answered'));
      await new Promise((r) => setTimeout(r, 20));
      // Queued while the first is under way: their texts go to the model before the first is answered.
      const more = Promise.all([
        m.remember({ title: 'Second', content: 'queued behind' }),
        m.remember({ title: 'Third', content: 'queued behind too' }),
      ]).then(() => void order.push('more answered'));
      await new Promise((r) => setTimeout(r, 20));
      release();
      await Promise.all([first, more]);
      expect(order).toEqual(['embed first', 'embed 2 more', 'first answered', 'more answered']);
      expect((await m.listEntries({ limit: 10 })).map((e) => e.title).sort()).toEqual(['Held first', 'Second', 'Third']);
    } finally {
      await m.close();
    }
  });
});
