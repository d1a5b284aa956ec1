/**
 * Every public search method of memcore, and with `peers` what a user would build instead
 * (src/eval/peers.ts), timed on one store, interleaved query by query so that each sees the
 * same machine state: one query through every system, then the next.
 */
import { GCProfiler, getHeapStatistics } from 'node:v8';
import type { MemoryEngine } from '../src/index.js';
import type { Peer } from '../src/eval/peers.js';
import { stats, type SyntheticStore } from './synthetic.js';

export interface MethodTiming extends ReturnType<typeof stats> {
  /** Queries timed: fewer than the bench's when the system was too slow to time them all (`capped`). */
  queries: number;
  capped: boolean;
  /** memcore's own method, or a peer. */
  kind: 'memcore' | 'peer';
}

/** A system too slow for every query (median over the first few above this) is timed on `CAPPED_QUERIES` only. */
const SLOW_MS = 250;
const CAPPED_QUERIES = 20;

type Query = SyntheticStore['queries'][number];

/**
 * The methods as an agent calls them, at k = 10 (bundles of 12 entries over four cores, as the
 * bench's context measure). The two that cache by task text (buildTaskContext, findWithContext)
 * get a text of their own for each query, with the same vector, so that every call misses.
 */
function memcoreMethods(m: MemoryEngine, store: SyntheticStore, cores: string[]): [string, (q: Query, i: number) => Promise<unknown>][] {
  const codes = store.doc.code_locations.length;
  const fresh = (q: Query, tag: string) => {
    const text = `${q.text} ${tag}`;
    store.vectors.set(text, q.vector);
    return text;
  };
  return [
    ['semanticSearch', (q) => m.semanticSearch(q.text, { limit: 10 })],
    ['matryoshkaSearch', (q) => m.matryoshkaSearch(q.text, { limit: 10 })],
    ['keywordSearch', (q) => m.keywordSearch(q.text, { limit: 10 })],
    ['hybridSearch', (q) => m.hybridSearch(q.text, { limit: 10 })],
    ['findWithContext', (q) => m.findWithContext(fresh(q, 'zzfind'), { cores, maxEntries: 12 })],
    ['buildTaskContext', (q) => m.buildTaskContext(fresh(q, 'zzctx'), { cores, maxEntries: 12 })],
    ['findRelatedToCode', (q, i) => m.findRelatedToCode(`src/mod${i % 50}/`, q.text, { limit: 10 })],
    ['findByCodeReference', (_q, i) => m.findByCodeReference({ filePath: `/file${(i * 3) % codes}.ts` })],
  ];
}

export async function timeSearchMethods(
  m: MemoryEngine,
  store: SyntheticStore,
  cores: string[],
  peers: readonly Peer[],
  progress: (message: string) => void,
): Promise<Record<string, MethodTiming>> {
  const systems: {
    name: string;
    kind: MethodTiming['kind'];
    run: (q: Query, i: number) => Promise<unknown>;
    times: number[];
    cap: number;
  }[] = [
    ...memcoreMethods(m, store, cores).map(([name, run]) => ({ name, kind: 'memcore' as const, run, times: [], cap: Infinity })),
    ...peers.map((p) => ({
      name: p.name,
      kind: 'peer' as const,
      run: (q: Query) => p.search(q.text, q.vector, 10),
      times: [] as number[],
      cap: Infinity,
    })),
  ];
  for (const [i, q] of store.queries.entries()) {
    progress(`every search method ${i}/${store.queries.length}`);
    for (const s of systems) {
      if (s.times.length >= s.cap) continue;
      const t = performance.now();
      await s.run(q, i);
      s.times.push(performance.now() - t);
      if (s.times.length === 5 && stats(s.times).p50 > SLOW_MS) s.cap = CAPPED_QUERIES;
    }
  }
  return Object.fromEntries(
    systems.map((s) => [
      s.name,
      { ...stats(s.times), queries: s.times.length, capped: s.times.length < store.queries.length, kind: s.kind },
    ]),
  );
}

/**
 * About `gigabytes` of live JS objects, the heap of a host process (an agent holding its own
 * state): small objects in arrays, as a parsed JSON document or an in-process index leaves them,
 * which the garbage collector must trace, unlike typed arrays' buffers.
 */
export function allocateBallast(gigabytes: number): unknown[] {
  const ballast: unknown[] = [];
  // ~80 bytes an object with its slot in the array.
  const objects = Math.round((gigabytes * 1024 ** 3) / 80);
  for (let i = 0; i < objects; i += 1_000_000)
    ballast.push(Array.from({ length: Math.min(1_000_000, objects - i) }, (_, j) => ({ id: i + j, weight: j * 0.5, next: null })));
  return ballast;
}

/**
 * Bytes allocated on the JS heap per call of `run`, over `queries`: the heap's growth plus what
 * every collection meanwhile freed (v8.GCProfiler). What a query allocates is what the collector
 * must later reclaim, and in a process with a large live heap that is what GC pauses cost.
 */
export async function heapAllocatedPerCall(queries: readonly Query[], run: (q: Query, i: number) => Promise<unknown>): Promise<number> {
  const profiler = new GCProfiler();
  const before = getHeapStatistics().used_heap_size;
  profiler.start();
  for (const [i, q] of queries.entries()) await run(q, i);
  const after = getHeapStatistics().used_heap_size;
  const freed = profiler
    .stop()
    .statistics.reduce((sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize, 0);
  return (after - before + freed) / queries.length;
}
