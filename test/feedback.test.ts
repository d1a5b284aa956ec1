import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMemory, serializeMemoryDocument } from '../src/index.js';
import { DEFAULT_WEIGHTS } from '../src/retrieve/score.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';

const TASK = 'rotate refresh tokens on every use';

describe('feedback: ratings move ranking through effectiveness', () => {
  it('keeps a moving average per entry that the scorer folds in, exactly as documented', async () => {
    const dir = join(await tempDir(), 'db');
    let m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const before = await m.buildTaskContext(TASK, { maxEntries: 12 });
      expect(before.bundleId).toMatch(/^b_[0-9a-f]{16}$/);
      expect(before.entries.every((e) => e.why.every((r) => r.kind !== 'feedback'))).toBe(true); // never rated: neutral
      const target = before.entries[0]!;
      const scoreOf = (b: typeof before) => b.entries.find((e) => e.entry.id === target.entry.id)!;

      let r = await m.feedback({ entryId: target.entry.id, useful: false });
      for (let i = 0; i < 4; i++) r = await m.feedback({ entryId: target.entry.id, useful: false });
      // α 0.3 from neutral: 0.5 · 0.7^5
      expect(r).toMatchObject({ recorded: true, signals: 5 });
      expect(r.effectiveness).toBeCloseTo(0.5 * 0.7 ** 5, 6);
      const after = await m.buildTaskContext(TASK, { maxEntries: 12 });
      expect(after.bundleId).not.toBe(before.bundleId); // a rating is a write: the cached bundle is gone
      const rated = scoreOf(after);
      expect(rated.score).toBeCloseTo(target.score - 0.2 * (0.5 - 0.5 * 0.7 ** 5), 6);
      expect(rated.why).toContainEqual({ kind: 'feedback', effectiveness: expect.closeTo(0.5 * 0.7 ** 5, 6), signals: 5, of: 'entry' });
      // an entry of the same core never rated (and of another source) moves by a quarter of that
      const sibling = before.entries.find(
        (e) => e.entry.id !== target.entry.id && e.entry.coreId === target.entry.coreId && e.entry.source !== target.entry.source,
      )!;
      const siblingAfter = after.entries.find((e) => e.entry.id === sibling.entry.id)!;
      expect(siblingAfter.score).toBeCloseTo(sibling.score - 0.25 * 0.2 * (0.5 - 0.5 * 0.7 ** 5), 6);
      expect(siblingAfter.why).toContainEqual({
        kind: 'feedback',
        effectiveness: expect.closeTo(0.5 * 0.7 ** 5, 6),
        signals: 5,
        of: 'core',
      });
      expect(after.entries.indexOf(rated)).toBeGreaterThanOrEqual(0);

      // from a bundle, the same entry counts once
      const once = await m.feedback({ entryId: target.entry.id, useful: true, bundleId: after.bundleId! });
      expect(once.effectiveness).toBeCloseTo(0.5 * 0.7 ** 5 * 0.7 + 0.3, 6);
      expect(await m.feedback({ entryId: target.entry.id, useful: true, bundleId: after.bundleId! })).toMatchObject({
        recorded: false,
        signals: 6,
      });
      for (let i = 0; i < 6; i++) await m.feedback({ entryId: target.entry.id, useful: true });
      expect(scoreOf(await m.buildTaskContext(TASK, { maxEntries: 12 })).score).toBeGreaterThan(target.score); // recovered, and more

      await expect(m.feedback({ entryId: 'no-such-entry', useful: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(m.feedback({ entryId: target.entry.id, useful: 2 })).rejects.toThrow(
        /useful must be true, false or a number from 0 to 1/,
      );
      await expect(m.feedback({ entryId: target.entry.id, useful: true, bundleId: 'x' })).rejects.toThrow(/bundleId must be/);
      const report = await m.effectivenessReport();
      expect(report.entries).toEqual([{ id: target.entry.id, value: expect.any(Number), signals: 12 }]);
      expect(report.cores.map((c) => c.id)).toEqual([target.entry.coreId]);
    } finally {
      await m.close();
    }
    // durable: the ratings are in the folder
    m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await m.effectivenessReport()).entries[0]!.signals).toBe(12);
    } finally {
      await m.close();
    }
  });

  it('counts a rating most for the task it was given for and tasks like it, elsewhere at most the global amount', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const task = 'change the error response format for validation errors';
      const similar = 'change the response format of our validation errors';
      const unrelated = 'add a NOT NULL column to the orders table without downtime';
      // the whole ranking, so that the rated entry can be followed wherever it goes
      const all = { maxEntries: 50, threshold: -1, evidenceCut: false, relevanceFloor: false } as const;
      const ranked = async (t: string) => (await m.buildTaskContext(t, all)).entries;
      const before = await ranked(task);
      const target = before[0]!.entry.id;
      expect((await ranked(similar)).slice(0, 3).map((e) => e.entry.id)).toContain(target);
      const unrelatedBefore = (await ranked(unrelated)).find((e) => e.entry.id === target)!.score;

      for (let i = 0; i < 5; i++) {
        const bundle = await m.buildTaskContext(task); // a rating is a write: each time a new bundle
        expect(bundle.entries.map((e) => e.entry.id)).toContain(target);
        expect((await m.feedback({ entryId: target, useful: false, bundleId: bundle.bundleId! })).recorded).toBe(true);
      }
      // out of the first three for the task and a task like it
      expect((await ranked(task)).slice(0, 3).map((e) => e.entry.id)).not.toContain(target);
      expect((await ranked(similar)).slice(0, 3).map((e) => e.entry.id)).not.toContain(target);
      // elsewhere: moved by at most the global amount, effectiveness weight × 0.5
      const unrelatedAfter = (await ranked(unrelated)).find((e) => e.entry.id === target)!.score;
      expect(unrelatedBefore - unrelatedAfter).toBeGreaterThan(0);
      expect(unrelatedBefore - unrelatedAfter).toBeLessThanOrEqual(DEFAULT_WEIGHTS.effectiveness * 0.5 + 1e-9);

      // the task can be given with the rating; it must be a task
      expect((await m.feedback({ entryId: target, useful: true, task: unrelated })).recorded).toBe(true);
      await expect(m.feedback({ entryId: target, useful: true, task: ' ' })).rejects.toThrow(/task must be a non-empty string/);
    } finally {
      await m.close();
    }
  });

  it('logs a task as a gap once every entry of its bundle was rated not useful', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const bundle = await m.buildTaskContext(TASK, { maxEntries: 2 });
      const [first, second] = bundle.entries;
      await m.feedback({ entryId: first!.entry.id, useful: false, bundleId: bundle.bundleId! });
      expect(await m.gaps()).toEqual([]); // one of two: not yet
      await m.buildTaskContext(TASK, { maxEntries: 2 }); // a later bundle for the task leaves the first one's ratings be
      await m.feedback({ entryId: second!.entry.id, useful: 0.2, bundleId: bundle.bundleId! });
      expect((await m.gaps()).map((g) => [g.task, g.tasks.map((t) => t.why)])).toEqual([[TASK, ['rated-not-useful']]]);
    } finally {
      await m.close();
    }
  });

  it('exports ratings with the memory, and an import counts each once', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    const copy = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const bundle = await m.buildTaskContext(TASK, { maxEntries: 3 });
      await m.feedback({ entryId: bundle.entries[0]!.entry.id, useful: false, bundleId: bundle.bundleId!, note: 'outdated' });
      await m.feedback({ entryId: bundle.entries[1]!.entry.id, useful: 0.75 });
      const doc = await m.exportMemory();
      expect(doc.feedback).toHaveLength(2);
      expect(doc.feedback![0]).toMatchObject({
        entry_id: bundle.entries[0]!.entry.id,
        useful: 0,
        bundle_id: bundle.bundleId,
        note: 'outdated',
      });
      for (const format of ['jsonl', 'yaml'] as const) {
        const file = join(await tempDir(), `memory.${format}`);
        await writeFile(file, serializeMemoryDocument(doc, format));
        const r = await copy.ingest(file);
        expect(r.feedback).toBe(format === 'jsonl' ? 2 : 0); // the second import finds both keys held
      }
      const [mine, theirs] = [await m.effectivenessReport(), await copy.effectivenessReport()];
      expect(theirs.entries.map((e) => [e.id, e.signals])).toEqual(mine.entries.map((e) => [e.id, e.signals]));
      theirs.entries.forEach((e, i) => expect(e.value).toBeCloseTo(mine.entries[i]!.value, 6));
      // a rating of an entry neither the file nor the store holds is refused, naming the record
      await expect(copy.ingestDocument({ feedback: [{ entry_id: 'nowhere', useful: 1 }] })).rejects.toThrow(
        /feedback\[0\].*unknown entry id "nowhere"/,
      );
    } finally {
      await m.close();
      await copy.close();
    }
  });

  it('with weight 0, or no ratings, ranks exactly as without feedback', async () => {
    const m = await openMemory({ path: join(await tempDir(), 'db'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      const plain = await m.buildTaskContext(TASK, { maxEntries: 12 });
      // the same order and scores (up to recency, which runs on the clock between the calls)
      const same = (b: typeof plain) => {
        expect(b.entries.map((e) => e.entry.id)).toEqual(plain.entries.map((e) => e.entry.id));
        b.entries.forEach((e, i) => expect(e.score).toBeCloseTo(plain.entries[i]!.score, 8));
      };
      same(await m.buildTaskContext(TASK, { maxEntries: 12, weights: { effectiveness: 0 } }));
      await m.feedback({ entryId: plain.entries[0]!.entry.id, useful: false });
      same(await m.buildTaskContext(TASK, { maxEntries: 12, weights: { effectiveness: 0 } }));
    } finally {
      await m.close();
    }
  });
});
