import { beforeAll, describe, expect, it } from 'vitest';
import { localEmbedder, openMemory, type Embedder, type MemoryEngine, type SearchHit } from '../src/index.js';
import { fitPca, project } from '../src/embed/matryoshka.js';
import { bridgeWords, keywordQuery } from '../src/retrieve/keywordCandidates.js';
import { defaultStage1Candidates, stage1Calibration } from '../src/retrieve/stage1Calibration.js';
import {
  EXAMPLE_FILE,
  gaussianEmbedder,
  memoEmbedder,
  phraseEmbedder,
  syntheticEntries,
  tempDir,
  tempDirForFile,
  wordHashEmbedder,
} from './helpers.js';

// The local model, each text embedded once for the file: the Matryoshka, filter and refit tests
// store the same synthetic entries in several folders.
const localModel = memoEmbedder(localEmbedder());
// The local model's whole share of the file, once, before any test: the filtered store's 1,000
// entries hold the 450 texts the other tests store. On a loaded machine this takes minutes; each
// test after it, seconds.
beforeAll(() => filteredStoreDir(), 600_000);

// Stage 1 scans small vectors in memory up to scanMaxEntries, and searches LanceDB past it (0 here);
// the entries are read from memory up to residentMaxEntries, and from LanceDB past it.
const STAGE1_MODES = [
  ['held in memory', {}, { small: true, entries: true }],
  ['scanned in memory, entries read from LanceDB', { residentMaxEntries: 0 }, { small: true, entries: false }],
  ['LanceDB', { scanMaxEntries: 0, residentMaxEntries: 0 }, { small: false, entries: false }],
] as const;

describe('matryoshkaSearch default stage-1 candidates', () => {
  it('scale the calibrated count with the store, within 600…10,000 and never below the limit; one per 400 entries without one', () => {
    const calibration = { entries: 100_000, candidates: 900, queries: 64 };
    expect(defaultStage1Candidates(100_000, 10, calibration)).toBe(900);
    expect(defaultStage1Candidates(200_000, 10, calibration)).toBe(1800);
    expect(defaultStage1Candidates(50_000, 10, calibration)).toBe(600);
    expect(defaultStage1Candidates(5_000_000, 10, calibration)).toBe(10_000);
    expect(defaultStage1Candidates(1000, 800, calibration)).toBe(800);
    expect(defaultStage1Candidates(240_000, 10)).toBe(600);
    expect(defaultStage1Candidates(1_000_000, 10)).toBe(2500);
  });

  const opened = async (embedder: Embedder, n: number) => {
    const m = await openMemory({ path: await tempDir(), embedder, smallDimensions: 4 });
    await m.upsert(Array.from({ length: n }, (_, i) => ({ id: `g${i}`, core_id: 'g', title: `entry ${i}`, content: `text ${i}` })));
    const stores = m.unsafeExposeInternals().stores;
    return { m, stores, columns: await stores.columns() };
  };

  it('are measured on the store: where the small vectors keep little of the full ones, enough more to keep the exact top 10', async () => {
    // Isotropic 64-d vectors, 4 small dimensions: the small order is a weak guide to the full one
    // (measured: ~1,700 candidates; 600 keep ~84% of the exact top 10).
    const { m, stores, columns } = await opened(gaussianEmbedder(64, 64), 2000);
    try {
      const calibration = stage1Calibration(columns, (v) => stores.smallVector(v))!;
      expect(calibration).toMatchObject({ entries: 2000, queries: 64 });
      expect(calibration.candidates).toBeGreaterThan(600);
      // Measured once per loaded columns
      expect(stage1Calibration(columns, (v) => stores.smallVector(v))).toBe(calibration);
      const recall = { default: 0, at600: 0 };
      for (let q = 0; q < 20; q++) {
        const exact = new Set((await m.semanticSearch(`query ${q}`, { limit: 10 })).map((h) => h.entry.id));
        const share = (hits: SearchHit[]) => hits.filter((h) => exact.has(h.entry.id)).length / 200;
        const byDefault = await m.matryoshkaSearch(`query ${q}`, { limit: 10 });
        expect(byDefault.stage1Candidates).toBe(calibration.candidates);
        recall.default += share(byDefault.hits);
        recall.at600 += share((await m.matryoshkaSearch(`query ${q}`, { limit: 10, candidates: 600 })).hits);
      }
      expect(recall.default).toBeGreaterThanOrEqual(0.97);
      expect(recall.at600).toBeLessThan(recall.default - 0.05);
    } finally {
      await m.close();
    }
  });

  it("stay at 600 where the small vectors keep the vectors' subspace, and are not measured on a store of 600 or fewer", async () => {
    const { m, stores, columns } = await opened(gaussianEmbedder(64, 4), 2000);
    try {
      expect(stage1Calibration(columns, (v) => stores.smallVector(v))!.candidates).toBeLessThan(50);
      expect((await m.matryoshkaSearch('query', { limit: 10 })).stage1Candidates).toBe(600);
    } finally {
      await m.close();
    }
    const small = await opened(gaussianEmbedder(64, 64), 600);
    try {
      expect(stage1Calibration(small.columns, (v) => small.stores.smallVector(v))).toBeUndefined();
    } finally {
      await small.m.close();
    }
  });
});

describe.each(STAGE1_MODES)('two-stage Matryoshka search, stage 1 %s (local model, fitted PCA projection)', (_, resident, holds) => {
  it('returns the same top-10 as an exact full-dimension search', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: localModel, ...resident });
    try {
      await m.upsert(syntheticEntries(300));
      const columns = await m.unsafeExposeInternals().stores.columns();
      expect({ small: columns.holdsSmallVectors, entries: columns.holdsEntries }).toEqual(holds);
      const queries = [
        'token refresh breaks when pods start',
        'migrations and schema changes',
        'payment retries by customers',
        'disk full during backups',
        'webhook timeouts',
        'cookies expire',
        'noon traffic spikes and rate limits',
        'vendor api changes exports',
      ];
      for (const q of queries) {
        const exact = (await m.semanticSearch(q, { limit: 10 })).map((h) => h.entry.id);
        const two = await m.matryoshkaSearch(q, { limit: 10, candidates: 100 });
        expect(two.stage1Candidates).toBe(100);
        expect(two.smallDimensions).toBe(128);
        expect(two.hits.map((h) => h.entry.id)).toEqual(exact);
      }
      // more entries, then a refit on all of them: a projection unlike the one fitted on the first 300
      await m.upsert(syntheticEntries(450).slice(300));
      const built = await m.index({ annMinRows: 1_000_000 });
      expect(built).toMatchObject({ ann: false, projection: 'pca', rows: 450 });
      const after = await m.matryoshkaSearch(queries[0]!, { limit: 10 });
      expect(after.hits.map((h) => h.entry.id)).toEqual((await m.semanticSearch(queries[0]!, { limit: 10 })).map((h) => h.entry.id));
      // the refit re-derived every small vector: the stage 1 in this process is the one a fresh open gives
      const narrow = await Promise.all(queries.map((q) => m.matryoshkaSearch(q, { limit: 10, candidates: 12 })));
      await m.close();
      const reopened = await openMemory({ path: dir, embedder: localModel, ...resident });
      try {
        expect(narrow).toEqual(await Promise.all(queries.map((q) => reopened.matryoshkaSearch(q, { limit: 10, candidates: 12 }))));
      } finally {
        await reopened.close();
      }
    } finally {
      await m.close();
    }
  });
});

/** ~12% of 1,000 entries (the refresh-token and session-cookie ones) in core b, the rest in a; every 20th with a rare tag. Ingested once, searched both ways. */
let filteredStore: Promise<string> | undefined;
function filteredStoreDir(): Promise<string> {
  filteredStore ??= (async () => {
    const dir = await tempDirForFile();
    const m = await openMemory({ path: dir, embedder: localModel });
    try {
      await m.upsert(
        syntheticEntries(1000).map((e, i) => ({
          ...e,
          core_id: /refresh tokens|session cookies/.test(e.title) ? 'b' : 'a',
          tags: i % 20 === 0 ? ['rare'] : [],
        })),
      );
    } finally {
      await m.close();
    }
    return dir;
  })();
  return filteredStore;
}

describe.each(STAGE1_MODES)('two-stage search under filters, stage 1 %s', (_, resident) => {
  // In LanceDB, stage 1 filters in memory when the filter lets most entries through, and pushes it
  // down when it does not, or when too few of the unfiltered neighbours pass; held in memory, the
  // scan applies the filter itself. Either way the hits must be those of an exact search with the
  // same filter.
  it('returns what an exact filtered search returns, whether the filter is permissive, selective, or passes few of the nearest', async () => {
    const m = await openMemory({ path: await filteredStoreDir(), embedder: localModel, ...resident });
    try {
      const cases: [string, { cores?: string[]; tags?: string[] }, number][] = [
        ['webhook delivery needs a timeout', { cores: ['a'] }, 100], // 88% pass: filtered in memory
        ['refresh tokens and session cookies expire', { cores: ['a'] }, 100], // the nearest are mostly b's: pushed down after all
        ['refresh tokens and session cookies expire', { cores: ['b'] }, 100], // 12% pass: pushed down
        ['backup restores when the disk fills up', { tags: ['rare'] }, 50], // 5% pass (50 entries): pushed down
      ];
      for (const [query, filter, stage1] of cases) {
        const exact = (await m.semanticSearch(query, { limit: 10, ...filter })).map((h) => h.entry.id);
        const two = await m.matryoshkaSearch(query, { limit: 10, candidates: 100, ...filter });
        expect(two.stage1Candidates, `${query} ${JSON.stringify(filter)}`).toBe(stage1);
        expect(
          two.hits.map((h) => h.entry.id),
          `${query} ${JSON.stringify(filter)}`,
        ).toEqual(exact);
      }
    } finally {
      await m.close();
    }
  });
});

describe('keyword evidence for every candidate', () => {
  it("weighs a graph-reached entry by the task's words in it, though the keyword search's limit left it out", async () => {
    // One vector for every text: similarity cannot tell the two people apart, nor can the graph
    // (one edge each from the film). Only the words do: the director's entry says "director" and
    // "born", the actor's does not. The keyword search is cut to 3 hits, which the film and the
    // distractors (more "director born" than anyone) take.
    const m = await openMemory({ path: await tempDir(), embedder: phraseEmbedder([], 4) });
    try {
      await m.ingestDocument({
        core_id: 'films',
        // (first, so that the vector search, where every entry ties, also returns them)
        entries: [
          ...[1, 2, 3, 4].map((i) => ({
            id: `a${i}`,
            title: `Director ${i}`,
            content: 'director born director born, a film director born there',
          })),
          { id: 'film-alpha', title: 'Alpha film', content: 'Alpha film was directed by Bob Smith and stars Carl Jones.' },
          { id: 'pz-bob', title: 'Bob Smith', content: 'Bob Smith is a director; he was born in Ohio.' },
          { id: 'pa-carl', title: 'Carl Jones', content: 'Carl Jones is an actor who paints in Maine.' },
        ],
        relations: [
          { from: 'film-alpha', to: 'pz-bob', type: 'RELATED' },
          { from: 'film-alpha', to: 'pa-carl', type: 'RELATED' },
        ],
      });
      const bundle = await m.buildTaskContext('Where was the director of Alpha film born?', { candidates: 3, maxEntries: 10 });
      const ids = bundle.entries.map((e) => e.entry.id);
      const bob = bundle.entries.find((e) => e.entry.id === 'pz-bob')!;
      expect(bob.why.every((r) => r.kind === 'graph')).toBe(true); // no search returned it: reached from the film
      expect(ids.indexOf('pz-bob')).toBeGreaterThanOrEqual(0);
      expect(ids.indexOf('pz-bob')).toBeLessThan(ids.indexOf('pa-carl'));
      // with keyword evidence off, the two tie and the id decides
      const off = (
        await m.buildTaskContext('Where was the director of Alpha film born?', { candidates: 3, maxEntries: 10, weights: { keyword: 0 } })
      ).entries.map((e) => e.entry.id);
      expect(off.indexOf('pa-carl')).toBeLessThan(off.indexOf('pz-bob'));
    } finally {
      await m.close();
    }
  });
});

describe('bridge words: what a task asks of the entries it names', () => {
  it('drops the names a task mentions and keeps the rest of its content words', () => {
    const q = keywordQuery('Where was the composer of film Billy Elliot born?');
    expect(bridgeWords(q, ['Billy Elliot'])).toBe('composer film born');
    // stems and stop words as BM25 sees them: "The Heart Of Doreon" takes "Heart" and "Doreon", not "of"
    expect(
      bridgeWords(keywordQuery('Which film whose director was born first, El Tonto or The Heart Of Doreon?'), [
        'El Tonto',
        'The Heart Of Doreon',
      ]),
    ).toBe('film whose director born first');
    expect(bridgeWords(q, [])).toBe('');
    expect(bridgeWords(keywordQuery('Billy Elliot'), ['Billy Elliot'])).toBe('');
  });

  it('ranks the neighbour that answers the relation above neighbours that repeat the name', async () => {
    // The people's texts are far from the task's vector, and the film has one edge to each of them:
    // only words separate them. The actors say "Billy Elliot" again and again, so against the whole
    // task (whose rare words are the name) they outscore the composer; against "composer … born"
    // he comes first. One seed, the film the task names, so the people are reached, not seeds.
    const far = [1, 0, 0, 0];
    const embedder = phraseEmbedder(
      [
        ['Sam Warbeck is', far],
        ['Jo Bell played', far],
        ['Ann Walters was', far],
        ['A stage play', far],
      ],
      4,
    );
    const m = await openMemory({ path: await tempDir(), embedder });
    try {
      await m.ingestDocument({
        core_id: 'films',
        entries: [
          {
            id: 'film',
            title: 'Billy Elliot',
            content: 'Billy Elliot is a 2000 film with music by Sam Warbeck, starring Jo Bell and Ann Walters.',
          },
          {
            id: 'p-sam',
            title: 'Sam Warbeck',
            content: 'Sam Warbeck is an English composer for theatre and television, born in Southampton.',
          },
          {
            id: 'p-jo',
            title: 'Jo Bell',
            content: 'Jo Bell played Billy Elliot; Billy Elliot made Jo Bell a star, and Billy Elliot toured.',
          },
          {
            id: 'p-ann',
            title: 'Ann Walters',
            content: 'Ann Walters was in Billy Elliot, the Billy Elliot tour and Billy Elliot on stage.',
          },
          ...Array.from({ length: 12 }, (_, i) => ({
            id: `x${i}`,
            title: `Other ${i}`,
            content: `A stage play number ${i} about miners and a strike, born of the eighties.`,
          })),
        ],
        relations: ['p-sam', 'p-jo', 'p-ann'].map((to) => ({ from: 'film', to, type: 'RELATED' })),
      });
      const task = 'Where was the composer of film Billy Elliot born?';
      const ranked = async (weights = {}) =>
        (await m.buildTaskContext(task, { maxEntries: 8, seeds: 1, weights, evidenceCut: false })).entries.map((e) => e.entry.id);
      const on = await ranked();
      expect(on.slice(0, 4)).toEqual(['film', 'p-sam', 'p-ann', 'p-jo']);
      // without bridge evidence the name-repeating actors come first
      const off = await ranked({ bridge: 0 });
      expect(off.indexOf('p-jo')).toBeLessThan(off.indexOf('p-sam'));
      expect(off.indexOf('p-ann')).toBeLessThan(off.indexOf('p-sam'));
    } finally {
      await m.close();
    }
  });
});

describe('keyword and hybrid search', () => {
  // The query's vector sits near the paraphrase and the distractors; the keyword entry's vector is far away.
  const q = [1, 0, 0, 0];
  const embedder = phraseEmbedder(
    [
      ['zebra crossing', q],
      ['striped horses', [0.95, 0.3, 0, 0]],
      ['distractor', [0.9, 0.4, 0.1, 0]],
      ['Zebra', [0, 0, 1, 0]],
    ],
    4,
  );
  const fixture = {
    core_id: 'k',
    entries: [
      { id: 'keyword', title: 'Zebra release train', content: 'The Zebra train ships on Thursdays.' },
      { id: 'paraphrase', title: 'Moving striped horses across the road', content: 'Animals pass where cars must halt.' },
      ...[1, 2, 3].map((i) => ({ id: `d${i}`, title: `distractor ${i}`, content: `another distractor text ${i}` })),
    ],
  };

  it('hybrid finds the exact-keyword entry vectors miss and the paraphrase keywords miss', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder });
    try {
      await m.ingestDocument(fixture);
      const vector = (await m.semanticSearch('zebra crossing', { limit: 3 })).map((h) => h.entry.id);
      const keyword = (await m.keywordSearch('zebra crossing', { limit: 3 })).map((h) => h.entry.id);
      const hybrid = (await m.hybridSearch('zebra crossing', { limit: 3 })).map((h) => h.entry.id);
      expect(vector).toContain('paraphrase');
      expect(vector).not.toContain('keyword');
      expect(keyword).toEqual(['keyword']);
      expect(hybrid.slice(0, 2).sort()).toEqual(['keyword', 'paraphrase']);
      const weighted = await m.hybridSearch('zebra crossing', { limit: 5, fusion: 'weighted', fusionWeights: [1, 0] });
      expect(weighted[0]!.entry.id).toBe('paraphrase');
      // One fusion, said three ways: the new name, the former one, and the object buildTaskContext takes.
      const ids = (hits: { entry: { id: string }; score: number }[]) => hits.map((h) => [h.entry.id, h.score]);
      expect(ids(await m.hybridSearch('zebra crossing', { limit: 5, fusion: 'weighted', weights: [1, 0] }))).toEqual(ids(weighted));
      expect(ids(await m.hybridSearch('zebra crossing', { limit: 5, fusion: { method: 'weighted', weights: [1, 0] } }))).toEqual(
        ids(weighted),
      );
      const rrf = await m.hybridSearch('zebra crossing', { limit: 5, fusion: 'rrf', k: 10, fusionWeights: [2, 1] });
      expect(ids(await m.hybridSearch('zebra crossing', { limit: 5, fusion: { method: 'rrf', k: 10, weights: [2, 1] } }))).toEqual(
        ids(rrf),
      );
      await expect(m.hybridSearch('zebra', { fusionWeights: [1, 0], weights: [1, 0] })).rejects.toThrow(
        /give fusionWeights \(weights is its former name\), not both/,
      );
      await expect(m.hybridSearch('zebra', { fusion: { method: 'rrf', k: 5 }, k: 6 })).rejects.toThrow(/give k once/);
      await expect(m.hybridSearch('zebra', { fusion: { metod: 'rrf' } as never })).rejects.toThrow(
        /hybridSearch.fusion: unknown option "metod" \(did you mean "method"\?\)/,
      );
      await expect(m.hybridSearch('zebra', { fusion: { method: 'borda' } as never })).rejects.toThrow(
        /fusion\.method must be rrf or weighted, got "borda"/,
      );
      await expect(m.hybridSearch('zebra', { fusionWeights: [1] as never })).rejects.toThrow(
        /fusionWeights must be \[vectorWeight, keywordWeight\]/,
      );
      // The scoring weights of buildTaskContext: scoringWeights, or their former name weights.
      // Scores move with the clock (recency) in the last places.
      const scored = (b: Awaited<ReturnType<typeof m.buildTaskContext>>) => b.entries.map((e) => [e.entry.id, e.score.toFixed(6)]);
      const noKeyword = await m.buildTaskContext('zebra crossing', { maxEntries: 5, scoringWeights: { keyword: 0 } });
      expect(scored(await m.buildTaskContext('zebra crossing', { maxEntries: 5, weights: { keyword: 0 } }))).toEqual(scored(noKeyword));
      expect(scored(noKeyword)).not.toEqual(scored(await m.buildTaskContext('zebra crossing', { maxEntries: 5 })));
      await expect(m.buildTaskContext('zebra', { weights: {}, scoringWeights: {} })).rejects.toThrow(
        /give scoringWeights \(weights is its former name\), not both/,
      );
      await expect(m.buildTaskContext('zebra', { scoringWeights: { simlarity: 1 } as never })).rejects.toThrow(
        /scoringWeights: unknown option "simlarity"/,
      );
      // buildTaskContext uses both lists too
      const bundle = await m.buildTaskContext('zebra crossing', { maxEntries: 5, threshold: 0.5 });
      expect(bundle.entries.map((e) => e.entry.id)).toContain('keyword');
      expect(bundle.entries.find((e) => e.entry.id === 'keyword')!.why).toEqual([
        { kind: 'keyword', rank: 1, score: 1, bm25: expect.any(Number) },
      ]);
    } finally {
      await m.close();
    }
  });

  it('searches the content words of a question, keeping function words that are part of a name', async () => {
    expect(keywordQuery('What did Caroline research?')).toBe('Caroline research');
    expect(keywordQuery('Who sang When The Stars Go Blue? When was it?')).toBe('sang When The Stars Go Blue'); // mid-sentence capitals are a name
    expect(keywordQuery('what is it')).toBe('what is it'); // nothing but function words: kept whole
    expect(keywordQuery('IT asks who owns the US office')).toBe('IT asks owns US office'); // acronyms are not the pronouns
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder() });
    try {
      await m.ingestDocument({
        core_id: 'chat',
        entries: [
          { id: 'question', title: 'turn 1', content: 'Caroline: Cool! What did it look like?' },
          { id: 'answer', title: 'turn 2', content: 'Caroline: I researched adoption agencies all week and loved it.' },
          { id: 'other', title: 'turn 3', content: 'Melanie: We went camping by the lake.' },
        ],
      });
      // "what did … Caroline" would make the short question turn the best BM25 match
      expect((await m.keywordSearch('What did Caroline research?', { limit: 3 })).map((h) => h.entry.id)).toEqual(['answer', 'question']);
    } finally {
      await m.close();
    }
  });

  it('keyword search treats query syntax and quotes as plain text', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder });
    try {
      await m.ingestDocument(fixture);
      for (const q of ["o'brien", 'a\\b', '"unclosed', 'AND OR NOT', '日本語']) expect(await m.keywordSearch(q)).toEqual([]);
      expect(await m.keywordSearch('zebra', { cores: ['other'] })).toEqual([]);
    } finally {
      await m.close();
    }
  });
});

describe('traverse', () => {
  it('respects depth, relation types and direction', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder() });
    try {
      await m.ingestDocument({
        core_id: 'g',
        entries: ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, title: id, content: id })),
        relations: [
          { type: 'DEPENDS_ON', from: 'a', to: 'b' },
          { type: 'DEPENDS_ON', from: 'b', to: 'c' },
          { type: 'RELATED', from: 'd', to: 'a' },
          { type: 'SUPERSEDES', from: 'e', to: 'c' },
        ],
      });
      const ids = (hits: { entry: { id: string }; hops: number }[]) => hits.map((h) => `${h.entry.id}:${h.hops}`);
      expect(ids(await m.traverse('a', { depth: 1 }))).toEqual(['b:1', 'd:1']);
      expect(ids(await m.traverse('a', { depth: 2 }))).toEqual(['b:1', 'd:1', 'c:2']);
      expect(ids(await m.traverse('a', { depth: 3 }))).toEqual(['b:1', 'd:1', 'c:2', 'e:3']);
      expect(ids(await m.traverse('a', { depth: 3, relationTypes: ['DEPENDS_ON'] }))).toEqual(['b:1', 'c:2']);
      expect(ids(await m.traverse('a', { depth: 3, direction: 'outgoing' }))).toEqual(['b:1', 'c:2']);
      expect(ids(await m.traverse('a', { depth: 3, direction: 'incoming' }))).toEqual(['d:1']);
      expect(ids(await m.traverse('c', { depth: 1, direction: 'incoming' }))).toEqual(['b:1', 'e:1']);
      const toE = (await m.traverse('a', { depth: 3 })).find((h) => h.entry.id === 'e')!;
      expect(toE.path).toEqual([
        { type: 'DEPENDS_ON', from: 'a', to: 'b' },
        { type: 'DEPENDS_ON', from: 'b', to: 'c' },
        { type: 'SUPERSEDES', from: 'e', to: 'c' },
      ]);
      await expect(m.traverse('zzz')).rejects.toThrow(/no entry with id "zzz"/);
      await expect(m.traverse('a', { depth: 0 })).rejects.toThrow(/depth must be/);
      await expect(m.traverse('a', { direction: 'up' as never })).rejects.toThrow(/direction must be/);
    } finally {
      await m.close();
    }
  });
});

describe('patterns on the example core', () => {
  async function withExample<T>(fn: (m: MemoryEngine) => Promise<T>): Promise<T> {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder(256) });
    try {
      await m.ingest(EXAMPLE_FILE);
      return await fn(m);
    } finally {
      await m.close();
    }
  }

  it('findGoldenPaths matches names, concepts and step key concepts', async () => {
    await withExample(async (m) => {
      expect((await m.findGoldenPaths(['ROTATION'])).map((p) => p.id)).toEqual(['gp-refresh-flow']);
      expect((await m.findGoldenPaths(['WAL'])).map((p) => p.id)).toEqual(['gp-add-column']); // a step's key concept only
      const both = await m.findGoldenPaths(['error handling', 'expand', 'nothing-like-this']);
      expect(both.map((p) => [p.id, p.matched])).toEqual([
        ['gp-add-column', 1],
        ['gp-error-path', 1],
      ]);
      expect(both[0]!.steps.map((s) => s.order)).toEqual([1, 2, 3, 4]);
      await expect(m.findGoldenPaths([])).rejects.toThrow(/non-empty concepts/);
    });
  });

  it('findRelatedToCode ranks the entries referencing a file by the query', async () => {
    await withExample(async (m) => {
      const hits = await m.findRelatedToCode('src/auth/tokenService.ts', 'concurrent tabs reuse race');
      expect(hits.map((h) => h.entry.id)).toEqual(['auth-refresh-reuse-race', 'auth-refresh-rotation']);
      expect(hits[0]!.references).toEqual([{ code: expect.objectContaining({ symbol: 'rotateRefreshToken' }), relevance: 0.9 }]);
      expect(await m.findRelatedToCode('no/such/file.ts', 'x')).toEqual([]);
    });
  });

  it('findWithContext returns scored seeds and graph-reached entries without code', async () => {
    await withExample(async (m) => {
      const entries = await m.findWithContext('refresh token family redis ttl', {
        seeds: 1,
        maxEntries: 20,
        threshold: 0.3,
        keyword: false,
        graphRanking: 'proximity',
      });
      const byId = new Map(entries.map((e) => [e.entry.id, e]));
      expect(entries[0]!.entry.id).toBe('auth-revocation-store');
      const reached = byId.get('auth-logout-everywhere')!;
      expect(reached.why.some((r) => r.kind === 'graph' && r.seedId === 'auth-revocation-store')).toBe(true);
    });
  });
});

describe('context cache', () => {
  it('hits on a repeat, misses after any write (this engine or another on the folder), shares concurrent calls', async () => {
    const dir = await tempDir();
    const embedder = wordHashEmbedder();
    const a = await openMemory({ path: dir, embedder });
    const b = await openMemory({ path: dir, embedder });
    try {
      await a.upsert([{ id: 'x', core_id: 'c', title: 'cache me', content: 'bundle cache test' }]);
      const first = await a.buildTaskContext('cache test');
      expect(first.cacheHit).toBe(false);
      const again = await a.buildTaskContext('  Cache   TEST ');
      expect(again.cacheHit).toBe(true);
      expect(again.entries).toEqual(first.entries);
      expect((await a.buildTaskContext('cache test', { maxEntries: 3 })).cacheHit).toBe(false); // other options, other key

      await a.upsert([{ id: 'y', core_id: 'c', title: 'cache test two', content: 'second' }]);
      const afterOwnWrite = await a.buildTaskContext('cache test');
      expect(afterOwnWrite.cacheHit).toBe(false);
      expect(afterOwnWrite.entries.map((e) => e.entry.id)).toContain('y');

      await b.delete(['y']); // another engine on the same folder
      const afterOtherWrite = await a.buildTaskContext('cache test');
      expect(afterOtherWrite.cacheHit).toBe(false);
      expect(afterOtherWrite.entries.map((e) => e.entry.id)).not.toContain('y');

      embedder.calls = 0;
      const [p, q] = await Promise.all([a.buildTaskContext('shared call'), a.buildTaskContext('shared call')]);
      expect(embedder.calls).toBe(1);
      expect(p).toBe(q);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('can be turned off', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder(), cache: { ttlMs: 0 } });
    try {
      await m.upsert([{ id: 'x', core_id: 'c', title: 't', content: 'c' }]);
      await m.buildTaskContext('t');
      expect((await m.buildTaskContext('t')).cacheHit).toBe(false);
    } finally {
      await m.close();
    }
  });

  it('a call aborted while it runs rejects with AbortError and caches nothing', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder() });
    try {
      await m.upsert([{ id: 'x', core_id: 'c', title: 't', content: 'c' }]);
      const ac = new AbortController();
      const pending = m.buildTaskContext('abort me', { signal: ac.signal });
      ac.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      expect((await m.buildTaskContext('abort me')).cacheHit).toBe(false);
    } finally {
      await m.close();
    }
  });
});

describe('supersession in every search', () => {
  it('leaves superseded entries out of each strategy, and brings them back with asOf', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder() });
    try {
      await m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'old', title: 'deploy with fabric', content: 'deploy steps', created_at: '2020-01-01' },
          { id: 'new', title: 'deploy with argo', content: 'deploy steps', created_at: '2024-01-01' },
          ...Array.from({ length: 30 }, (_, i) => ({ id: `n${i}`, title: `noise ${i}`, content: `unrelated ${i}` })),
        ],
        relations: [{ type: 'SUPERSEDES', from: 'new', to: 'old' }],
      });
      const ids = (hits: { entry: { id: string } }[]) => hits.map((h) => h.entry.id);
      expect(ids(await m.semanticSearch('deploy steps', { limit: 1 }))).toEqual(['new']);
      expect(ids((await m.matryoshkaSearch('deploy steps', { limit: 1 })).hits)).toEqual(['new']);
      expect(ids(await m.keywordSearch('deploy', { limit: 5 }))).toEqual(['new']);
      expect(ids(await m.hybridSearch('deploy steps', { limit: 1 }))).toEqual(['new']);
      expect(ids(await m.semanticSearch('deploy steps', { limit: 2, asOf: new Date('2022-01-01') }))).toContain('old');
      // a supersession added later takes effect at once
      expect(ids(await m.semanticSearch('noise 3', { limit: 1 }))).toEqual(['n3']);
      await m.link([{ type: 'SUPERSEDES', from: 'n4', to: 'n3' }]);
      expect(ids(await m.semanticSearch('noise 3', { limit: 1 }))).not.toEqual(['n3']);
      await m.delete(['n4']);
      expect(ids(await m.semanticSearch('noise 3', { limit: 1 }))).toEqual(['n3']);
    } finally {
      await m.close();
    }
  });
});

describe('small-vector length', () => {
  it('is chosen per database and checked', async () => {
    const dir = await tempDir();
    const m = await openMemory({ path: dir, embedder: wordHashEmbedder(64), smallDimensions: 32 });
    try {
      await m.upsert([{ id: 'a', core_id: 'c', title: 'alpha beta', content: 'gamma' }]);
      const r = await m.matryoshkaSearch('alpha', { smallDims: 32 });
      expect(r).toMatchObject({ smallDimensions: 32, stage1Candidates: 1 });
      await expect(m.matryoshkaSearch('alpha', { smallDims: 16 })).rejects.toThrow(/stores 32-d small vectors/);
    } finally {
      await m.close();
    }
    await expect(openMemory({ path: dir, embedder: wordHashEmbedder(64), smallDimensions: 16 })).rejects.toThrow(
      /applies only to a new database/,
    );
    await expect(openMemory({ path: await tempDir(), embedder: wordHashEmbedder(64), smallDimensions: 65 })).rejects.toThrow(
      /from 1 to 64/,
    );
  });
});

describe('refitting the small-vector projection', () => {
  it('fits on an even sample of the stored vectors and re-derives every small vector in batches, as one pass over all of them would', async () => {
    const m = await openMemory({ path: await tempDir(), embedder: localModel });
    try {
      await m.upsert(syntheticEntries(450));
      const stores = m.unsafeExposeInternals().stores;
      const before = await stores.table.read({}, { withVectors: true });
      // the sample is the rows fitPca would pick of all of them
      const vectors = before.map((s) => s.vector!);
      expect(await stores.table.sampleVectors(100)).toEqual(Array.from({ length: 100 }, (_, i) => vectors[Math.floor(i * 4.5)]));
      expect(await stores.table.sampleVectors(1000)).toEqual(vectors);

      const loaded = await stores.columns();
      const progress: [number, number][] = [];
      expect(await stores.refitProjection({ batchRows: 100, onProgress: (done, total) => progress.push([done, total]) })).toBe(true);
      expect(progress).toEqual([
        [100, 450],
        [200, 450],
        [300, 450],
        [400, 450],
        [450, 450],
      ]);
      const projection = stores.projection;
      expect(projection).toEqual({ ...fitPca(vectors, 128), fittedOn: 450 });
      const after = await stores.table.read({}, { withVectors: true });
      expect(after.map((s) => s.entry.id).sort()).toEqual(before.map((s) => s.entry.id).sort()); // each row once
      for (const s of after) expect(s.vectorSmall).toEqual(project(s.vector!, projection));
      // the columns loaded before the refit held the old small vectors: the next query loads the new ones
      const columns = await stores.columns();
      expect(columns).not.toBe(loaded);
      const [nearest] = columns.nearestSmall(stores.smallVector(vectors[7]!), {}, 1)!;
      expect(nearest!.id).toBe(before[7]!.entry.id);
      expect(nearest!.similarity).toBeGreaterThan(0.99);
    } finally {
      await m.close();
    }
  });
});
