import { describe, expect, it } from 'vitest';
import { openMemory, type Embedder, type MemoryEngine, type SemanticSearchOptions } from '../src/index.js';
import { mulberry32 } from '../src/embed/matryoshka.js';
import { cosineSimilarity } from '../src/embed/embedder.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';
import { embeddingText } from '../src/ingest/indexer.js';

/**
 * semanticSearch against a brute-force reference on stores built to be hard for an 8-bit scan:
 * near-duplicates a hair apart, exact duplicates (ties), magnitudes from 1e-3 to 1e3, a vector
 * with one huge component, a zero vector, with filters, supersession and secret entries in play.
 */

const CORES = ['core-a', 'core-b', 'core-c'];
const TYPES = ['lesson', 'decision', 'pattern'] as const;

interface Built {
  vectors: Float32Array[];
  queries: Float32Array[];
  entries: { id: string; core: string; type: string; importance: number; tags: string[]; secret: boolean }[];
  /** older → newer */
  supersededBy: Map<string, string>;
}

function buildStore(count: number, dimensions: number, seed: number): Built {
  const rand = mulberry32(seed);
  const gaussian = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
  const randomVector = (scale = 1) => Float32Array.from({ length: dimensions }, () => gaussian() * scale);
  const centres = Array.from({ length: 12 }, () => randomVector());
  const vectors: Float32Array[] = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 10;
    const centre = centres[i % centres.length]!;
    const noise = [1e-1, 1e-3, 1e-5, 1e-7][i % 4]!;
    let v: Float32Array;
    if (kind === 7 && i > 20)
      v = Float32Array.from(vectors[i - 13]!); // an exact duplicate: a tie
    else if (kind === 8)
      v = randomVector([1e-3, 1e3][i % 2]!); // far from unit length
    else v = Float32Array.from(centre, (x) => x + gaussian() * noise);
    vectors.push(v);
  }
  vectors[3] = new Float32Array(dimensions); // a zero vector has no cosine
  vectors[5] = Float32Array.from(vectors[5]!, (x, d) => (d === 0 ? x + 500 : x)); // one component dwarfs the rest
  const queries = [
    ...centres.slice(0, 6).map((c) => Float32Array.from(c, (x) => x + gaussian() * 1e-4)),
    ...[10, 11, 12, 40].map((i) => Float32Array.from(vectors[i]!)),
    ...Array.from({ length: 6 }, () => randomVector()),
  ];
  const entries = vectors.map((_, i) => ({
    id: `e${String(i).padStart(4, '0')}`,
    core: CORES[i % 3]!,
    type: TYPES[(i >> 1) % 3]!,
    importance: 1 + (i % 10),
    tags: i % 4 === 0 ? ['red'] : ['blue'],
    secret: i % 37 === 0,
  }));
  const supersededBy = new Map<string, string>();
  for (let i = 1; i < count; i += 9) supersededBy.set(entries[i]!.id, entries[i + 1 < count ? i + 1 : 0]!.id);
  // Most of the first cluster is superseded: a query near its centre must look past dozens of nearer entries.
  for (let i = 0; i < Math.min(count - 1, 300); i += 12) supersededBy.set(entries[i]!.id, entries[i + 1]!.id);
  return { vectors, queries, entries, supersededBy };
}

/** The vector of `vec-<n>` or `query-<n>` in the text embedded. */
function builtEmbedder(built: Built, dimensions: number): Embedder {
  return {
    id: `test:built-${dimensions}`,
    dimensions,
    truncatable: false,
    cacheVectors: false,
    async embed(texts) {
      return texts.map((t) => {
        const q = /query-(\d+)/.exec(t);
        if (q) return built.queries[Number(q[1])]!;
        const e = /vec-(\d+)/.exec(t);
        if (!e) throw new Error(`no vector for ${t}`);
        return built.vectors[Number(e[1])]!;
      });
    },
  };
}

async function ingest(m: MemoryEngine, built: Built): Promise<void> {
  await m.ingestDocument({
    entries: built.entries.map((e, i) => ({
      id: e.id,
      core_id: e.core,
      title: `vec-${i}`,
      content: `vec-${i}`,
      entry_type: e.type,
      importance: e.importance,
      tags: e.tags,
      confidence: 'high',
      created_at: '2025-01-01',
      ...(e.secret ? { sensitivity: 'secret' } : {}),
    })),
    relations: [...built.supersededBy].map(([older, newer]) => ({ type: 'SUPERSEDES', from: newer, to: older })),
  });
}

type Filter = Pick<SemanticSearchOptions, 'cores' | 'entryTypes' | 'tags' | 'minImportance' | 'sensitivity' | 'threshold'>;

function bruteForce(built: Built, query: Float32Array, limit: number, f: Filter): { id: string; similarity: number }[] {
  return built.entries
    .map((e, i) => ({ e, similarity: cosineSimilarity(query, built.vectors[i]!), zero: built.vectors[i]!.every((x) => x === 0) }))
    .filter(
      ({ e, similarity, zero }) =>
        !zero &&
        similarity >= (f.threshold ?? -1) &&
        !built.supersededBy.has(e.id) &&
        (!e.secret || (f.sensitivity ?? []).includes('secret')) &&
        (!f.cores || f.cores.includes(e.core)) &&
        (!f.entryTypes || f.entryTypes.includes(e.type as (typeof TYPES)[number])) &&
        (!f.tags || f.tags.some((t) => e.tags.includes(t))) &&
        e.importance >= (f.minImportance ?? 0),
    )
    .sort((a, b) => b.similarity - a.similarity || a.e.id.localeCompare(b.e.id))
    .slice(0, limit)
    .map(({ e, similarity }) => ({ id: e.id, similarity }));
}

/** Equal up to ties: the same similarities rank by rank, and every id strictly above the last similarity present. */
function expectSameUpToTies(got: { id: string; similarity: number }[], want: { id: string; similarity: number }[], label: string): void {
  expect(got.length, label).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g.similarity - want[i]!.similarity), `${label} rank ${i + 1}`).toBeLessThan(1e-9));
  const last = want.at(-1)?.similarity ?? Infinity;
  const gotIds = new Set(got.map((g) => g.id));
  for (const w of want) if (w.similarity > last + 1e-9) expect(gotIds.has(w.id), `${label}: ${w.id} missing`).toBe(true);
}

const FILTERS: Filter[] = [
  {},
  { cores: ['core-b'] },
  { entryTypes: ['decision', 'pattern'], minImportance: 4 },
  { tags: ['red'] },
  { cores: ['core-a', 'core-c'], sensitivity: ['public', 'internal', 'secret'] },
  { threshold: 0.5 },
];

describe('semanticSearch is exact', () => {
  for (const [dimensions, count, seed] of [
    [72, 420, 7],
    [640, 160, 11],
  ] as const) {
    it(`equals brute force on a ${count}-entry store of ${dimensions}-d vectors, with filters and supersession`, async () => {
      const built = buildStore(count, dimensions, seed);
      const m = await openMemory({ path: await tempDir(), embedder: builtEmbedder(built, dimensions), env: {} });
      try {
        await ingest(m, built);
        expect((await m.stats()).search.exact).toBe('memory');
        for (const [qi, query] of built.queries.entries()) {
          for (const filter of FILTERS) {
            for (const limit of [1, 10, 50]) {
              const hits = await m.semanticSearch(`query-${qi}`, { ...filter, limit });
              const label = `query ${qi} ${JSON.stringify(filter)} limit ${limit}`;
              expectSameUpToTies(
                hits.map((h) => ({ id: h.entry.id, similarity: h.similarity })),
                bruteForce(built, query, limit, filter),
                label,
              );
              expect(
                hits.every((h) => h.score === h.similarity),
                label,
              ).toBe(true);
            }
          }
        }
      } finally {
        await m.close();
      }
    });
  }

  it('answers the same from memory and, past residentMaxEntries, from a LanceDB scan, asOf included', async () => {
    const built = buildStore(200, 48, 3);
    const dir = await tempDir();
    const embedder = builtEmbedder(built, 48);
    let m = await openMemory({ path: dir, embedder, env: {} });
    await ingest(m, built);
    // A successor that came later: as of before it, the entry it supersedes is in force again.
    await m.ingestDocument(
      {
        entries: [{ id: 'late', core_id: 'core-a', title: 'vec-10', content: 'vec-10', entry_type: 'lesson', created_at: '2025-06-01' }],
        relations: [{ type: 'SUPERSEDES', from: 'late', to: 'e0011' }],
      },
      { source: 'late' },
    );
    const options: SemanticSearchOptions[] = [
      { limit: 10 },
      { limit: 10, asOf: new Date('2025-03-01') },
      { limit: 5, cores: ['core-c'], asOf: new Date('2025-03-01') },
    ];
    const answers = async () =>
      Promise.all(
        built.queries.flatMap((_, qi) =>
          options.map(async (o) => (await m.semanticSearch(`query-${qi}`, o)).map((h) => ({ id: h.entry.id, similarity: h.similarity }))),
        ),
      );
    const fromMemory = await answers();
    expect((await m.stats()).search.exact).toBe('memory');
    await m.close();
    m = await openMemory({ path: dir, embedder, env: {}, residentMaxEntries: 0 });
    try {
      expect((await m.stats()).search.exact).toBe('lancedb');
      const fromLance = await answers();
      fromMemory.forEach((got, i) => {
        // LanceDB ranks on float32 distances: ties within its rounding may come in another order.
        expect(got.map((h) => h.id).sort()).toEqual(fromLance[i]!.map((h) => h.id).sort());
        got.forEach((h, r) => expect(Math.abs(h.similarity - fromLance[i]![r]!.similarity)).toBeLessThan(1e-6));
      });
      const ids = (pick: (i: number) => boolean) =>
        fromMemory.filter((_, i) => pick(i % options.length)).flatMap((hits) => hits.map((h) => h.id));
      expect(ids((o) => o === 0)).toContain('late');
      expect(ids((o) => o === 0)).not.toContain('e0011');
      expect(ids((o) => o > 0)).not.toContain('late');
      expect(ids((o) => o > 0)).toContain('e0011');
    } finally {
      await m.close();
    }
  });

  it('ranks findRelatedToCode by the exact cosine among the entries on that code', async () => {
    const embedder = wordHashEmbedder(64);
    const m = await openMemory({ path: await tempDir(), embedder, env: {} });
    try {
      await m.ingest(EXAMPLE_FILE);
      for (const [file, query] of [
        ['src/auth/', 'refresh token rotation'],
        ['src/', 'database migration lock'],
        ['src/db/', 'idempotent retries'],
      ] as const) {
        const refs = await m.findByCodeReference({ filePath: file });
        const [q] = await embedder.embed([query]);
        const onCode = [...new Map(refs.map((r) => [r.entry.id, r.entry])).values()];
        const vectors = await embedder.embed(onCode.map((e) => embeddingText(e)));
        const want = onCode
          .map((e, i) => ({ id: e.id, similarity: cosineSimilarity(q!, vectors[i]!) }))
          .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id))
          .slice(0, 5);
        const got = await m.findRelatedToCode(file, query, { limit: 5 });
        expect(onCode.length, file).toBeGreaterThan(0);
        expectSameUpToTies(
          got.map((h) => ({ id: h.entry.id, similarity: h.similarity })),
          want,
          `${file} ${query}`,
        );
        for (const h of got) expect(h.references.every((r) => r.code.filePath.includes(file))).toBe(true);
      }
    } finally {
      await m.close();
    }
  });
});
