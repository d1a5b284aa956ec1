import { readdir, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localEmbedder, MemcoreError, openAIChat, openAIEmbedder, openMemory } from '../src/index.js';
import { OptionError } from '../src/model/options.js';
import { chunkText } from '../src/embed/chunkText.js';
import { cosineSimilarity } from '../src/embed/embedder.js';
import { startFakeOpenAI } from './openaiServer.js';
import { EXAMPLE_FILE, tempDir, withEngine, wordHashEmbedder } from './helpers.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { graphFileName } from '../src/store/graph/drivers.js';

/** The graph file of a folder made with the default graph database. */
const GRAPH_FILE = graphFileName(DEFAULTS.store.graph);
const GRAPH_FILE_PATTERN = GRAPH_FILE.replace('.', '\\.');

const ids = (hits: { entry: { id: string } }[]) => hits.map((h) => h.entry.id).sort();

describe('asOf: created_at, valid_from, valid_to and SUPERSEDES combined', () => {
  // Every entry mentions "refund policy", so every search finds all that pass the time filter.
  const entries = [
    { id: 'policy-2024', title: 'refund policy 2024', content: 'refund policy: 30 days', created_at: '2024-01-01' },
    { id: 'policy-2025', title: 'refund policy 2025', content: 'refund policy: 14 days', created_at: '2025-01-01' },
    // written in 2025 about a rule in force since 2023: valid_from, when given, is when it took effect
    {
      id: 'backdated',
      title: 'refund policy exception',
      content: 'refund policy: gift cards never',
      created_at: '2025-03-01',
      valid_from: '2023-01-01',
    },
    {
      id: 'expired',
      title: 'refund policy holiday rule',
      content: 'refund policy: 60 days in december',
      created_at: '2021-01-01',
      valid_to: '2023-01-01',
    },
    {
      id: 'not-yet',
      title: 'refund policy 2030',
      content: 'refund policy: store credit',
      created_at: '2020-01-01',
      valid_from: '2030-01-01',
    },
  ];
  const relations = [{ type: 'SUPERSEDES' as const, from: 'policy-2025', to: 'policy-2024' }];
  const cases: [asOf: string | undefined, expected: string[]][] = [
    ['2020-06-01', []], // nothing existed yet ('not-yet' was written but takes effect in 2030)
    ['2022-06-01', ['expired']], // 'backdated' takes effect in 2023
    ['2024-06-01', ['backdated', 'policy-2024']], // the 2025 policy was not written yet, so 2024's was not superseded
    ['2025-06-01', ['backdated', 'policy-2025']], // superseded once its successor took effect
    [undefined, ['backdated', 'policy-2025']],
    ['2030-06-01', ['backdated', 'not-yet', 'policy-2025']],
  ];

  it('gives the memory as it stood at each time, on every search and the context', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({ core_id: 'c', entries, relations });
      for (const [when, expected] of cases) {
        const asOf = when === undefined ? {} : { asOf: new Date(when) };
        const label = `asOf ${when ?? 'now'}`;
        expect(ids((await m.buildTaskContext('refund policy', { ...asOf, threshold: -1 })).entries), label).toEqual(expected);
        expect(ids(await m.keywordSearch('refund policy', asOf)), label).toEqual(expected);
        expect(ids(await m.hybridSearch('refund policy', { ...asOf, threshold: -1 })), label).toEqual(expected);
        // semanticSearch filters in LanceDB's SQL, not in the columns held in memory
        expect(ids(await m.semanticSearch('refund policy', { ...asOf, threshold: -1 })), label).toEqual(expected);
      }
    });
  });
});

describe('recency and the time filters', () => {
  const old = {
    id: 'old',
    title: 'retry webhooks with backoff',
    content: 'retry webhooks with exponential backoff',
    created_at: '2020-01-01',
  };
  const fresh = { id: 'fresh', title: 'retry webhooks with backoff', content: 'retry webhooks with exponential backoff' };

  it('counts recency from the entry’s own date: created_at, moved only by a change of its text', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      const before = Date.now();
      await m.ingestDocument({ core_id: 'c', entries: [old, fresh] });
      const [o, f] = await m.getEntries(['old', 'fresh']);
      expect(o!.updatedAt.toISOString()).toBe('2020-01-01T00:00:00.000Z');
      expect(f!.updatedAt.getTime()).toBe(f!.createdAt.getTime());
      expect(f!.updatedAt.getTime()).toBeGreaterThanOrEqual(before);
      // Same text, same evidence: the 2020 entry, ingested just now, is the older one.
      const bundle = await m.buildTaskContext('retry webhooks', { threshold: -1 });
      expect(bundle.entries.map((e) => e.entry.id)).toEqual(['fresh', 'old']);
      expect(bundle.entries[0]!.score).toBeGreaterThan(bundle.entries[1]!.score);
      // A change of importance does not make it fresh; a change of its text does.
      await m.ingestDocument({ core_id: 'c', entries: [{ ...old, importance: 9 }] });
      expect((await m.getEntries(['old']))[0]!.updatedAt.toISOString()).toBe('2020-01-01T00:00:00.000Z');
      await m.ingestDocument({ core_id: 'c', entries: [{ ...old, importance: 9, content: `${old.content}, capped at an hour` }] });
      expect((await m.getEntries(['old']))[0]!.updatedAt.getTime()).toBeGreaterThanOrEqual(before);
    });
  });

  it("scoreCombination 'product' multiplies relevance by importance and recency", async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        core_id: 'c',
        entries: [
          { ...old, importance: 10 },
          { ...fresh, importance: 2 },
        ],
      });
      const sum = await m.buildTaskContext('retry webhooks', { threshold: -1 });
      const product = await m.buildTaskContext('retry webhooks', { threshold: -1, scoreCombination: 'product' });
      // Importance 10 outweighs six years in the sum (0.07 × 0.8 against 0.03 × ~1)…
      expect(sum.entries.map((e) => e.entry.id)).toEqual(['old', 'fresh']);
      // …while in the product six years of 180-day half-lives leave the old entry ~1/4000 of its relevance.
      expect(product.entries.map((e) => e.entry.id)).toEqual(['fresh', 'old']);
      const [p0, p1] = product.entries;
      expect(p1!.score / p0!.score).toBeLessThan(0.01);
      await expect(m.buildTaskContext('retry webhooks', { scoreCombination: 'max' as never })).rejects.toThrow(
        /scoreCombination must be one of sum, product/,
      );
    });
  });

  it('minImportance, createdAfter and createdBefore filter every search', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingestDocument({
        core_id: 'c',
        entries: [
          { id: 'a', title: 'cache warmup a', content: 'cache warmup', importance: 3, created_at: '2023-05-01' },
          { id: 'b', title: 'cache warmup b', content: 'cache warmup', importance: 7, created_at: '2024-05-01' },
          { id: 'c', title: 'cache warmup c', content: 'cache warmup', importance: 9, created_at: '2025-05-01' },
        ],
      });
      const filters: [object, string[]][] = [
        [{ minImportance: 7 }, ['b', 'c']],
        [{ createdAfter: new Date('2024-05-01') }, ['b', 'c']], // inclusive
        [{ createdBefore: new Date('2024-05-01') }, ['a']], // exclusive
        [{ createdAfter: new Date('2024-01-01'), createdBefore: new Date('2025-01-01'), minImportance: 5 }, ['b']],
      ];
      for (const [filter, expected] of filters) {
        const label = JSON.stringify(filter);
        expect(ids((await m.buildTaskContext('cache warmup', { ...filter, threshold: -1 })).entries), label).toEqual(expected);
        expect(ids(await m.keywordSearch('cache warmup', filter)), label).toEqual(expected);
        expect(ids(await m.semanticSearch('cache warmup', { ...filter, threshold: -1 })), label).toEqual(expected);
        expect(ids(await m.hybridSearch('cache warmup', { ...filter, threshold: -1 })), label).toEqual(expected);
      }
      await expect(m.keywordSearch('cache', { minImportance: 11 })).rejects.toThrow(/minImportance must be an integer from 1 to 10/);
      await expect(m.keywordSearch('cache', { createdAfter: '2024' as never })).rejects.toThrow(/createdAfter must be a valid Date/);
      await expect(
        m.keywordSearch('cache', { createdAfter: new Date('2025-01-01'), createdBefore: new Date('2024-01-01') }),
      ).rejects.toThrow(/createdBefore must be later/);
    });
  });
});

describe('unknown options are errors', () => {
  it('names the option, what was given and what is allowed, at every method and nested bag', async () => {
    const dir = await tempDir();
    await withEngine(dir, async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const calls: [string, () => Promise<unknown>, string][] = [
        ['buildTaskContext', () => m.buildTaskContext('jwt', { maxEntires: 3 } as never), 'maxEntires'],
        ['buildTaskContext.weights', () => m.buildTaskContext('jwt', { weights: { simlarity: 1 } } as never), 'simlarity'],
        [
          'buildTaskContext.weights.edgeWeights',
          () => m.buildTaskContext('jwt', { weights: { edgeWeights: { RELATES: 1 } } } as never),
          'RELATES',
        ],
        ['buildTaskContext.fusion', () => m.buildTaskContext('jwt', { fusion: { method: 'rrf', kk: 3 } } as never), 'kk'],
        ['findWithContext', () => m.findWithContext('jwt', { includeCode: true } as never), 'includeCode'],
        ['semanticSearch', () => m.semanticSearch('jwt', { minImportance: 3, limt: 2 } as never), 'limt'],
        ['matryoshkaSearch', () => m.matryoshkaSearch('jwt', { fusion: 'rrf' } as never), 'fusion'],
        ['keywordSearch', () => m.keywordSearch('jwt', { threshold: 0.5 } as never), 'threshold'],
        ['hybridSearch', () => m.hybridSearch('jwt', { smallDims: 64 } as never), 'smallDims'],
        ['traverse', () => m.traverse('auth-refresh-rotation', { hops: 2 } as never), 'hops'],
        ['findRelatedToCode', () => m.findRelatedToCode('src/auth', 'jwt', { k: 2 } as never), 'k'],
        ['findByCodeReference', () => m.findByCodeReference({ path: 'src' } as never), 'path'],
        ['ingestDocument', () => m.ingestDocument({ entries: [] }, { autolink: true } as never), 'autolink'],
        ['upsert', () => m.upsert([], { source: 'x' } as never), 'source'],
        ['index', () => m.index({ annMinRow: 1 } as never), 'annMinRow'],
      ];
      for (const [where, call, bad] of calls) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, where).toBeInstanceOf(OptionError);
        const e = error as OptionError;
        expect(e.code).toBe('INVALID_INPUT');
        expect(e.option, where).toBe(`${where}.${bad}`);
        expect(e.message, where).toContain(`unknown option "${bad}"`);
        expect(e.allowed.length, where).toBeGreaterThan(0);
      }
      // Values of the reads that are not searches: the same checks, each with its default.
      const values: [string, () => Promise<unknown>, unknown, string][] = [
        ['listEntries.limit', () => m.listEntries({ limit: 0 }), 0, 'an integer from 1 to 10000'],
        ['listEntries.offset', () => m.listEntries({ offset: -1 }), -1, 'a whole number ≥ 0'],
        ['coreMemory.maxTokens', () => m.coreMemory('auth', { maxTokens: 0 }), 0, 'an integer from 1 to 1000000'],
        ['traverse.depth', () => m.traverse('auth-refresh-rotation', { depth: 11 }), 11, 'an integer from 1 to 10'],
        ['traverse.direction', () => m.traverse('auth-refresh-rotation', { direction: 'up' } as never), 'up', 'both'],
        ['entryGraph.depth', () => m.entryGraph({ focus: 'auth-refresh-rotation', depth: 4 }), 4, 'an integer from 1 to 3'],
        ['entryGraph.maxNodes', () => m.entryGraph({ core: 'auth', maxNodes: 0 }), 0, 'an integer from 1 to 10000'],
        ['index.annMinRows', () => m.index({ annMinRows: 1.5 }), 1.5, 'a whole number ≥ 0'],
      ];
      for (const [option, call, got, allowed] of values) {
        const error = (await call().then(
          () => undefined,
          (x: unknown) => x,
        )) as OptionError;
        expect(error, option).toBeInstanceOf(OptionError);
        expect({ option: error.option, got: error.got }, option).toEqual({ option, got });
        expect(error.allowed, option).toContain(allowed);
      }
      expect((await m.listEntries()).length).toBeGreaterThan(0);
      expect((await m.traverse('auth-refresh-rotation')).every((h) => h.hops <= 2)).toBe(true);
      const e = (await m.buildTaskContext('jwt', { maxEntires: 3 } as never).catch((x: unknown) => x)) as OptionError;
      expect(e.message).toMatch(/did you mean "maxEntries"/);
      expect(e.got).toBe(3);
      // a cached bundle does not let a bad option through
      await m.buildTaskContext('jwt');
      await expect(m.buildTaskContext('jwt', { depht: 1 } as never)).rejects.toThrow(/unknown option "depht"/);
    });
    await expect(openMemory({ path: dir, embedder: wordHashEmbedder(), residentMax: 1 } as never)).rejects.toThrow(
      /openMemory: unknown option "residentMax"/,
    );
    await expect(openMemory({ path: dir, embedder: { provider: 'local', model: 'x' } } as never)).rejects.toThrow(
      /openMemory.embedder: unknown option "model"/,
    );
    await expect(openMemory({ path: dir, embedder: wordHashEmbedder(), cache: { ttl: 1 } } as never)).rejects.toThrow(
      /openMemory.cache: unknown option "ttl"/,
    );
    expect(() => localEmbedder({ chunkSize: 100 } as never)).toThrow(/localEmbedder: unknown option "chunkSize"/);
    expect(() => openAIEmbedder({ model: 'm', dimensions: 8, baseUrl: 'http://127.0.0.1:1/v1' } as never)).toThrow(
      /did you mean "baseURL"/,
    );
    expect(() => openAIChat({ model: 'm', temperature: 0 } as never)).toThrow(/openAIChat: unknown option "temperature"/);
  });
});

describe('when the embedder is down', () => {
  it('context and hybrid search answer from keywords, mentions and the graph with a note; strict and semanticSearch throw', async () => {
    const server = await startFakeOpenAI(16);
    let down = false;
    const healthy = server.respond;
    server.respond = (body, n, res, path) => {
      if (!down) return healthy(body, n, res, path);
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'model is loading' } }));
    };
    const dir = await tempDir();
    const embedder = { provider: 'openai' as const, baseURL: server.baseURL, model: 'fake-embed', dimensions: 16, maxRetries: 0 };
    try {
      await withEngine(
        dir,
        async (m) => {
          await m.ingestDocument({
            core_id: 'c',
            entries: [
              { id: 'pool', title: 'Connection pool', content: 'Size the connection pool to the worker count.' },
              { id: 'timeouts', title: 'Query timeouts', content: 'Every query has a timeout.' },
            ],
            relations: [{ type: 'RELATED', from: 'pool', to: 'timeouts' }],
          });
          down = true;
          const bundle = await m.buildTaskContext('tune the connection pool');
          expect(bundle.degraded).toEqual(['vectors']);
          expect(bundle.notes.join('\n')).toMatch(
            /vectors unavailable, answered from keywords, mentions and the graph only: embedding request to http:\/\/127\.0\.0\.1:\d+\/v1 \(model "fake-embed"\) failed with HTTP 503: 503 model is loading/,
          );
          expect(bundle.entries.map((e) => e.entry.id)).toEqual(['pool', 'timeouts']);
          expect(bundle.entries[1]!.why.some((r) => r.kind === 'graph')).toBe(true);
          const hits = await m.hybridSearch('connection pool');
          expect(hits.map((h) => h.entry.id)).toEqual(['pool']);
          expect(hits.notes).toHaveLength(1);
          await expect(m.buildTaskContext('tune the connection pool', { strict: true })).rejects.toMatchObject({ code: 'EMBEDDING' });
          await expect(m.hybridSearch('connection pool', { strict: true })).rejects.toMatchObject({ code: 'EMBEDDING' });
          await expect(m.semanticSearch('connection pool')).rejects.toMatchObject({ code: 'EMBEDDING' });
          // The degraded bundle was not cached: with the embedder back, the same call uses vectors.
          down = false;
          const healed = await m.buildTaskContext('tune the connection pool');
          expect(healed.degraded).toBeUndefined();
          expect(healed.cacheHit).toBe(false);
          expect((await m.hybridSearch('connection pool')).notes).toEqual([]);
        },
        { embedder },
      );
    } finally {
      await server.close();
    }
  });
});

describe('a folder whose stores are damaged or gone', () => {
  async function writtenStore(): Promise<string> {
    const dir = await tempDir();
    await withEngine(dir, (m) => m.ingest(EXAMPLE_FILE));
    return dir;
  }

  it('is refused at open when the graph or the table is missing', async () => {
    const noGraph = await writtenStore();
    await rm(join(noGraph, GRAPH_FILE), { force: true });
    await expect(withEngine(noGraph, (m) => m.stats())).rejects.toThrow(
      new RegExp(`${GRAPH_FILE_PATTERN} \\(relations, code locations, golden paths\\) is missing.*Restore the folder from a backup`),
    );
    const noVersions = await writtenStore();
    await rm(join(noVersions, 'lance', 'entries.lance', '_versions'), { recursive: true });
    await expect(withEngine(noVersions, (m) => m.stats())).rejects.toMatchObject({
      code: 'STORE',
      message: expect.stringMatching(/lance\/entries\.lance \(the entries\) is missing/),
    });
  });

  it('reports a truncated table file as a STORE error naming the folder, with no native source paths', async () => {
    const dir = await writtenStore();
    const data = join(dir, 'lance', 'entries.lance', 'data');
    for (const file of await readdir(data)) await truncate(join(data, file), 100);
    const error = await withEngine(dir, (m) => m.semanticSearch('refresh token rotation')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemcoreError);
    expect((error as MemcoreError).code).toBe('STORE');
    expect((error as Error).message).toContain(join(dir, 'lance'));
    expect((error as Error).message).toMatch(/the entries table could not be read or written .*restore it from a backup/);
    expect((error as Error).message).not.toMatch(/\/rustc\/|\.rs:\d+/);
  });
});

describe('the local model on long text', () => {
  it('chunks text past its 128-token window and mean-pools, so the tail counts', async () => {
    const embedder = localEmbedder();
    const head = Array.from({ length: 12 }, (_, i) => `The invoice number ${i} is paid by the customer.`).join(' ');
    const tail = Array.from({ length: 12 }, (_, i) => ` Kubernetes pod ${i} restarts when its liveness probe fails.`).join('');
    const [first] = chunkText(head + tail, { chunkTokens: 128, overlapTokens: 16 });
    const [whole, firstChunk, withOtherTail] = await embedder.embed([
      head + tail,
      first!.text,
      head + tail.replace(/Kubernetes pod/g, 'The gardener'),
    ]);
    expect(cosineSimilarity(whole!, firstChunk!)).toBeLessThan(0.95);
    // The model alone ignores everything past its window: two texts differing only there would be equal.
    expect(cosineSimilarity(whole!, withOtherTail!)).toBeLessThan(0.95);
    // A short text is embedded whole, as before.
    const [short, again] = await embedder.embed(['Rotate refresh tokens on every use.', 'Rotate refresh tokens on every use.']);
    expect(cosineSimilarity(short!, again!)).toBeCloseTo(1, 6);
    expect(() => localEmbedder({ chunkTokens: 4 })).toThrow(/chunkTokens must be an integer ≥ 8/);
  });
});
