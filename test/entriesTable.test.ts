import { describe, expect, it } from 'vitest';
import { CONFIDENCE_LEVELS, SENSITIVITY_LEVELS, type MemoryEntry } from '../src/model/types.js';
import type { EntryFilter } from '../src/model/entryFilter.js';
import { EntriesTable } from '../src/store/lance/entriesTable.js';
import { EntryColumns } from '../src/store/resident/entryColumns.js';
import { cosineSimilarity } from '../src/embed/embedder.js';
import { tempDir } from './helpers.js';

const DAY = 86_400_000;
const now = new Date('2026-06-01T00:00:00Z');
const at = (days: number) => new Date(now.getTime() + days * DAY);

function stored(id: string, validFrom: Date | null, validTo: Date | null, createdAt = at(-30)) {
  const entry: MemoryEntry = {
    id,
    coreId: 'c',
    title: `entry ${id}`,
    aliases: [],
    content: 'text',
    entryType: 'fact',
    confidence: 'high',
    importance: 5,
    tags: [],
    source: null,
    sensitivity: 'public',
    createdAt,
    updatedAt: createdAt,
    validFrom,
    validTo,
    contentHash: id,
    pinned: false,
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
      expect(
        (await table.nearest(Float32Array.from([1, 0, 0, 0]), { filter: { validAt: now }, limit: 10 })).map((h) => h.id).sort(),
      ).toEqual(['bounded but valid', "it's current \\ ü"]);
      // few excluded: the ids list
      await table.delete(Array.from({ length: 300 }, (_, i) => `expired ${i}`));
      await table.delete(Array.from({ length: 295 }, (_, i) => `future ${i}`));
      expect(await validIds(now)).toEqual(['bounded but valid', "it's current \\ ü"]);
      expect(await validIds(at(2))).toEqual([
        'bounded but valid',
        'future 295',
        'future 296',
        'future 297',
        'future 298',
        'future 299',
        "it's current \\ ü",
      ]);
      expect(await validIds(at(-2))).toEqual(['bounded but valid', 'ends exactly now', "it's current \\ ü"]);
      // an entry takes effect when it was created, unless it says when (valid_from, even earlier)
      await table.upsert([stored('written tomorrow', null, null, at(1)), stored('written tomorrow about last week', at(-7), null, at(1))]);
      expect(await validIds(now)).toEqual(['bounded but valid', "it's current \\ ü", 'written tomorrow about last week']);
      expect(await validIds(at(2))).toEqual([
        'bounded but valid',
        'future 295',
        'future 296',
        'future 297',
        'future 298',
        'future 299',
        "it's current \\ ü",
        'written tomorrow',
        'written tomorrow about last week',
      ]);
      await table.delete(['written tomorrow', 'written tomorrow about last week']);
      // a write that moves a bound is seen by the next read
      await table.upsert([stored("it's current \\ ü", null, at(-1))]);
      expect(await validIds(now)).toEqual(['bounded but valid']);
      expect((await table.nearest(Float32Array.from([1, 0, 0, 0]), { filter: { validAt: now }, limit: 10 })).map((h) => h.id)).toEqual([
        'bounded but valid',
      ]);
    } finally {
      table.close();
    }
  });
});

describe('entries table: upsert', () => {
  it('writes every field as given and reads it back, strings of any script, empty and absent values included', async () => {
    const table = await EntriesTable.open(await tempDir(), 4, 2);
    try {
      const texts = [
        '',
        'plain',
        'quote \' and " and \\ back',
        'line\nbreak\r\n\ttab',
        'ünïcödé é (NFD: e\u0301)',
        '漢字とかな',
        'emoji 🧠🔥 and a ZWJ 👩‍💻',
        '\u0000 nul inside',
      ];
      const rows = texts.map((t, i) => {
        const s = stored(`t${i}-${t}`, i % 2 ? at(-i) : null, i % 3 ? null : at(i + 1));
        Object.assign(s.entry, {
          coreId: `core ${t}`,
          title: t,
          content: `${t} ${t}`,
          aliases: i % 2 ? [] : [t, `${t}!`, ''],
          tags: i % 3 ? [t] : [],
          source: i % 2 ? null : `file ${t}`,
          entryType: t || 'fact',
          contentHash: `h${i}`,
        });
        return s;
      });
      await table.upsert(rows.slice(0, 4), { newIds: new Set(rows.slice(0, 4).map((r) => r.entry.id)) });
      await table.upsert(rows.slice(4)); // merged, not appended
      const read = new Map((await table.read({}, { withVectors: true })).map((r) => [r.entry.id, r]));
      for (const r of rows) {
        expect(read.get(r.entry.id)?.entry, r.entry.id).toEqual(r.entry);
        expect(Array.from(read.get(r.entry.id)!.vector!)).toEqual(Array.from(r.vector));
      }
    } finally {
      table.close();
    }
  });

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
      expect((await table.read({})).map((r) => `${r.entry.id}: ${r.entry.title}`).sort()).toEqual([
        'a: a, changed',
        'b: entry b',
        "new 'c' \\ ü: entry new 'c' \\ ü",
      ]);
    } finally {
      table.close();
    }
  });
});

describe('entry columns in memory', () => {
  it("filter exactly as LanceDB does on the same rows, hostile values included, and give each row's cosine from 8 bits", async () => {
    const table = await EntriesTable.open(await tempDir(), 4, 2);
    try {
      const cores = ["co'r", 'c\\d', 'ядро-🔑', 'plain'];
      const types = ['lesson', "it's", 'fact'];
      const tags = ["t'1", 't\\2', 'ü', 'x'];
      const rows = Array.from({ length: 120 }, (_, i) => {
        const created = i % 9 === 0 ? at(1) : at(-30 + (i % 3));
        const s = stored(
          `e${i} '\\ ü`,
          i % 7 === 0 ? at(1) : i % 5 === 0 ? at(-3) : null,
          i % 6 === 0 ? at(-1) : i % 4 === 0 ? now : null,
          created,
        );
        Object.assign(s.entry, {
          coreId: cores[i % 4]!,
          entryType: types[i % 3]!,
          confidence: CONFIDENCE_LEVELS[i % 3]!,
          sensitivity: SENSITIVITY_LEVELS[(i >> 2) % 3]!,
          tags: tags.filter((_, k) => (i >> k) % 2 === 1),
          importance: (i % 10) + 1,
          source: i % 2 ? null : `src '\\ ${i % 4} ü`,
        });
        s.vector = Float32Array.from([i + 1, -i / 2, 0.25, (i % 3) - 1]);
        return s;
      });
      await table.upsert(rows);
      const { rows: columnRows, vectors } = await table.columnRows(4);
      const columns = new EntryColumns(4, columnRows, vectors);
      expect(columns.size).toBe(120);
      const v37 = columns.vector("e37 '\\ ü")!;
      [38, -18.5, 0.25, 0].forEach((x, d) => expect(v37[d]).toBeCloseTo(x, 0));
      const query = Float32Array.from([0.2, 0.9, -0.3, 0.1]);
      const similarities = columns.similarities([...rows.map((r) => r.entry.id), 'absent'], query);
      rows.forEach((r, i) => expect(similarities[i]).toBeCloseTo(cosineSimilarity(query, r.vector), 2));
      expect(similarities[rows.length]).toBeNaN();
      expect(columns.featuresIfPassing({})("e37 '\\ ü")).toEqual({
        coreId: 'c\\d',
        source: null,
        confidence: CONFIDENCE_LEVELS[37 % 3],
        importance: 8,
        updatedAt: at(-29),
      });
      expect(columns.featuresIfPassing({})("e38 '\\ ü")).toMatchObject({ coreId: 'ядро-🔑', source: "src '\\ 2 ü" });
      const filters: EntryFilter[] = [
        {},
        { cores: [cores[0]!, cores[2]!] },
        { entryTypes: ["it's"] },
        { minConfidence: 'medium' },
        { minConfidence: 'high', cores: ['plain'] },
        { cores: ['nowhere', 'plain'], entryTypes: ['nothing', 'fact'] },
        { cores: ['nowhere'] },
        { tags: ["t'1"] },
        { tags: ['t\\2', 'ü'] },
        { tags: [] },
        { sensitivity: ['public', 'internal'] },
        { validAt: now },
        { validAt: at(2) },
        { ids: ["e3 '\\ ü", "e4 '\\ ü", 'absent'], sensitivity: ['public'] },
        { notIds: ["e1 '\\ ü"], validAt: at(-2), tags: ['x'] },
        { validAt: at(-29) },
        { validAt: at(-40) },
        { minImportance: 6 },
        { minImportance: 10, cores: ['plain'] },
        { createdAfter: at(-29) },
        { createdBefore: at(-29) },
        { createdAfter: at(-30), createdBefore: at(-28), validAt: now },
      ];
      for (const filter of filters) {
        const inMemory = rows
          .map((r) => r.entry.id)
          .filter(columns.matcher(filter))
          .sort();
        expect(inMemory, JSON.stringify(filter)).toEqual((await table.read(filter)).map((r) => r.entry.id).sort());
      }
      expect(columns.matcher({})('absent')).toBe(false);
    } finally {
      table.close();
    }
  });
});
