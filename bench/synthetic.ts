/**
 * Synthetic but realistic stores: clustered unit vectors at the local model's dimension, texts
 * from a vocabulary (so full-text search has work), a graph of average degree ~4 across the
 * entry edge types, code locations and golden paths. Deterministic for a given seed.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { openMemory, type ContextBundle, type Embedder, type MemoryEngine } from '../src/index.js';
import type { CodeLocationRecord, EntryRecord, GoldenPathRecord, RelationRecord } from '../src/model/memoryFile.js';
import { mulberry32 as rng } from '../src/embed/matryoshka.js';

function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
}

function unit(v: Float32Array): Float32Array {
  const n = Math.hypot(...v);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

const WORDS = (
  'token refresh rotation cache eviction migration schema index backfill retry timeout idempotent queue consumer offset ' +
  'webhook signature payment invoice currency rounding cursor pagination version header deprecation sunset error problem json ' +
  'validation field pointer transaction outbox event relay publish logging request trace span metric alert pager runbook deploy ' +
  'rollback flag canary release branch review lint test fixture container database postgres redis kafka s3 bucket upload image ' +
  'thumbnail cdn dns certificate tls session cookie csrf cors oauth scope tenant quota limit burst window clock skew drift'
).split(' ');

export interface SyntheticStore {
  doc: { entries: EntryRecord[]; code_locations: CodeLocationRecord[]; golden_paths: GoldenPathRecord[]; relations: RelationRecord[] };
  /** Text embedded for each entry (title + "\n" + content) → its vector. */
  vectors: Map<string, Float32Array>;
  queries: { text: string; vector: Float32Array }[];
}

/** What `syntheticParts` yields, in the order the generator makes them. */
export type SyntheticPart =
  | { kind: 'code'; code_locations: CodeLocationRecord[] }
  | { kind: 'entries'; entries: EntryRecord[]; vectors: Map<string, Float32Array> }
  | { kind: 'relations'; relations: RelationRecord[] }
  | { kind: 'paths'; golden_paths: GoldenPathRecord[]; relations: RelationRecord[] }
  | { kind: 'queries'; queries: SyntheticStore['queries'] };

type SyntheticOptions = {
  dimensions?: number;
  clusters?: number;
  queries?: number;
  seed?: number;
  hub?: boolean;
  /** false: the entries' vectors are not made (their random numbers are drawn all the same, so the rest is the same store). */
  vectors?: boolean;
};

/**
 * `hub` (default true): every entry also links to `e0`, as every lesson in a real store links to
 * the project's conventions, so that the bench sees a hub with `n` − 1 edges (see HUB_DEGREE).
 */
export function syntheticStore(n: number, opts: SyntheticOptions = {}): SyntheticStore {
  const store: SyntheticStore = {
    doc: { entries: [], code_locations: [], golden_paths: [], relations: [] },
    vectors: new Map(),
    queries: [],
  };
  for (const part of syntheticParts(n, opts, Infinity)) {
    if (part.kind === 'code') store.doc.code_locations = part.code_locations;
    else if (part.kind === 'entries') {
      for (const e of part.entries) store.doc.entries.push(e);
      for (const [k, v] of part.vectors) store.vectors.set(k, v);
    } else if (part.kind === 'relations') for (const r of part.relations) store.doc.relations.push(r);
    else if (part.kind === 'paths') {
      store.doc.golden_paths = part.golden_paths;
      for (const r of part.relations) store.doc.relations.push(r);
    } else store.queries = part.queries;
  }
  return store;
}

/**
 * The same store as `syntheticStore` (the same random sequence, so the same records), made
 * `chunk` entries or relations at a time: a 1M store without holding its 2 GB of vectors
 * (bench/buildStore.ts). Code locations come first, golden paths and their IMPLEMENTS relations
 * after every other relation, the queries last.
 */
export function* syntheticParts(n: number, opts: SyntheticOptions = {}, chunk = 100_000): Generator<SyntheticPart> {
  const d = opts.dimensions ?? 512;
  const rand = rng(opts.seed ?? 7);
  const clusters = Array.from({ length: opts.clusters ?? Math.max(8, Math.round(Math.sqrt(n) / 2)) }, () =>
    unit(Float32Array.from({ length: d }, () => gaussian(rand))),
  );
  const near = (center: Float32Array, spread: number) =>
    unit(Float32Array.from(center, (x) => x + (spread * gaussian(rand)) / Math.sqrt(d)));
  const words = (k: number) => Array.from({ length: k }, () => WORDS[Math.floor(rand() * WORDS.length)]!).join(' ');
  const types = ['lesson', 'decision', 'pattern', 'convention', 'fact'];
  const codes = Math.max(10, Math.floor(n / 10));
  yield {
    kind: 'code',
    code_locations: Array.from({ length: codes }, (_, i) => ({
      id: `c${i}`,
      codebase_id: 'bench',
      file_path: `src/mod${i % 50}/file${i}.ts`,
      symbol: `fn${i}`,
      start_line: 1 + (i % 100),
      end_line: 20 + (i % 100),
    })),
  };
  let entries: EntryRecord[] = [];
  let vectors = new Map<string, Float32Array>();
  for (let i = 0; i < n; i++) {
    const title = `${words(4)} #${i}`;
    const content = `${words(30)}.`;
    entries.push({
      id: `e${i}`,
      core_id: `core-${i % 8}`,
      title,
      content,
      entry_type: types[i % types.length]!,
      confidence: (['low', 'medium', 'high'] as const)[i % 3]!,
      importance: 1 + (i % 10),
      tags: [WORDS[i % WORDS.length]!],
    });
    if (opts.vectors !== false) vectors.set(`${title}\n${content}`, near(clusters[i % clusters.length]!, 1.2));
    else for (let k = 0; k < 2 * d; k++) rand(); // what near() draws: two numbers a gaussian
    if (entries.length >= chunk || i === n - 1) {
      yield { kind: 'entries', entries, vectors };
      entries = [];
      vectors = new Map();
    }
  }
  let relations: RelationRecord[] = [];
  const pick = () => `e${Math.floor(rand() * n)}`;
  // ~2 edges per entry between entries → average degree ~4. Every 50th entry supersedes one a
  // little after it, at an offset that varies (0-48), so that the superseded 2% spread over the
  // clusters: with a fixed offset, entry numbers 1 mod 50 at 500 clusters (1M entries) were every
  // member of 10 clusters, and a query near one of those had no current entry near it.
  for (let i = 0; i < n; i++) {
    const kinds = ['RELATED', 'RELATED', 'DEPENDS_ON'] as const;
    for (let j = 0; j < 2; j++) {
      const to = i % 50 === 0 && j === 0 ? `e${(i + 1 + ((i / 50) % 49)) % n}` : pick();
      if (to === `e${i}`) continue;
      const type = i % 50 === 0 && j === 0 ? 'SUPERSEDES' : kinds[Math.floor(rand() * kinds.length)]!;
      relations.push(type === 'RELATED' ? { type, from: `e${i}`, to, weight: 0.5 } : { type, from: `e${i}`, to });
    }
    if (i % 3 === 0) relations.push({ type: 'REFERENCES_CODE', from: `e${i}`, to: `c${i % codes}`, relevance: 0.8 });
    if (opts.hub !== false && i > 0) relations.push({ type: 'RELATED', from: `e${i}`, to: 'e0', weight: 0.5 });
    if (relations.length >= chunk) {
      yield { kind: 'relations', relations };
      relations = [];
    }
  }
  if (relations.length > 0) yield { kind: 'relations', relations };
  const paths = Math.max(2, Math.floor(n / 1000));
  const golden_paths = Array.from({ length: paths }, (_, i) => ({
    id: `g${i}`,
    name: `path ${i}`,
    concept: words(2),
    steps: [0, 1, 2].map((s) => ({ code: `c${(i * 3 + s) % codes}` })),
  }));
  yield {
    kind: 'paths',
    golden_paths,
    relations: Array.from({ length: paths }, (_, i) => ({ type: 'IMPLEMENTS' as const, from: `e${(i * 7) % n}`, to: `g${i}` })),
  };
  yield {
    kind: 'queries',
    queries: Array.from({ length: opts.queries ?? 200 }, (_, i) => ({
      text: `query ${i} ${words(5)}`,
      vector: near(clusters[i % clusters.length]!, 1.2),
    })),
  };
}

/** An embedder that looks up the precomputed vector of each text (the synthetic store's, and its queries'). */
export function lookupEmbedder(vectors: Map<string, Float32Array>, dimensions: number): Embedder {
  return {
    id: `bench:precomputed-${dimensions}`,
    dimensions,
    truncatable: false,
    cacheVectors: false, // precomputed: a cache read would cost more than the lookup
    async embed(texts) {
      return texts.map((t) => {
        const v = vectors.get(t);
        if (!v) throw new Error(`no precomputed vector for ${t.slice(0, 40)}`);
        return v;
      });
    },
  };
}

/** Code and golden paths, then entries in batches of 5,000, then relations in batches of 10,000. */
export async function ingestSynthetic(
  m: MemoryEngine,
  store: SyntheticStore,
  progress: (message: string) => void,
): Promise<{ entriesMs: number; relationsMs: number }> {
  const n = store.doc.entries.length;
  await m.ingestDocument({ code_locations: store.doc.code_locations, golden_paths: store.doc.golden_paths }, { source: 'code' });
  const batch = 5000;
  let t = performance.now();
  for (let i = 0; i < n; i += batch) {
    progress(`ingesting entries ${i}/${n}`);
    await m.ingestDocument({ entries: store.doc.entries.slice(i, i + batch) }, { source: `entries-${i}` });
  }
  const entriesMs = performance.now() - t;
  t = performance.now();
  // 100K relations a file: each write is one Kuzu commit, whose cost grows with the relationship
  // table (~0.45 ms per 1K edges stored, random endpoints, whatever the batch; docs/performance.md).
  const relationBatch = 100_000;
  for (let i = 0; i < store.doc.relations.length; i += relationBatch) {
    progress(`ingesting relations ${i}/${store.doc.relations.length}`);
    await m.ingestDocument({ relations: store.doc.relations.slice(i, i + relationBatch) }, { source: `relations-${i}` });
  }
  return { entriesMs, relationsMs: performance.now() - t };
}

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
export const stats = (xs: number[]) => ({
  p50: percentile(xs, 50),
  p95: percentile(xs, 95),
  p99: percentile(xs, 99),
  mean: xs.reduce((a, b) => a + b, 0) / xs.length,
});

/**
 * A deterministic bag-of-words embedder (feature hashing of lower-cased words), for tests that
 * need exact control over which entry is nearest, and benches that embed texts nobody wrote down. It implements the public Embedder interface;
 * `calls` counts the texts it embedded.
 */
export function wordHashEmbedder(dimensions = 64, truncatable = true): Embedder & { calls: number } {
  const self = {
    id: `test:word-hash-${dimensions}`,
    dimensions,
    truncatable,
    calls: 0,
    async embed(texts: string[]) {
      self.calls += texts.length;
      return texts.map((t) => {
        const v = new Float32Array(dimensions);
        for (const word of t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) v[fnv1a(word) % dimensions]! += 1;
        if (v.every((x) => x === 0)) v[0] = 1;
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      });
    },
  };
  return self;
}

/** FNV-1a of a text: a stable seed or bucket for test embedders. */
export function fnv1a(text: string): number {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619);
  return h >>> 0;
}

/**
 * A bench script's command line: `--help` prints the usage and exits 0; a bad option, or values
 * that `valid` refuses, print the usage and exit 2.
 */
export function benchOptions(
  usage: string,
  options: NonNullable<ParseArgsConfig['options']>,
  valid: (values: Record<string, string | undefined>) => boolean,
): Record<string, string | undefined> {
  let parsed: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h', default: false } } }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${usage}`);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(usage);
    process.exit(0);
  }
  const values = Object.fromEntries(
    Object.entries(parsed)
      .filter(([k]) => k !== 'help')
      .map(([k, v]) => [k, typeof v === 'string' ? v : undefined]),
  );
  if (!valid(values) || (values.out !== undefined && !/^[\w.-]+$/.test(values.out))) {
    console.error(`bad arguments (--out takes a plain file name)\n\n${usage}`);
    process.exit(2);
  }
  return values;
}

/**
 * A kept bench database (`npm run bench -- --keep`, bench/buildStore.ts) opened in a process of
 * its own, with its queries (`<db folder>.queries.json`): `ask(i, tag)` is buildTaskContext for
 * query i under a text of its own (`tag` makes it new, so the cache never answers) and the
 * query's stored vector as its embedding; cores 0–3, 12 entries, as the bench asks.
 */
export async function openKeptStore(
  dir: string,
  queryFile: string,
): Promise<{
  m: MemoryEngine;
  queries: { text: string; vector: Float32Array }[];
  ask: (i: number, tag: string) => Promise<ContextBundle>;
}> {
  const queries = (JSON.parse(await readFile(queryFile, 'utf8')) as { text: string; vector: number[] }[]).map((q) => ({
    text: q.text,
    vector: Float32Array.from(q.vector),
  }));
  const vectors = new Map<string, Float32Array>();
  const m = await openMemory({ path: dir, embedder: lookupEmbedder(vectors, queries[0]!.vector.length), env: {} });
  const ask = (i: number, tag: string) => {
    const text = `${queries[i]!.text} ${tag}`;
    vectors.set(text, queries[i]!.vector);
    return m.buildTaskContext(text, { cores: ['core-0', 'core-1', 'core-2', 'core-3'], maxEntries: 12 });
  };
  return { m, queries, ask };
}
