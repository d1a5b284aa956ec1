import { describe, expect, it } from 'vitest';
import type { MemoryEntry } from '../src/model/types.js';
import { EntriesTable } from '../src/store/lance/entriesTable.js';
import { tempDir } from './helpers.js';

const DAY = 86_400_000;
const now = new Date('2026-06-01T00:00:00Z');
const at = (days: number) => new Date(now.getTime() + days * DAY);

function stored(id: string, validFrom: Date | null, validTo: Date | null) {
  const entry: MemoryEntry = {
    id, coreId: 'c', title: `entry ${id}`, aliases: [], content: 'text', entryType: 'fact', confidence: 'high', importance: 5, tags: [],
    source: null, sensitivity: 'public', createdAt: now, updatedAt: now, validFrom, validTo, contentHash: id,
  };
  return { entry, vector: Float32Array.from([1, 0, 0, 0]), vectorSmall: Float32Array.from([1, 0]) };
}

describe('entries table: validity filter', () => {
  it('keeps exactly the entries valid at the asked time, with many or few bounded entries, across writes', async () => {
    const table = await EntriesTable.open(await tempDir(), 4, 2);
    try {
      await table.upsert([
        ...Array.from({ length: 300 }, (_, i) => stored(`expired ${i}`, null, at(-1))),
        ...Array.from({ length: 300 }, (_, i) => stored(`future ${i}`, at(1), null)),
        stored("it's current \\ ü", null, null),
        stored('bounded but valid', at(-5), at(5)),
        stored('ends exactly now', at(-5), now), // valid_to is exclusive
      ]);
      const validIds = async (t: Date) => (await table.read({ validAt: t })).map((s) => s.entry.id).sort();
      // 600 excluded: the range test in SQL
      expect(await validIds(now)).toEqual(['bounded but valid', "it's current \\ ü"]);
      expect(await table.count({ validAt: now })).toBe(2);
      expect((await table.nearest(Float32Array.from([1, 0, 0, 0]), { filter: { validAt: now }, limit: 10 })).map((h) => h.entry.id).sort()).toEqual(['bounded but valid', "it's current \\ ü"]);
      // few excluded: the ids list
      await table.delete(Array.from({ length: 300 }, (_, i) => `expired ${i}`));
      await table.delete(Array.from({ length: 295 }, (_, i) => `future ${i}`));
      expect(await validIds(now)).toEqual(['bounded but valid', "it's current \\ ü"]);
      expect(await validIds(at(2))).toEqual(['bounded but valid', 'future 295', 'future 296', 'future 297', 'future 298', 'future 299', "it's current \\ ü"]);
      expect(await validIds(at(-2))).toEqual(['bounded but valid', 'ends exactly now', "it's current \\ ü"]);
      // a write that moves a bound is seen by the next read
      await table.upsert([stored("it's current \\ ü", null, at(-1))]);
      expect(await validIds(now)).toEqual(['bounded but valid']);
      expect((await table.nearest(Float32Array.from([1, 0, 0, 0]), { filter: { validAt: now }, limit: 10 })).map((h) => h.entry.id)).toEqual(['bounded but valid']);
    } finally {
      table.close();
    }
  });
});

describe('entries table: upsert', () => {
  it('writes more rows than one merge takes, and replaces them by id', async () => {
    const table = await EntriesTable.open(await tempDir(), 4, 2);
    try {
      const rows = Array.from({ length: 12_345 }, (_, i) => stored(`e${i}`, null, null));
      await table.upsert(rows);
      expect(await table.count()).toBe(12_345);
      rows[12_000]!.entry.title = 'changed past the first merge';
      await table.upsert(rows);
      expect(await table.count()).toBe(12_345);
      expect((await table.read({ ids: ['e12000'] }))[0]?.entry.title).toBe('changed past the first merge');
    } finally {
      table.close();
    }
  });

  it('appends the rows it is told are new and merges the others in the same write', async () => {
    const table = await EntriesTable.open(await tempDir(), 4, 2);
    try {
      await table.upsert([stored('a', null, null), stored('b', null, null)]);
      const a = stored('a', null, null);
      a.entry.title = 'a, changed';
      await table.upsert([a, stored("new 'c' \\ ü", null, null)], { newIds: new Set(["new 'c' \\ ü"]) });
      expect((await table.read({})).map((r) => `${r.entry.id}: ${r.entry.title}`).sort()).toEqual(['a: a, changed', 'b: entry b', "new 'c' \\ ü: entry new 'c' \\ ü"]);
    } finally {
      table.close();
    }
  });
});
