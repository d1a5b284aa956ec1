import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ENTRY_EDGE_TYPES, type EntryEdgeType } from '../src/model/types.js';
import { NameIndex } from '../src/store/resident/nameIndex.js';
import { CodeLinks } from '../src/store/graph/codeLinks.js';
import { EntryAdjacency } from '../src/store/graph/entryAdjacency.js';
import { columnRow, EntryColumns } from '../src/store/resident/entryColumns.js';
import { entryRecord } from '../src/store/resident/entryRecord.js';
import { KeywordIndex } from '../src/store/resident/keywordIndex.js';
import { analyze } from '../src/text/analyze.js';
import { snapshotGeneration } from '../src/store/snapshot/snapshotFile.js';
import { syntheticEntries, tempDir, wordHashEmbedder } from './helpers.js';

describe('keyword index (BM25 in memory)', () => {
  it("analyses as LanceDB's default full-text analyzer does: lower case, ASCII folding, stop words, Porter2 stems", () => {
    expect(analyze('The Caches were EVICTED, running-retries; café_Ü 3rd')).toEqual([
      'cach',
      'were',
      'evict',
      'run',
      'retri',
      'cafe',
      'u',
      '3rd',
    ]);
    expect(analyze(`x${'a'.repeat(45)} ok`)).toEqual(['ok']);
  });

  it('ranks by BM25: a rarer term and a shorter document score higher; the limit counts only accepted documents', () => {
    const index = new KeywordIndex([
      { id: 'long', text: 'token rotation ' + 'filler words here '.repeat(20) },
      { id: 'short', text: 'token rotation' },
      { id: 'common-only', text: 'token token token' },
      ...Array.from({ length: 20 }, (_, i) => ({ id: `noise${i}`, text: `token noise ${i}` })),
    ]);
    const hits = index.search('rotation token', { limit: 3 });
    expect(hits.map((h) => h.id)).toEqual(['short', 'long', 'common-only']);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    // 23 documents hold "token": with a filter, the limit still fills from the accepted ones
    const accepted = index.search('token', { limit: 5, accept: (id) => id.startsWith('noise1') });
    expect(accepted.map((h) => h.id).sort()).toEqual(['noise1', 'noise10', 'noise11', 'noise12', 'noise13']);
    expect(index.search('absent zzz', { limit: 5 })).toEqual([]);
  });

  it('scoped to groups, weighs terms by their frequency inside those groups and returns only their documents', () => {
    const index = new KeywordIndex([
      { id: 'c1', text: 'Caroline: went hiking', group: 'a' },
      { id: 'c2', text: 'Caroline: cooked dinner', group: 'a' },
      { id: 'c3', text: 'Caroline: swims laps', group: 'a' },
      { id: 'm1', text: 'Melanie: painting class', group: 'a' },
      ...Array.from({ length: 50 }, (_, i) => ({ id: `b${i}`, text: `painting number ${i}`, group: 'b' })),
    ]);
    // Over the whole index "caroline" is rare (4 of 54) and "painting" common (51): every Caroline
    // turn outranks the one about painting. Inside group a, Caroline is in 3 of 4 documents.
    expect(index.search('Caroline painting', { limit: 1, accept: (id) => !id.startsWith('b') })[0]!.id).not.toBe('m1');
    expect(index.search('Caroline painting', { limit: 4, groups: ['a'] }).map((h) => h.id)).toEqual(['m1', 'c1', 'c2', 'c3']);
    // scoped to every group, or to groups that hold everything, it is the unscoped search
    expect(index.search('painting caroline', { limit: 60, groups: ['a', 'b', 'zzz'] })).toEqual(
      index.search('painting caroline', { limit: 60 }),
    );
    expect(index.search('painting', { limit: 5, groups: ['zzz'] })).toEqual([]);
  });

  it('after upserts and removes (with compaction) answers as an index built fresh from the live documents', () => {
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ');
    let seed = 7;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const text = () => Array.from({ length: 3 + Math.floor(rand() * 12) }, () => words[Math.floor(rand() * words.length)]).join(' ');
    const live = new Map<string, { id: string; text: string; group: string }>();
    const index = new KeywordIndex();
    for (let round = 0; round < 30; round++) {
      // an upsert may move a document to another group
      const docs = Array.from({ length: 20 }, () => ({
        id: `d${Math.floor(rand() * 80)}`,
        text: text(),
        group: `g${Math.floor(rand() * 3)}`,
      }));
      index.upsert(docs);
      docs.forEach((d) => live.set(d.id, d));
      const gone = Array.from({ length: 15 }, () => `d${Math.floor(rand() * 80)}`);
      index.remove(gone);
      gone.forEach((id) => live.delete(id));
    }
    const fresh = new KeywordIndex(live.values());
    expect(index.size).toBe(live.size);
    for (const q of ['alpha', 'beta gamma', 'mu kappa eta', 'theta']) {
      for (const groups of [undefined, ['g0'], ['g1', 'g2']]) {
        const a = index.search(q, { limit: 10, groups });
        const b = fresh.search(q, { limit: 10, groups });
        expect(a.map((h) => h.id)).toEqual(b.map((h) => h.id));
        a.forEach((h, i) => expect(h.score).toBeCloseTo(b[i]!.score, 9));
        if (groups) expect(a.every((h) => groups.includes(live.get(h.id)!.group))).toBe(true);
      }
    }
    // Loaded from its snapshot (ids looked up by binary search until a write), with removed slots
    // among the live ones: the same scores, before and after a write.
    const loaded = KeywordIndex.fromSnapshot(index.snapshot());
    const asked = [...Array.from({ length: 90 }, (_, i) => `d${i}`), 'absent'];
    expect(loaded.size).toBe(index.size);
    for (const q of ['alpha', 'beta gamma', 'mu kappa eta'])
      expect(loaded.scoreDocuments(q, asked)).toEqual(index.scoreDocuments(q, asked));
    for (const k of [loaded, index]) {
      k.upsert([{ id: 'd3', text: 'alpha alpha beta', group: 'g1' }]);
      k.remove(['d5', 'd6']);
    }
    for (const q of ['alpha', 'beta gamma']) {
      expect(loaded.scoreDocuments(q, asked)).toEqual(index.scoreDocuments(q, asked));
      expect(loaded.search(q, { limit: 20 })).toEqual(index.search(q, { limit: 20 }));
    }
  });

  it('returns exactly the BM25 top k of a brute-force reference, ties by id, for rare and for common terms, whole or scoped to groups', () => {
    // Four words in most documents (a sweep over every slot) and rarer ones (a list of touched slots)
    const words = ['common', 'usual', 'frequent', 'everywhere', 'rare', 'scarce', 'odd'];
    let seed = 11;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    // 70,000 documents: past 8 × 1,024, the top k is picked above a bar set on a sample of the
    // scores; past two blocks of 32,768 slots, which the search scores a block at a time
    const docs = Array.from({ length: 70_000 }, (_, i) => ({
      id: `d${String(i).padStart(5, '0')}`,
      // duplicated texts make exact ties, which the id must break
      text: Array.from({ length: 2 + Math.floor(rand() * 6) }, () => words[Math.floor(rand() ** 0.3 * words.length)]).join(' '),
      group: `g${i % 3}`,
    }));
    const index = new KeywordIndex(docs);
    const terms = docs.map((d) => analyze(d.text));
    const average = terms.reduce((sum, t) => sum + t.length, 0) / docs.length;
    // Scoped: only the groups' documents, and idf from them; the average length stays the whole index's.
    const reference = (query: string, accept: (id: string) => boolean, limit: number, groups?: string[]) => {
      const inScope = docs.map((d) => !groups || groups.includes(d.group));
      const q = [...new Set(analyze(query))];
      const df = new Map(q.map((t) => [t, terms.filter((ts, i) => inScope[i] && ts.includes(t)).length]));
      const live = inScope.filter(Boolean).length;
      return docs
        .map((d, i) => ({
          id: d.id,
          score: q.reduce((sum, t) => {
            const tf = terms[i]!.filter((x) => x === t).length;
            const n = df.get(t)!;
            const idf = Math.log(1 + (live - n + 0.5) / (n + 0.5)) * 2.2;
            return tf === 0 ? sum : sum + (idf * tf) / (tf + 1.2 * (0.25 + (0.75 * terms[i]!.length) / average));
          }, 0),
        }))
        .filter((h, i) => h.score > 0 && inScope[i] && accept(h.id))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, limit);
    };
    for (const query of ['common usual', 'frequent everywhere common', 'rare', 'odd scarce', 'common rare']) {
      for (const [accept, limit] of [
        [() => true, 25],
        [(id: string) => id.endsWith('7'), 10],
        [(id: string) => id < 'd00100', 200],
      ] as const) {
        for (const groups of [undefined, ['g1'], ['g0', 'g2', 'absent']]) {
          const got = index.search(query, { limit, accept, groups });
          const want = reference(query, accept, limit, groups);
          expect(want.length).toBeGreaterThan(0);
          expect(
            got.map((h) => h.id),
            query,
          ).toEqual(want.map((h) => h.id));
          got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 4));
        }
      }
      // any documents' scores without a search: the same numbers
      const every = reference(query, () => true, docs.length);
      const some = every.filter((_, i) => i % 7 === 0);
      const scored = index.scoreDocuments(query, [...some.map((h) => h.id), 'absent']);
      expect([...scored.keys()].sort()).toEqual(some.map((h) => h.id).sort());
      some.forEach((h) => expect(scored.get(h.id)).toBeCloseTo(h.score, 4));
    }
  });

  it('stays exact when the sampled bar is too high: a term found only in the documents the sample looks at', () => {
    // Past 8 × 1,024 scored documents, topSlots sets a bar on 1,024 slots sampled evenly. Put the
    // rare term in exactly those: the sample sees only matches, its bar lets through fewer than the
    // k wanted, and the scan must run again without it. ('hay', in every document, makes every
    // slot score.)
    const n = 9000;
    const sampledAt = new Map(Array.from({ length: 1024 }, (_, j) => [Math.floor((j * n) / 1024), j]));
    const sampled = new Set(sampledAt.keys());
    // Each needle document a different length, so that no ties carry extra documents over the bar
    const docs = Array.from({ length: n }, (_, i) => ({
      id: `d${String(i).padStart(4, '0')}`,
      text: sampled.has(i) ? `needle hay ${'filler '.repeat(sampledAt.get(i)!)}` : 'hay straw',
    }));
    const index = new KeywordIndex(docs);
    const scores = index.scoreDocuments(
      'needle hay',
      docs.map((d) => d.id),
    );
    const want = [...scores]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 300)
      .map(([id]) => id);
    expect(want.every((id) => sampled.has(Number(id.slice(1))))).toBe(true);
    expect(index.search('needle hay', { limit: 300 }).map((h) => h.id)).toEqual(want);
  });
});

describe('entry columns', () => {
  it('estimate the share of entries a filter passes: exact up to the sample size, close above it, and removed entries do not count', () => {
    const row = (i: number) => ({
      id: `e${i}`,
      coreId: i % 10 < 3 ? 'a' : 'b',
      source: null,
      entryType: 'lesson',
      confidenceRank: 2,
      importance: 5,
      tags: [],
      sensitivity: 'public',
      createdAt: 0,
      updatedAt: 0,
      validFrom: null,
      validTo: null,
    });
    const small = new EntryColumns(
      2,
      Array.from({ length: 10 }, (_, i) => row(i)),
      new Float32Array(20).fill(1),
    );
    expect(small.passRate({ cores: ['a'] })).toBe(0.3);
    expect(small.passRate({ cores: ['c'] })).toBe(0);
    small.remove(['e0', 'e1', 'e2']);
    expect(small.passRate({ cores: ['a'] })).toBe(0);
    expect(small.passRate({})).toBe(1);
    const large = new EntryColumns(
      2,
      Array.from({ length: 50_000 }, (_, i) => row(i)),
      new Float32Array(100_000).fill(1),
    );
    expect(large.passRate({ cores: ['a'] }, 1000)).toBeCloseTo(0.3, 1);
    expect(new EntryColumns(2).passRate({})).toBe(0);
  });

  it('held: scan the small vectors (8-bit) for the nearest that pass the filter, read entries whole, and stop holding each past its own limit', async () => {
    let seed = 5;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647 - 0.5;
    const entry = (i: number, core = i % 3 === 0 ? 'a' : 'b') => ({
      id: `e${i}`,
      coreId: core,
      title: `entry ${i}`,
      aliases: [],
      content: `text "${i}" \\ ü`,
      entryType: 'lesson',
      confidence: 'medium' as const,
      importance: 5,
      tags: [],
      source: null,
      sensitivity: 'public' as const,
      createdAt: new Date(1000 + i),
      updatedAt: new Date(2000 + i),
      validFrom: null,
      validTo: i === 7 ? new Date(3000) : null,
      contentHash: `h${i}`,
      pinned: false,
    });
    const small = new Map<string, Float32Array>();
    const smallOf = (id: string) => {
      const v = Float32Array.from({ length: 12 }, rand);
      small.set(id, v);
      return v;
    };
    const entries = Array.from({ length: 300 }, (_, i) => entry(i));
    const smallVectors = new Float32Array(300 * 12);
    entries.forEach((e, i) => smallVectors.set(smallOf(e.id), i * 12));
    const columns = new EntryColumns(4, entries.map(columnRow), new Float32Array(300 * 4).fill(1), {
      small: { maxEntries: 500, smallDimensions: 12, vectors: smallVectors },
      entries: { maxEntries: 400, loaded: { ipc: new Uint8Array(), count: 300, entryAt: (i) => ({ ...entries[i]! }) } },
    });
    const live = new Map(entries.map((e) => [e.id, e]));
    const heldOf = (batch: ReturnType<typeof entry>[]) => (i: number) => ({
      vectorSmall: smallOf(batch[i]!.id),
      record: entryRecord(batch[i]!),
    });
    // replacements (one moves core), additions past the first capacity, removals
    const batch = [entry(3, 'b'), ...Array.from({ length: 60 }, (_, i) => entry(300 + i))];
    columns.upsert(batch.map(columnRow), () => new Float32Array(4).fill(1), heldOf(batch));
    batch.forEach((e) => live.set(e.id, e));
    columns.remove(['e10', 'e11', 'e301']);
    ['e10', 'e11', 'e301'].forEach((id) => live.delete(id));
    const cos = (a: Float32Array, b: Float32Array) => {
      let d = 0,
        na = 0,
        nb = 0;
      for (let i = 0; i < a.length; i++) {
        d += a[i]! * b[i]!;
        na += a[i]! ** 2;
        nb += b[i]! ** 2;
      }
      return d / Math.sqrt(na * nb);
    };
    const expectNearestSmall = () => {
      for (const filter of [{}, { cores: ['a'] }, { validAt: new Date(5000) }, { cores: ['zzz'] }]) {
        for (let q = 0; q < 5; q++) {
          const query = Float32Array.from({ length: 12 }, rand);
          const passing = [...live.values()]
            .filter((e) => (!filter.cores || filter.cores.includes(e.coreId)) && (!filter.validAt || e.validTo === null))
            .map((e) => ({ id: e.id, similarity: cos(query, small.get(e.id)!) }))
            .sort((a, b) => b.similarity - a.similarity);
          const want = passing.slice(0, 20);
          const exact = new Map(passing.map((h) => [h.id, h.similarity]));
          const got = columns.nearestSmall(query, filter, 20)!;
          // 8-bit products: every hit passes, its similarity is within 0.01 of the exact one, it is
          // as near as the exact 20th give or take that, and the order is by the reported similarity
          expect(got.length, JSON.stringify(filter)).toBe(want.length);
          for (const h of got) {
            expect(exact.has(h.id), h.id).toBe(true);
            expect(Math.abs(h.similarity - exact.get(h.id)!)).toBeLessThan(0.01);
            expect(exact.get(h.id)!).toBeGreaterThan((want.at(-1)?.similarity ?? 0) - 0.02);
          }
          expect(got.map((h) => h.similarity)).toEqual(got.map((h) => h.similarity).sort((a, b) => b - a));
          expect(got.filter((h) => want.slice(0, 15).some((w) => w.id === h.id)).length).toBeGreaterThanOrEqual(Math.min(14, want.length));
        }
      }
    };
    expectNearestSmall();
    expect(columns.nearestSmall(new Float32Array(12), {}, 5)).toBeUndefined(); // no direction
    expect(columns.entries(['e3', 'e10', 'e359', 'nope', 'e7'])).toEqual([live.get('e3'), live.get('e359'), entry(7)]);
    expect(columns.entries(['e3'])![0]!.coreId).toBe('b');
    // past the entries' limit (400), entries are no longer held (undefined: read LanceDB); the small vectors (up to 500) still are
    const more = Array.from({ length: 50 }, (_, i) => entry(400 + i));
    columns.upsert(more.map(columnRow), () => new Float32Array(4).fill(1), heldOf(more));
    more.forEach((e) => live.set(e.id, e));
    expect([columns.holdsEntries, columns.holdsSmallVectors]).toEqual([false, true]);
    expect(columns.entries(['e3'])).toBeUndefined();
    expectNearestSmall();
    // past 500 the small vectors go too; the columns still serve
    const evenMore = Array.from({ length: 100 }, (_, i) => entry(500 + i));
    columns.upsert(evenMore.map(columnRow), () => new Float32Array(4).fill(1), heldOf(evenMore));
    expect(columns.holdsSmallVectors).toBe(false);
    expect(columns.nearestSmall(Float32Array.from({ length: 12 }, rand), {}, 5)).toBeUndefined();
    expect(columns.has('e449')).toBe(true);
    expect(columns.has('e599')).toBe(true);
    // a table holding an id twice would misalign slots and loaded rows: entries() says so (undefined: read LanceDB)
    // the scan on a helper thread finds what the scan here finds
    const threaded = new EntryColumns(4, entries.map(columnRow), new Float32Array(300 * 4).fill(1), {
      small: { maxEntries: 500, smallDimensions: 12, vectors: smallVectors, helperMinRows: 0 },
    });
    const here = new EntryColumns(4, entries.map(columnRow), new Float32Array(300 * 4).fill(1), {
      small: { maxEntries: 500, smallDimensions: 12, vectors: smallVectors },
    });
    try {
      threaded.nearestSmall(Float32Array.from({ length: 12 }, rand), {}, 5); // starts the thread
      for (let i = 0; i < 500 && !threaded.scansOnThread; i++) await new Promise((r) => setTimeout(r, 10));
      expect([threaded.scansOnThread, here.scansOnThread]).toEqual([true, false]);
      for (const filter of [{}, { cores: ['a'] }]) {
        const query = Float32Array.from({ length: 12 }, rand);
        const rank = threaded.startNearestSmall(query)!;
        // nothing may write while the thread scans
        expect(() => threaded.upsert([columnRow(entry(900))], () => new Float32Array(4).fill(1), heldOf([entry(900)]))).toThrow(
          /still running/,
        );
        expect(() => threaded.remove(['e1'])).toThrow(/still running/);
        expect(rank(filter, 20)).toEqual(here.nearestSmall(query, filter, 20));
      }
      threaded.remove(['e1']); // and once ranked, it may
      expect(threaded.has('e1')).toBe(false);
    } finally {
      threaded.close();
    }
    const twice = [entry(1), entry(2), entry(1), entry(3)];
    const misaligned = new EntryColumns(4, twice.map(columnRow), new Float32Array(16).fill(1), {
      entries: { maxEntries: 10, loaded: { ipc: new Uint8Array(), count: 4, entryAt: (i) => ({ ...twice[i]! }) } },
    });
    expect(misaligned.entries(['e2'])).toEqual([entry(2)]);
    expect(misaligned.entries(['e2', 'e3'])).toBeUndefined();
  });
});

describe('stage-1 scan on a helper thread', () => {
  it('gives buildTaskContext the same bundles as the scan on the calling thread, and stops with the store', async () => {
    const [dirA, dirB] = [await tempDir(), await tempDir()];
    const threaded = await openMemory({ path: dirA, embedder: wordHashEmbedder(), scanThreadMinEntries: 0, cache: { ttlMs: 0 } });
    const here = await openMemory({ path: dirB, embedder: wordHashEmbedder(), cache: { ttlMs: 0 } });
    try {
      for (const m of [threaded, here]) await m.ingestDocument({ entries: syntheticEntries(80) }, { source: 'first' });
      const columns = await threaded.unsafeExposeInternals().stores.columns();
      await threaded.buildTaskContext('cache eviction', {}); // starts the thread
      for (let i = 0; i < 500 && !columns.scansOnThread; i++) await new Promise((r) => setTimeout(r, 10));
      expect(columns.scansOnThread).toBe(true);
      expect((await here.unsafeExposeInternals().stores.columns()).scansOnThread).toBe(false);
      for (const task of ['cache eviction leaks memory', 'retry the queue consumer', 'token rotation schema']) {
        const [a, b] = await Promise.all([threaded.buildTaskContext(task), here.buildTaskContext(task)]);
        expect(a.entries.map((e) => e.entry.id)).toEqual(b.entries.map((e) => e.entry.id));
        // the stores were written milliseconds apart: recency moves the scores by ~1e-10
        a.entries.forEach((e, i) => expect(e.score).toBeCloseTo(b.entries[i]!.score, 8));
        expect(a.entries.length).toBeGreaterThan(0);
      }
      await threaded.close();
      expect(columns.scansOnThread).toBe(false);
    } finally {
      await threaded.close();
      await here.close();
    }
  });
});

describe('structures held in memory follow the writes', () => {
  it('names, entry columns and keywords after upserts and deletes equal ones loaded afresh from the stores', async () => {
    const m = await openMemory({ path: await tempDir(), embedder: wordHashEmbedder() });
    try {
      await m.ingestDocument({ entries: syntheticEntries(60) }, { source: 'first' });
      // loads all three
      expect((await m.buildTaskContext('cache eviction leaks memory', { maxEntries: 3 })).entries.length).toBeGreaterThan(0);
      const stores = m.unsafeExposeInternals().stores;
      const loaded = await Promise.all([stores.columns(), stores.keywords()]);

      await writeMore(m);

      const [columns, keywords] = await Promise.all([stores.columns(), stores.keywords()]);
      expect(columns).toBe(loaded[0]); // followed in place, not reloaded
      expect(keywords).toBe(loaded[1]);
      await expectAsBuiltAfresh(stores, ['s5', 's6']);
      expect(columns.entries(['new', 's3'])).toEqual(
        (await stores.table.read({ ids: ['new', 's3'] }))
          .map((r) => r.entry)
          .sort((a, b) => (a.id === 'new' ? -1 : b.id === 'new' ? 1 : 0)),
      );
      expect(
        keywords
          .search('zephyr', { limit: 5 })
          .map((h) => h.id)
          .sort(),
      ).toEqual(['new', 's3']);
      // the name index too: the task names the new entry and the renamed one by their new titles
      const task = 'why does the quokka scheduler wait for the Zephyr gateway';
      const named = (await m.buildTaskContext(task, { maxEntries: 5 })).entries
        .filter((e) => e.why.some((r) => r.kind === 'mention'))
        .map((e) => e.entry.id)
        .sort();
      expect(named).toEqual(
        new NameIndex(await stores.table.names())
          .match(task)
          .map((n) => n.id)
          .sort(),
      );
      expect(named).toEqual(['new', 's3']);
      expect((await m.keywordSearch('eviction', { limit: 50 })).map((h) => h.entry.id)).not.toContain('s5');
    } finally {
      await m.close();
    }
  });
});

/** Writes that move an entry to another core, add one with an alias, and delete two. */
const writeMore = async (m: Engine) => {
  await m.upsert([
    {
      id: 's3',
      core_id: 'moved',
      title: 'Zephyr gateway',
      content: 'The zephyr gateway rewrites headers.',
      importance: 9,
      confidence: 'high',
      tags: ['edge'],
    },
    {
      id: 'new',
      core_id: 'synthetic',
      title: 'Quokka scheduler',
      aliases: ['QS'],
      content: 'Quokka runs the nightly jobs after the zephyr gateway drains.',
    },
  ]);
  await m.delete(['s5', 's6']);
};

/** Entries linked every way the adjacency holds (a chain, dependencies, supersessions, a hub), over two cores. */
function linkedDocument(n: number) {
  const entries = syntheticEntries(n).map((e, i) => ({
    ...e,
    core_id: i % 3 === 0 ? 'other' : 'synthetic',
    tags: i % 5 === 0 ? ['edge'] : [],
  }));
  const relations = entries.flatMap((e, i) => [
    ...(i > 0 ? [{ type: 'RELATED' as const, from: e.id, to: 's0', weight: 0.5 }] : []),
    ...(i + 1 < n ? [{ type: 'RELATED' as const, from: e.id, to: `s${i + 1}`, weight: 0.8 }] : []),
    ...(i + 7 < n ? [{ type: 'DEPENDS_ON' as const, from: e.id, to: `s${i + 7}` }] : []),
    ...(i % 10 === 9 ? [{ type: 'SUPERSEDES' as const, from: e.id, to: `s${i - 1}` }] : []),
    ...(i % 4 === 0 ? [{ type: 'REFERENCES_CODE' as const, from: e.id, to: `c${i % 12}`, relevance: 0.5 + (i % 5) / 10 }] : []),
    ...(i % 25 === 0 ? [{ type: 'IMPLEMENTS' as const, from: e.id, to: `gp${i % 2}` }] : []),
  ]);
  const code_locations = Array.from({ length: 12 }, (_, i) => ({
    id: `c${i}`,
    codebase_id: 'app',
    file_path: `src/mod${i % 3}/file${i}.ts`,
    symbol: `fn${i}`,
    start_line: 1 + i,
  }));
  const golden_paths = [0, 1].map((p) => ({
    id: `gp${p}`,
    name: `Path ${p}`,
    concept: `concept ${p}`,
    steps: [{ code: `c${p}` }, { code: `c${p + 2}` }],
  }));
  return { entries, relations, code_locations, golden_paths };
}

describe('snapshots of the structures held in memory', () => {
  const task = 'cache eviction leaks memory when the disk fills up';
  // Scores move with the clock (recency): what was chosen, and why, may not.
  const comparable = (b: Awaited<ReturnType<Engine['buildTaskContext']>>) => ({
    entries: b.entries.map((e) => [e.entry.id, e.similarity, e.why]),
    related: b.relatedDecisions.map((e) => e.entry.id),
    code: b.codeRefs,
    notes: b.notes,
  });
  const loads = (m: Engine) =>
    Object.fromEntries([...m.unsafeExposeInternals().stores.residents.loads].map(([key, load]) => [key, load.loadedFrom]));

  it('are written on close and loaded by the next open, which answers as one built afresh', async () => {
    const dir = await tempDir();
    let expected;
    let floor: unknown;
    let calibration: unknown;
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await first.ingestDocument(linkedDocument(150), { source: 'first' });
      await first.buildTaskContext(task);
      await writeMore(first);
      expected = comparable(await first.buildTaskContext(task));
      // What the query path derived from the keyword index (the relevance floor) is kept with it.
      floor = (await first.unsafeExposeInternals().stores.keywords()).derived.get('relevanceFloor');
      expect(floor).toMatchObject({ floor: expect.any(Number), size: expect.any(Number) });
      await first.matryoshkaSearch(task);
      calibration = (await first.unsafeExposeInternals().stores.columns()).derived.get('stage1Calibration');
      expect(calibration).toHaveProperty('calibration');
      // A new folder has no snapshots: every structure, the graph's too, was built.
      expect(loads(first)).toEqual({ columns: 'built', keywords: 'built', names: 'built', adjacency: 'built', 'code-links': 'built' });
    } finally {
      await first.close();
    }
    const second = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await second.unsafeExposeInternals().stores.keywords()).derived.get('relevanceFloor')).toEqual(floor);
      expect((await second.unsafeExposeInternals().stores.columns()).derived.get('stage1Calibration')).toEqual(calibration);
      expect(comparable(await second.buildTaskContext(task))).toEqual(expected);
      expect(loads(second)).toEqual({
        columns: 'snapshot',
        keywords: 'snapshot',
        names: 'snapshot',
        adjacency: 'snapshot',
        'code-links': 'snapshot',
      });
      await expectAsBuiltAfresh(second.unsafeExposeInternals().stores, ['s5', 's6']);
      // and they follow writes as built ones do
      await second.upsert([{ id: 's7', core_id: 'other', title: 'Wombat cache', content: 'The wombat cache evicts on memory pressure.' }]);
      await second.delete(['s8']);
      await expectAsBuiltAfresh(second.unsafeExposeInternals().stores, ['s5', 's6', 's8']);
    } finally {
      await second.close();
    }
  });

  it('of a store past the limits hold what a build would: no entries whole, no exact level, no small vectors', async () => {
    const dir = await tempDir();
    for (const limits of [{ residentMaxEntries: 100 }, { residentMaxEntries: 100, scanMaxEntries: 100 }]) {
      let expected;
      const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {}, ...limits });
      try {
        if ((await first.stats()).entries === 0) await first.ingestDocument(linkedDocument(150), { source: 'first' });
        expected = comparable(await first.buildTaskContext(task));
        expect(await first.stats()).toMatchObject({
          search: { exact: 'lancedb', entries: 'lancedb', stage1: limits.scanMaxEntries ? 'lancedb' : 'memory' },
        });
      } finally {
        await first.close();
      }
      const second = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {}, ...limits });
      try {
        expect(comparable(await second.buildTaskContext(task))).toEqual(expected);
        expect(loads(second).columns).toBe('snapshot');
        const columns = await second.unsafeExposeInternals().stores.columns();
        expect([columns.holdsEntries, columns.holdsExactVectors, columns.holdsSmallVectors]).toEqual([
          false,
          false,
          !limits.scanMaxEntries,
        ]);
      } finally {
        await second.close();
      }
    }
  });

  it('of an older generation are brought up to date from the change log; a damaged or foreign one is rebuilt, with a note', async () => {
    const dir = await tempDir();
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await first.ingestDocument(linkedDocument(150), { source: 'first' });
    await first.buildTaskContext(task);
    await first.close();
    // A process that writes without loading them: the change log carries its writes.
    const codeLinksFile = join(dir, 'snapshots', 'code-links.snap');
    const olderCodeLinks = await readFile(codeLinksFile);
    const writer = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await writeMore(writer);
    const written = writer.unsafeExposeInternals().stores.meta.generation;
    await writer.close();
    // Its close left the code links current (the log holds ids, not edges: no reader could catch them up) ...
    expect(await snapshotGeneration(codeLinksFile)).toBe(written);
    // ... which a writer killed before its close would not have done.
    await writeFile(codeLinksFile, olderCodeLinks);
    const third = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await third.buildTaskContext(task);
      // the writer's graph writes loaded the edges from their snapshot and followed them; the
      // code links' snapshot is of an older generation than the store
      expect(loads(third)).toEqual({
        columns: 'caught-up',
        keywords: 'caught-up',
        names: 'caught-up',
        adjacency: 'snapshot',
        'code-links': 'built',
      });
      expect(third.unsafeExposeInternals().stores.residents.loads.get('code-links')!.note).toMatch(
        /code-links\.snap is of generation \d+, the store of \d+, and the change log does not bring it up to date; rebuilt from the stores/,
      );
      await expectAsBuiltAfresh(third.unsafeExposeInternals().stores, ['s5', 's6']);
    } finally {
      await third.close();
    }

    const keywords = join(dir, 'snapshots', 'keywords.snap');
    const bytes = await readFile(keywords);
    bytes[bytes.length - 100]! ^= 0xff;
    await writeFile(keywords, bytes);
    await writeFile(join(dir, 'snapshots', 'names.snap'), await readFile(join(dir, 'snapshots', 'adjacency.snap')));
    const fourth = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await fourth.buildTaskContext(task);
      const resident = fourth.unsafeExposeInternals().stores.residents.loads;
      expect(loads(fourth)).toEqual({
        columns: 'snapshot',
        keywords: 'built',
        names: 'built',
        adjacency: 'snapshot',
        'code-links': 'snapshot',
      });
      expect(resident.get('keywords')!.note).toMatch(/keywords\.snap is damaged \(its checksum does not match\); rebuilt from the stores/);
      expect(resident.get('names')!.note).toMatch(/names\.snap holds adjacency, not names/);
      await expectAsBuiltAfresh(fourth.unsafeExposeInternals().stores, ['s5', 's6']);
    } finally {
      await fourth.close();
    }
  });
});

type Engine = Awaited<ReturnType<typeof openMemory>>;

/**
 * The structures the store holds in memory (however they were loaded: built, followed, from a
 * snapshot, caught up) answer as ones built afresh from the stores: filters, features,
 * similarities, held entries, small-vector neighbours, BM25, names and the entry edges.
 */
async function expectAsBuiltAfresh(stores: ReturnType<Engine['unsafeExposeInternals']>['stores'], gone: string[]): Promise<void> {
  const [columns, keywords] = await Promise.all([stores.columns(), stores.keywords()]);
  // What a snapshot hands over later (the residual level, the entries) is compared once it is in.
  await columns.settled();
  const smallDimensions = stores.meta.smallDimensions;
  const { rows, vectors, smallVectors, entries } = await stores.table.columnRows(64, { smallDimensions, entries: true });
  const freshColumns = new EntryColumns(64, rows, vectors, {
    small: { maxEntries: 1000, smallDimensions, vectors: smallVectors! },
    entries: { maxEntries: 1000, loaded: entries! },
  });
  const freshKeywords = new KeywordIndex(await stores.table.searchTexts());
  const freshNames = new NameIndex(await stores.table.names());
  const ids = [...rows.map((r) => r.id), ...gone];
  const query = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i));
  for (const filter of [{}, { cores: ['moved'] }, { tags: ['edge'] }, { minConfidence: 'high' as const }]) {
    expect(ids.filter(columns.matcher(filter)), JSON.stringify(filter)).toEqual(ids.filter(freshColumns.matcher(filter)));
    // features exactly where the filter passes
    const passes = columns.matcher(filter);
    const featuresOf = columns.featuresIfPassing(filter);
    expect(ids.map(featuresOf), JSON.stringify(filter)).toEqual(
      ids.map((id) => (passes(id) ? columns.featuresIfPassing({})(id) : undefined)),
    );
  }
  expect(ids.map(columns.featuresIfPassing({}))).toEqual(ids.map(freshColumns.featuresIfPassing({})));
  expect(columns.similarities(ids, query)).toEqual(freshColumns.similarities(ids, query));
  for (const id of gone) expect(columns.has(id)).toBe(false);
  // held whole: the same entries (as LanceDB reads them) and the same small-vector neighbours
  expect(columns.holdsEntries).toBe(true);
  expect(columns.entries(ids)).toEqual(freshColumns.entries(ids));
  const querySmall = Float32Array.from({ length: smallDimensions }, (_, i) => Math.cos(i));
  for (const filter of [{}, { cores: ['moved'] }])
    expect(columns.nearestSmall(querySmall, filter, 20)).toEqual(freshColumns.nearestSmall(querySmall, filter, 20));
  for (const q of ['zephyr gateway', 'quokka nightly', 'refresh tokens must be idempotent', 'cache eviction']) {
    expect(keywords.search(q, { limit: 10 })).toEqual(freshKeywords.search(q, { limit: 10 }));
    expect(keywords.search(q, { limit: 10, groups: ['synthetic'] })).toEqual(freshKeywords.search(q, { limit: 10, groups: ['synthetic'] }));
  }
  const names = await stores.names();
  const titles = (columns.entries(ids) ?? []).slice(0, 12).map((e) => e.title);
  for (const task of ['why does the quokka scheduler wait for the Zephyr gateway', titles.join(' and '), ...titles])
    expect(names.match(task)).toEqual(freshNames.match(task));
  const sample = ids.slice(0, 30);
  const fresh = new EntryAdjacency(
    await stores.graph.entryIds(),
    (await stores.graph.allRelations())
      .filter((r) => (ENTRY_EDGE_TYPES as readonly string[]).includes(r.type))
      .map((r) => ({ from: r.from, to: r.to, type: r.type as EntryEdgeType, weight: r.weight ?? 1 })),
  );
  const reach = { depth: 2, edgeTypes: ENTRY_EDGE_TYPES };
  expect(sortHits(await stores.graph.reach(sample, reach))).toEqual(sortHits(fresh.reach(sample, reach)));
  expect(sortEdges(await stores.graph.edgesAmong(ids, ENTRY_EDGE_TYPES))).toEqual(sortEdges(fresh.edgesAmong(ids, ENTRY_EDGE_TYPES)));
  expect(await stores.graph.supersededBy(ids)).toEqual(fresh.supersededBy(ids));
  const relations = await stores.graph.allRelations();
  const freshCode = new CodeLinks({
    references: relations
      .filter((r) => r.type === 'REFERENCES_CODE')
      .map((r) => ({ entryId: r.from, codeId: r.to, relevance: r.relevance ?? 1 })),
    implementations: relations.filter((r) => r.type === 'IMPLEMENTS').map((r) => ({ entryId: r.from, pathId: r.to })),
    codeLocations: await stores.graph.allCodeLocations(),
    goldenPaths: await stores.graph.allGoldenPaths(),
  });
  expect(await stores.graph.codeReferencesOf(ids)).toEqual(freshCode.codeReferencesOf(ids));
  expect(sortById(await stores.graph.goldenPathsOf(ids))).toEqual(sortById(freshCode.goldenPathsOf(ids)));
  for (const q of [{ filePath: 'src/mod1' }, { symbol: 'fn4' }, { codebaseId: 'app' }])
    expect(await stores.graph.findByCodeReference(q)).toEqual(freshCode.findByCodeReference(q));
}

const sortById = <T extends { id: string }>(xs: T[]) => [...xs].sort((a, b) => a.id.localeCompare(b.id));

const sortHits = (hits: { seedId: string; targetId: string; hops: number }[]) =>
  [...hits].sort((a, b) => `${a.seedId} ${a.targetId}`.localeCompare(`${b.seedId} ${b.targetId}`));
const sortEdges = (edges: { from: string; to: string; type: string }[]) =>
  [...edges].sort((a, b) => `${a.type} ${a.from} ${a.to}`.localeCompare(`${b.type} ${b.from} ${b.to}`));

describe('structures loaded from a snapshot (entry edges read in place)', () => {
  /** A store-like graph: a chain, dependencies, supersessions and a hub every entry links to. */
  const graph = (n: number) => {
    const ids = Array.from({ length: n }, (_, i) => `e${i}`);
    const edges = ids.flatMap((id, i) => [
      ...(i > 0 ? [{ from: id, to: 'e0', type: 'RELATED' as const, weight: 0.5 }] : []),
      ...(i + 1 < n ? [{ from: id, to: `e${i + 1}`, type: 'RELATED' as const, weight: 0.8 }] : []),
      ...(i + 3 < n ? [{ from: id, to: `e${i + 3}`, type: 'DEPENDS_ON' as const, weight: 1 }] : []),
      ...(i % 7 === 6 ? [{ from: id, to: `e${i - 1}`, type: 'SUPERSEDES' as const, weight: 1 }] : []),
    ]);
    return { ids, edges };
  };
  const answers = (a: InstanceType<typeof EntryAdjacency>, ids: string[]) => ({
    reach: sortHits(a.reach(['e10', 'e40', 'e0'], { depth: 2, edgeTypes: ENTRY_EDGE_TYPES, hubDegree: 50 })),
    incoming: sortHits(a.reach(['e20'], { depth: 3, edgeTypes: ['DEPENDS_ON'], direction: 'incoming' })),
    among: sortEdges(a.edgesAmong(ids.slice(0, 30), ENTRY_EDGE_TYPES)),
    superseded: a.supersededBy(ids),
    degrees: ids.map((id) => a.degree(id)),
    entries: ids.map((id) => a.hasEntry(id)),
    has: [
      a.has({ from: 'e5', to: 'e6', type: 'RELATED' }),
      a.has({ from: 'e6', to: 'e5', type: 'RELATED' }),
      a.has({ from: 'e13', to: 'e12', type: 'SUPERSEDES' }),
    ],
  });

  it('answer as the adjacency they were taken from, before and after writes, and snapshot again alike', () => {
    const { ids, edges } = graph(120);
    // `built` is never snapshotted, so its lists stay objects; taking a snapshot makes an adjacency
    // read its lists in place, as a loaded one does.
    const built = new EntryAdjacency(ids, edges);
    const loaded = EntryAdjacency.fromSnapshot(new EntryAdjacency(ids, edges).snapshot());
    const snapshotted = new EntryAdjacency(ids, edges);
    snapshotted.snapshot();
    const all = [...ids, 'nope'];
    expect(answers(loaded, all)).toEqual(answers(built, all));
    expect(answers(snapshotted, all)).toEqual(answers(built, all));
    // Writes on lists decoded and not: a new edge to a list never read, a weight change, a removal of
    // entries whose lists were never decoded (and of the hub), new entries.
    for (const a of [built, loaded, snapshotted]) {
      a.upsert([
        { from: 'e100', to: 'e101', type: 'RELATED', weight: 0.1 },
        { from: 'e111', to: 'e90', type: 'SUPERSEDES', weight: 1 },
        { from: 'e5', to: 'e6', type: 'RELATED', weight: 0.2 },
      ]);
      a.removeEntries(['e77', 'e78', 'e0']);
      a.addEntries(['new']);
      a.upsert([{ from: 'new', to: 'e50', type: 'DEPENDS_ON', weight: 1 }]);
    }
    expect(answers(loaded, [...all, 'new'])).toEqual(answers(built, [...all, 'new']));
    expect(answers(snapshotted, [...all, 'new'])).toEqual(answers(built, [...all, 'new']));
    const again = EntryAdjacency.fromSnapshot(loaded.snapshot());
    expect(answers(again, [...all, 'new'])).toEqual(answers(built, [...all, 'new']));
    expect(sortEdges(again.edgesAmong([...ids, 'new'], ENTRY_EDGE_TYPES))).toEqual(
      sortEdges(built.edgesAmong([...ids, 'new'], ENTRY_EDGE_TYPES)),
    );
  });

  it('find the edges among candidates around a hub alike, lists read in place or as objects', () => {
    const { ids, edges: chain } = graph(1500);
    // and edges out of the hub, found at their `to` ends
    const edges = [...chain, ...[710, 720].map((i) => ({ from: 'e0', to: `e${i}`, type: 'DEPENDS_ON' as const, weight: 0.7 }))];
    const built = new EntryAdjacency(ids, edges);
    const loaded = EntryAdjacency.fromSnapshot(new EntryAdjacency(ids, edges).snapshot());
    // e0 has ~1,500 edges, past 4× the 30 ids asked about: found at the other ends, not walked.
    const among = ['e0', ...ids.slice(700, 729)];
    const expected = sortEdges(built.edgesAmong(among, ENTRY_EDGE_TYPES));
    expect(expected.filter((e) => e.to === 'e0')).toHaveLength(29);
    expect(expected.filter((e) => e.from === 'e0')).toHaveLength(2);
    expect(sortEdges(loaded.edgesAmong(among, ENTRY_EDGE_TYPES))).toEqual(expected);
    expect(sortEdges(loaded.edgesAmong(among, ['DEPENDS_ON']))).toEqual(expected.filter((e) => e.type === 'DEPENDS_ON'));
    loaded.upsert([{ from: 'e0', to: 'e705', type: 'DEPENDS_ON', weight: 0.3 }]);
    built.upsert([{ from: 'e0', to: 'e705', type: 'DEPENDS_ON', weight: 0.3 }]);
    expect(sortEdges(loaded.edgesAmong(among, ENTRY_EDGE_TYPES))).toEqual(sortEdges(built.edgesAmong(among, ENTRY_EDGE_TYPES)));
    expect(loaded.edgesAmong(among, ENTRY_EDGE_TYPES)).toContainEqual({ from: 'e0', to: 'e705', type: 'DEPENDS_ON', weight: 0.3 });
  });

  it('of the name index find every name a built one finds, unicode included, before and after a write', () => {
    const names = ['Zephyr gateway', 'Ärger mit Umlauten', '日本語の設計', 'JWT', 'cache eviction', 'Émile', 'zeta', '😀 emoji name'].map(
      (title, i) => ({ id: `n${i}`, title, aliases: i % 2 ? [`alias ${title}`] : [] }),
    );
    const built = new NameIndex(names);
    const loaded = NameIndex.fromSnapshot(built.snapshot());
    const tasks = [...names.map((n) => `why does ${n.title} fail`), 'alias Ärger mit Umlauten and JWT', 'nothing here'];
    for (const task of tasks) expect(loaded.match(task), task).toEqual(built.match(task));
    expect(loaded.match('the Zephyr gateway and 日本語の設計').map((m) => m.id)).toEqual(['n0', 'n2']);
    for (const index of [built, loaded]) {
      index.upsert([{ id: 'n0', title: 'Zephyr bridge', aliases: [] }]);
      index.remove(['n3']);
    }
    for (const task of [...tasks, 'the Zephyr bridge']) expect(loaded.match(task), task).toEqual(built.match(task));
    expect(loaded.match('JWT and Zephyr gateway')).toEqual([]);
  });

  it('of the code links answer as the links they were taken from, before and after a removal, and snapshot again alike', () => {
    const location = (i: number) => ({
      ...{ id: `c${i}`, codebaseId: i % 2 ? 'app' : 'lib', filePath: `src/m${i % 3}/f${i}.ts`, symbol: i % 4 ? `fn${i}` : null },
      ...{ startLine: i % 5 ? i : null, endLine: i % 5 ? i + 9 : null, language: i % 3 ? 'ts' : null, kind: null },
      ...{ fingerprint: i % 2 ? `h${i}` : null, revision: null },
    });
    const data = {
      // entry e7 references a location that does not exist, which no answer names
      references: Array.from({ length: 60 }, (_, i) => ({ entryId: `e${(i * 7) % 23}`, codeId: `c${i % 17}`, relevance: (i % 10) / 10 })),
      implementations: [0, 3, 9].map((i) => ({ entryId: `e${i}`, pathId: `g${i % 2}` })),
      codeLocations: [...Array.from({ length: 16 }, (_, i) => location(i))],
      goldenPaths: [0, 1].map((i) => ({ id: `g${i}`, name: `path ${i}`, concept: 'x', description: null, steps: [] })),
    };
    const built = new CodeLinks(data as never);
    const loaded = CodeLinks.fromSnapshot(built.snapshot());
    const entries = [...Array.from({ length: 25 }, (_, i) => `e${i}`), 'nope', 'e3'];
    const answers = (c: CodeLinks) => ({
      references: c.codeReferencesOf(entries),
      paths: c.goldenPathsOf(entries),
      byFile: c.findByCodeReference({ filePath: 'src/m1' }),
      bySymbol: c.findByCodeReference({ symbol: 'fn5', codebaseId: 'app' }),
    });
    expect(answers(loaded)).toEqual(answers(built));
    expect(answers(loaded).references.length).toBeGreaterThan(40);
    const fresh = CodeLinks.fromSnapshot(built.snapshot());
    for (const c of [built, fresh]) c.removeEntries(['e0', 'e14']);
    expect(answers(fresh)).toEqual(answers(built));
    expect(answers(CodeLinks.fromSnapshot(fresh.snapshot()))).toEqual(answers(built));
  });

  it('hand the residual level and the entries over after the first answer; a damaged one is let go and rebuilt, with a note', async () => {
    const task = 'cache eviction leaks memory when the disk fills up';
    const loads = (m: Engine) =>
      Object.fromEntries([...m.unsafeExposeInternals().stores.residents.loads].map(([key, load]) => [key, load.loadedFrom]));
    const dir = await tempDir();
    let exact: string[];
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await first.ingestDocument(linkedDocument(150), { source: 'first' });
      exact = (await first.semanticSearch(task, { limit: 10 })).map((h) => h.entry.id);
    } finally {
      await first.close();
    }
    // A fresh open: exact search waits for the residual level, and answers as before.
    const second = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await second.semanticSearch(task, { limit: 10 })).map((h) => h.entry.id)).toEqual(exact);
      const columns = await second.unsafeExposeInternals().stores.columns();
      await columns.settled();
      expect([columns.holdsExactVectors, columns.holdsEntries, columns.lazyProblem]).toEqual([true, true, undefined]);
      expect(loads(second).columns).toBe('snapshot');
    } finally {
      await second.close();
    }
    // One byte of the residual level flipped: the first answer is not held up, the structure is let go.
    const path = join(dir, 'snapshots', 'columns.snap');
    const bytes = await readFile(path);
    const headerLength = bytes.readUInt32LE(8);
    const header = JSON.parse(bytes.subarray(16, 16 + headerLength).toString('utf8')) as { arrays: { name: string; offset: number }[] };
    const residuals = header.arrays.find((a) => a.name === 'full.residualValues')!;
    bytes[Math.ceil((16 + headerLength) / 8) * 8 + residuals.offset + 3]! ^= 0xff;
    await writeFile(path, bytes);
    const third = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      const stores = third.unsafeExposeInternals().stores;
      const columns = await stores.columns();
      expect(loads(third).columns).toBe('snapshot');
      await columns.settled();
      expect(columns.lazyProblem).toBe('is damaged (the checksum of full.residualValues does not match)');
      expect(columns.holdsExactVectors).toBe(false);
      await new Promise((r) => setTimeout(r, 10));
      // The next query builds the columns again, and exact search is from memory as before.
      expect((await third.semanticSearch(task, { limit: 10 })).map((h) => h.entry.id)).toEqual(exact);
      expect(stores.residents.loads.get('columns')).toMatchObject({
        loadedFrom: 'built',
        note: expect.stringMatching(
          /columns\.snap is damaged \(the checksum of full\.residualValues does not match\); rebuilt from the stores$/,
        ),
      });
      expect((await stores.columns()).holdsExactVectors).toBe(true);
      await expectAsBuiltAfresh(stores, []);
    } finally {
      await third.close();
    }
  });

  it('read the parts a snapshot hands over later on their own once loads are quiet, with no query asking', async () => {
    const dir = await tempDir();
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await first.ingestDocument(linkedDocument(80), { source: 'first' });
    await first.buildTaskContext('cache eviction', { maxEntries: 5 }); // what is held is written on close
    await first.close();
    const second = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      await second.buildTaskContext('cache eviction leaks memory', { maxEntries: 5 });
      const columns = await second.unsafeExposeInternals().stores.columns();
      expect(second.unsafeExposeInternals().stores.residents.loads.get('columns')?.loadedFrom).toBe('snapshot');
      expect(columns.holdsEntries).toBe(false);
      // a timer, not a speed: polled for up to 20 s
      for (let i = 0; i < 200 && !columns.holdsEntries; i++) await new Promise((r) => setTimeout(r, 100));
      expect([columns.holdsEntries, columns.holdsExactVectors]).toEqual([true, true]);
    } finally {
      await second.close();
    }
  });

  it('are loaded whole by warm() before any query, later parts included, and the bundles stay as a cold process gives them', async () => {
    const tasks = ['cache eviction leaks memory', 'retry the webhook with a timeout', 'token rotation'];
    const dir = await tempDir();
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await first.ingestDocument(linkedDocument(120), { source: 'first' });
    await first.buildTaskContext('cache eviction', { maxEntries: 5 }); // what is held is written on close
    await first.close();
    const bundles = async (warm: boolean) => {
      const m = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {}, cache: { ttlMs: 0 } });
      try {
        const stores = m.unsafeExposeInternals().stores;
        if (warm) {
          await m.warm();
          const loads = Object.fromEntries([...stores.residents.loads].map(([key, load]) => [key, load.loadedFrom]));
          expect(loads).toEqual({
            columns: 'snapshot',
            keywords: 'snapshot',
            names: 'snapshot',
            adjacency: 'snapshot',
            'code-links': 'snapshot',
          });
          const columns = await stores.columns();
          expect([columns.holdsEntries, columns.holdsExactVectors, columns.lazyProblem]).toEqual([true, true, undefined]);
        } else {
          expect(stores.residents.loads.size).toBe(0);
        }
        const out = [];
        for (const task of tasks) {
          const b = await m.buildTaskContext(task, { maxEntries: 8 });
          // cold: the first bundle's entries were read from LanceDB, the later parts not yet in
          if (!warm && out.length === 0) expect((await stores.columns()).holdsEntries).toBe(false);
          // scores to 6 places: recency moves them with the clock between the two runs
          out.push({ entries: b.entries.map((e) => [e.entry.id, e.score.toFixed(6), e.entry.content]), code: b.codeRefs, notes: b.notes });
        }
        return out;
      } finally {
        await m.close();
      }
    };
    const cold = await bundles(false);
    expect(cold.map((b) => b.entries.length > 0)).toEqual([true, true, true]);
    expect(await bundles(true)).toEqual(cold);
  });

  it('of the graph are not loaded once the graph changed ahead of the generation, as within a write', async () => {
    const dir = await tempDir();
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await first.ingestDocument(linkedDocument(60), { source: 'first' });
    await first.buildTaskContext('cache eviction leaks memory when the disk fills up');
    await first.close();
    const second = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      const { stores } = second.unsafeExposeInternals();
      const generation = await stores.currentGeneration();
      // Written to the graph alone, as Stores.apply does before it moves the generation: the
      // snapshots of this generation no longer describe the graph, and neither structure is held.
      await stores.graph.write({
        entries: [],
        codeLocations: [
          {
            ...{ id: 'c99', codebaseId: 'app', filePath: 'src/new.ts', symbol: 'fresh', startLine: 1, endLine: null },
            ...{ language: null, kind: null, fingerprint: null, revision: null },
          },
        ],
        goldenPaths: [],
        relations: [{ type: 'REFERENCES_CODE', from: 's1', to: 'c99', relevance: 1 }],
      });
      await stores.graph.deleteEntries(['s2']);
      expect(await stores.currentGeneration()).toBe(generation);
      const references = await stores.graph.codeReferencesOf(['s1']);
      expect(references.map((r) => r.code.id)).toContain('c99');
      const reached = await stores.graph.reach(['s1'], { depth: 1, edgeTypes: ['RELATED'] });
      expect(reached.map((r) => r.targetId)).not.toContain('s2');
      expect(stores.residents.loads.get('code-links')).toMatchObject({ loadedFrom: 'built' });
      expect(stores.residents.loads.get('adjacency')).toMatchObject({ loadedFrom: 'built' });
    } finally {
      await second.close();
    }
  });

  it('are loaded once when the first queries ask for them at the same time', async () => {
    const dir = await tempDir();
    const first = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    await first.ingestDocument(linkedDocument(30), { source: 'first' });
    await first.close();
    const second = await openMemory({ path: dir, embedder: wordHashEmbedder(), env: {} });
    try {
      const { stores } = second.unsafeExposeInternals();
      const [a, b] = await Promise.all([stores.names(), stores.names()]);
      expect(a).toBe(b);
      const [c, d] = await Promise.all([stores.keywords(), stores.keywords()]);
      expect(c).toBe(d);
    } finally {
      await second.close();
    }
  });
});
