import { describe, expect, it } from 'vitest';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { openMemory } from '../src/index.js';
import { readSnapshot, writeSnapshot, type LoadedSnapshot } from '../src/store/snapshot/snapshotFile.js';
import { KEYWORD_LATER_SECTIONS, KeywordIndex } from '../src/store/resident/keywordIndex.js';
import { syntheticEntries, tempDir, wordHashEmbedder } from './helpers.js';

/** A seeded generator: every run sees the same "random" data. */
function random(seed: number): () => number {
  return () => (seed = (seed * 48271) % 2147483647) / 2147483647;
}

/** Flips one byte of section `name` of the snapshot file at `path`. */
async function flipByteOf(path: string, name: string, at: number): Promise<void> {
  const bytes = await readFile(path);
  const headerLength = bytes.readUInt32LE(8);
  const header = JSON.parse(bytes.subarray(16, 16 + headerLength).toString('utf8')) as { arrays: { name: string; offset: number }[] };
  const section = header.arrays.find((a) => a.name === name)!;
  bytes[Math.ceil((16 + headerLength) / 8) * 8 + section.offset + at]! ^= 0xff;
  await writeFile(path, bytes);
}

describe('snapshot sections read where they lie', () => {
  it('read any range as written, from the file as it was when opened; checked in chunks; given up on release', async () => {
    const rand = random(3);
    const words = Uint32Array.from({ length: 5_000 }, () => Math.floor(rand() * 2 ** 32));
    const bytes = Int8Array.from({ length: 3_001 }, () => Math.floor(rand() * 256) - 128);
    const path = join(await tempDir(), 'k.snap');
    const key = { kind: 'keywords', fingerprint: 'test/1' };
    await writeSnapshot(path, { ...key, generation: 4 }, { arrays: { head: new Uint8Array([1, 2, 3]), words, bytes }, values: { n: 1 } });
    const read = (await readSnapshot(path, key, { lazy: ['words', 'bytes'] })) as LoadedSnapshot;
    expect(Object.keys(read.content.arrays)).toEqual(['head']);
    const inFile = read.content.later.positioned('words')!;
    const bytesInFile = read.content.later.positioned('bytes')!;
    expect(read.content.later.positioned('head')).toBeUndefined(); // read now, not later
    expect([inFile.length, bytesInFile.length]).toEqual([5_000, 3_001]);
    for (let i = 0; i < 200; i++) {
      const from = Math.floor(rand() * 5_000);
      const into = new Uint32Array(Math.floor(rand() * (5_000 - from)));
      inFile.readInto(into, from);
      expect(into).toEqual(words.subarray(from, from + into.length));
      const at = Math.floor(rand() * 3_000);
      const row = new Int8Array(Math.min(64, 3_001 - at));
      bytesInFile.readInto(row, at);
      expect(row).toEqual(bytes.subarray(at, at + row.length));
    }
    expect(() => inFile.readInto(new Uint32Array(2), 4_999)).toThrow(RangeError);
    await expect(inFile.verify()).resolves.toBeUndefined();
    // A snapshot written since replaces the name; the open file still reads as it was.
    await writeSnapshot(
      path,
      { ...key, generation: 5 },
      { arrays: { head: new Uint8Array(3), words: new Uint32Array(5_000), bytes }, values: {} },
    );
    const again = new Uint32Array(10);
    inFile.readInto(again, 100);
    expect(again).toEqual(words.subarray(100, 110));
    await expect(inFile.verify()).resolves.toBeUndefined();
    // Reading whole still works beside it, and the file stays open for the positioned ones.
    expect(await read.content.later.read('bytes')).toEqual(bytes);
    inFile.readInto(again, 0);
    expect(again).toEqual(words.subarray(0, 10));
    read.content.later.release();
    expect(() => inFile.readInto(again, 0)).toThrow('was released');

    // One byte flipped: the rest loads, and the check of the section says so.
    await flipByteOf(path, 'words', 4 * 1234 + 2);
    const damaged = (await readSnapshot(path, key, { lazy: ['words'] })) as LoadedSnapshot;
    await expect(damaged.content.later.positioned('words')!.verify()).rejects.toThrow('is damaged (the checksum of words does not match)');
    damaged.content.later.release();
  });

  it('leave no descriptor open once dropped without a release (a finaliser closes it)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const path = join(await tempDir(), 'd.snap');
    const key = { kind: 'keywords', fingerprint: 'test/1' };
    await writeSnapshot(path, { ...key, generation: 1 }, { arrays: { words: new Uint32Array(64).fill(7) }, values: {} });
    const descriptors = async () => (await readdir('/proc/self/fd')).length;
    const before = await descriptors();
    await (async () => {
      const read = (await readSnapshot(path, key, { lazy: ['words'] })) as LoadedSnapshot;
      const into = new Uint32Array(4);
      read.content.later.positioned('words')!.readInto(into, 10);
      expect([...into]).toEqual([7, 7, 7, 7]);
    })();
    expect(await descriptors()).toBe(before + 1);
    // dropped without release: collected, then closed (polled: when the collector runs is not ours to say)
    for (let i = 0; i < 200 && (await descriptors()) > before; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await descriptors()).toBe(before);
  });

  it('a keyword index whose documents stay in the file answers as the index it was written from, before and after writes', async () => {
    const rand = random(17);
    const vocabulary = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}x`);
    // Zipf-like: a few common words, many rare ones.
    const text = () =>
      Array.from({ length: 2 + Math.floor(rand() * 30) }, () => vocabulary[Math.floor(rand() ** 3 * vocabulary.length)]).join(' ');
    const index = new KeywordIndex();
    for (let round = 0; round < 20; round++) {
      index.upsert(
        Array.from({ length: 150 }, () => ({ id: `d${Math.floor(rand() * 2_000)}`, text: text(), group: `g${Math.floor(rand() * 4)}` })),
      );
      index.remove(Array.from({ length: 40 }, () => `d${Math.floor(rand() * 2_000)}`));
    }
    const path = join(await tempDir(), 'keywords.snap');
    const key = { kind: 'keywords', fingerprint: 'keywords/2' };
    await writeSnapshot(path, { ...key, generation: 1 }, index.snapshot());
    const read = (await readSnapshot(path, key, { lazy: KEYWORD_LATER_SECTIONS })) as LoadedSnapshot;
    expect(Object.keys(read.content.arrays)).not.toContain('documentTerms');
    const loaded = KeywordIndex.fromSnapshot(read.content);
    const ids = [...Array.from({ length: 2_100 }, (_, i) => `d${i}`), 'absent'];
    const queries = Array.from({ length: 25 }, () =>
      text()
        .split(' ')
        .slice(0, 1 + Math.floor(rand() * 5))
        .join(' '),
    );
    const same = () => {
      for (const q of queries)
        for (const groups of [undefined, ['g1'], ['g0', 'g3'], ['none']]) {
          expect(loaded.scoreDocuments(q, ids, { groups })).toEqual(index.scoreDocuments(q, ids, { groups }));
          expect(loaded.termsMatched(q, ids, { groups })).toEqual(index.termsMatched(q, ids, { groups }));
          expect(loaded.search(q, { limit: 20, groups })).toEqual(index.search(q, { limit: 20, groups }));
        }
      for (const q of queries.slice(0, 8)) expect(loaded.holdingAll(q, 500)).toEqual(index.holdingAll(q, 500));
      expect(loaded.lengthDispersion(4)).toEqual(index.lengthDispersion(4));
    };
    same();
    // Terms are looked up by binary search over the snapshot's order; a snapshot from before it
    // held one (no termOrder) builds the map of terms, and answers alike.
    const { termOrder, ...older } = index.snapshot().arrays;
    expect(termOrder).toBeInstanceOf(Uint32Array);
    const fromOlder = KeywordIndex.fromSnapshot({ arrays: older, values: index.snapshot().values });
    for (const q of queries) {
      expect(fromOlder.search(q, { limit: 20, groups: ['g1'] })).toEqual(index.search(q, { limit: 20, groups: ['g1'] }));
      expect(fromOlder.termsMatched(q, ids)).toEqual(index.termsMatched(q, ids));
    }
    expect(await loaded.checkLaterParts()).toBeUndefined();
    // A write needs every document: it reads them whole first (Residents awaits `settled`).
    await loaded.settled();
    for (const k of [loaded, index]) {
      k.upsert([{ id: 'd3', text: 'w1x w2x w2x', group: 'g1' }]);
      k.remove(ids.slice(0, 1_200)); // past half of the postings dead: the postings are rebuilt
    }
    same();
    expect(loaded.snapshot()).toEqual(index.snapshot());
    loaded.release();
  });
});

describe('a store whose snapshots leave parts in their files', () => {
  it('answers exact search and BM25 from the files as before; a damaged part is found when quiet, let go and rebuilt', async () => {
    const dir = await tempDir();
    const task = 'cache eviction leaks memory when the disk fills up';
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    let exact: string[];
    let bundle: string[];
    try {
      await first.ingestDocument({ entries: syntheticEntries(120) }, { source: 'first' });
      exact = (await first.semanticSearch(task, { limit: 10 })).map((h) => h.entry.id);
      bundle = (await first.buildTaskContext(task, { maxEntries: 8 })).entries.map((e) => e.entry.id);
    } finally {
      await first.close();
    }
    const second = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      const { stores } = second.unsafeExposeInternals();
      expect((await second.buildTaskContext(task, { maxEntries: 8 })).entries.map((e) => e.entry.id)).toEqual(bundle);
      expect((await second.semanticSearch(task, { limit: 10 })).map((h) => h.entry.id)).toEqual(exact);
      const columns = await stores.columns();
      expect(columns.residualsHeld).toBe('file');
      // Once quiet: the entries whole, the residual values checked where they lie, not read in.
      await columns.whenQuiet();
      expect([columns.holdsEntries, columns.residualsHeld, await columns.laterPartsRead()]).toEqual([true, 'file', undefined]);
      // A write brings them in, and the store still answers as one built afresh.
      await second.ingestDocument({ entries: syntheticEntries(3).map((e) => ({ ...e, id: `new-${e.id}` })) }, { source: 'second' });
      expect((await stores.columns()).residualsHeld).toBe('memory');
      const fresh = (await second.semanticSearch(task, { limit: 10 })).map((h) => h.entry.id);
      await stores.residents.writeSnapshots({ rewrite: true });
      stores.residents.forget('columns');
      expect((await second.semanticSearch(task, { limit: 10 })).map((h) => h.entry.id)).toEqual(fresh);
    } finally {
      await second.close();
    }
    // One byte of the residual values and one of the documents' terms flipped: the first answers
    // are not held up, the check when quiet finds both, and each structure is let go and rebuilt.
    await flipByteOf(join(dir, 'snapshots', 'columns.snap'), 'full.residualValues', 5);
    await flipByteOf(join(dir, 'snapshots', 'keywords.snap'), 'documentTerms', 2);
    const third = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      const { stores } = third.unsafeExposeInternals();
      await third.buildTaskContext(task, { maxEntries: 8 });
      const [columns, keywords] = await Promise.all([stores.columns(), stores.keywords()]);
      expect(stores.residents.loads.get('keywords')?.loadedFrom).toBe('snapshot');
      await columns.whenQuiet();
      expect(await columns.laterPartsRead()).toBe('is damaged (the checksum of full.residualValues does not match)');
      expect(await keywords.checkLaterParts()).toBe('is damaged (the checksum of documentTerms does not match)');
      // let go (Residents), and built again by the next query
      for (let i = 0; i < 100 && stores.residents.heldValue('keywords') !== undefined; i++) await new Promise((r) => setTimeout(r, 20));
      expect((await third.semanticSearch(task, { limit: 10 })).length).toBe(10);
      await third.buildTaskContext(`${task} again`, { maxEntries: 8 });
      expect(stores.residents.loads.get('keywords')).toMatchObject({
        loadedFrom: 'built',
        note: expect.stringMatching(/keywords\.snap is damaged \(the checksum of documentTerms does not match\); rebuilt from the stores$/),
      });
      expect(stores.residents.loads.get('columns')).toMatchObject({ loadedFrom: 'built' });
    } finally {
      await third.close();
    }
  });
});
