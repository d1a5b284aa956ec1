/**
 * npm run bench [-- --sizes 10000,100000 --queries 200 --keep --peers --ballast 2]
 * Ingest throughput (precomputed vectors), buildTaskContext latency cold and warm with a per-stage
 * breakdown, two-stage recall@10 against exact search, cache-hit latency, peak RSS; every public
 * search method's latency; side by side with the naive pipeline and plain LanceDB vector search,
 * and with --peers LanceDB's and Orama's own searches on the same vectors. Prints tables, writes
 * JSON and an SVG chart to bench/results/.
 */
import { spawnSync } from 'node:child_process';
import { getHeapStatistics } from 'node:v8';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { openMemory } from '../src/index.js';
import { NaivePipeline } from './naivePipeline.js';
import { ingestSynthetic, lookupEmbedder, percentile, stats, syntheticStore } from './synthetic.js';
import { allocateBallast, heapAllocatedPerCall, timeSearchMethods, type MethodTiming } from './searchMethods.js';
import { buildPeers, PEERS } from '../src/eval/peers.js';
import { project, type Projection } from '../src/embed/matryoshka.js';
import { readFile } from 'node:fs/promises';
import { benchReportHtml, latencyBySizeChart } from './benchReport.js';
import { isGraphDriver, type GraphDriverName } from '../src/store/graph/drivers.js';
import { DEFAULTS } from '../src/config/defaults.js';

const USAGE = `usage: npm run bench -- [--sizes 10000,100000] [--queries 200] [--out <name>] [--keep] [--peers] [--ballast <GB>] [--graph ladybug|kuzu]

  --sizes <n,…>   store sizes to build and measure, each ≥ 100 (default 10000,100000)
  --queries <n>   queries per size, ≥ 10 (default 200)
  --out <name>    results go to bench/results/<name>.json and .svg (default: bench-<sizes>)
  --keep          leave each store's database in place (it holds the bench's embedder id,
                  bench:precomputed-512, so open it with an Embedder of that id), and its
                  queries beside it as <db>.queries.json, for bench/warmProcess.ts
  --peers         also build LanceDB (flat vector, FTS, hybrid with RRF) and Orama (hybrid,
                  vector, full-text) on the same entries and vectors, and time them
                  interleaved with memcore's methods; a peer too slow for every query is
                  timed on 20 (the table says so)
  --ballast <GB>  then hold that many GB of live JS objects in the process (a host's heap) and
                  time buildTaskContext and semanticSearch again beside it
  --graph <g>     the graph database of the stores built: ladybug or kuzu (default: a new
                  folder's, config/defaults.ts)
  --report <file.html>  also write an HTML report (one offline file): latency percentiles by
                  store size, every search method by size, buildTaskContext's stages
  -h, --help      this text

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;

function parseBenchArgs() {
  try {
    return parseArgs({
      options: {
        sizes: { type: 'string', default: '10000,100000' },
        queries: { type: 'string', default: '200' },
        out: { type: 'string' },
        keep: { type: 'boolean', default: false },
        peers: { type: 'boolean', default: false },
        ballast: { type: 'string' },
        report: { type: 'string' },
        graph: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}
const values = parseBenchArgs();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const sizes = values.sizes.split(',').map(Number);
const graph: GraphDriverName = isGraphDriver(values.graph) ? values.graph : DEFAULTS.store.graph;
const queryCount = Number(values.queries);
const ballastGb = values.ballast === undefined ? 0 : Number(values.ballast);
if (
  sizes.some((n) => !Number.isInteger(n) || n < 100) ||
  !Number.isInteger(queryCount) ||
  queryCount < 10 ||
  (values.out !== undefined && !/^[\w.-]+$/.test(values.out)) ||
  !(ballastGb >= 0 && ballastGb <= 64) ||
  (values.report !== undefined && !values.report.endsWith('.html')) ||
  (values.graph !== undefined && !isGraphDriver(values.graph))
) {
  console.error(
    `bad arguments: sizes must be integers ≥ 100, queries an integer ≥ 10, --out a plain file name, --ballast a number of GB from 0 to 64, --report a file ending in .html and --graph ladybug or kuzu\n\n${USAGE}`,
  );
  process.exit(2);
}
// Orama's index of 100K 512-d vectors and the ballast need more heap than Node's default: the bench runs itself again with enough.
const heapMb = Math.ceil(4096 + ballastGb * 2048 + (values.peers ? 8192 : 0));
if ((values.peers || ballastGb > 0) && getHeapStatistics().heap_size_limit < heapMb * 1024 ** 2 && !process.env.MEMCORE_BENCH_RESPAWNED) {
  const run = spawnSync(
    process.execPath,
    [...process.execArgv, `--max-old-space-size=${heapMb}`, process.argv[1]!, ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, MEMCORE_BENCH_RESPAWNED: '1' } },
  );
  process.exit(run.status ?? 1);
}
const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
const progress = (m: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${m}`);

interface SizeResult {
  size: number;
  ingest: { entriesPerSec: number; entriesMs: number; relationsMs: number; indexMs: number };
  /** Cold = cache miss, query vector given; the first query, which loads the resident structures, is `firstQueryMs` and not among them. Stages: median ms. */
  context: { cold: ReturnType<typeof stats>; warm: ReturnType<typeof stats>; stages: Record<string, number>; firstQueryMs: number };
  /** matryoshkaSearch at its default candidates (measured on the store: stage1Calibration) against exact full-dimension search. */
  twoStageRecallAt10: number;
  /** The same with 100 candidates, as buildTaskContext's vector stage uses. */
  twoStageRecallAt10With100: number;
  /**
   * A fresh process on the database: open, and open + the first buildTaskContext, which loads
   * what is held in memory (the cold start of a one-shot call or a restarted server), and that
   * process's RSS after it: the engine's own memory.
   */
  /** Open + first query in a fresh process, loading the snapshots the bench's close wrote, and building without them. */
  freshProcess: { openMs: number; firstQueryMs: number; rssMb: number; built: { firstQueryMs: number; rssMb: number } };
  /** Writing every snapshot once (what a close after writes, or `memcore index`, costs). */
  snapshotWrite: { ms: number; mb: number };
  naive: ReturnType<typeof stats>;
  plainVector: ReturnType<typeof stats>;
  /** Every public search method, and with --peers each peer's search, interleaved query by query (k = 10). */
  methods: Record<string, MethodTiming>;
  /** KB a call allocates on the JS heap (what GC must reclaim), over 50 queries. */
  heapAllocatedKb: { buildTaskContext: number; semanticSearch: number };
  /** Seconds each peer took to build its index (--peers). */
  peerBuildSeconds?: Partial<Record<'lancedb' | 'orama', number>>;
  /** With --ballast: buildTaskContext and semanticSearch again, with that many GB of live objects held. */
  ballast?: { gigabytes: number; heapUsedMb: number; context: ReturnType<typeof stats>; semanticSearch: ReturnType<typeof stats> };
  speedupVsNaive: number;
  peakRssMb: number;
}

const FIRST_QUERY = 'first query after ingest';

async function benchSize(n: number): Promise<SizeResult> {
  progress(`${n}: generating …`);
  const store = syntheticStore(n, { queries: queryCount });
  for (const q of store.queries) store.vectors.set(q.text, q.vector);
  store.vectors.set(FIRST_QUERY, store.queries[0]!.vector);
  const dir = await mkdtemp(join(tmpdir(), `memcore-bench-${n}-`));
  const embedder = lookupEmbedder(store.vectors, 512);
  const m = await openMemory({ path: dir, embedder, env: {}, cache: { ttlMs: 600_000, max: 10_000 }, graph });
  const cores = ['core-0', 'core-1', 'core-2', 'core-3'];
  try {
    const { entriesMs, relationsMs } = await ingestSynthetic(m, store, (m) => progress(`${n}: ${m}`));
    progress(`${n}: building indexes …`);
    const t = performance.now();
    await m.index({ annMinRows: 50_000 });
    const indexMs = performance.now() - t;

    // The first query after the ingest loads what the engine holds in memory (adjacency, code
    // links, entry columns, keyword and name indexes): timed on its own, not as a cold query.
    let t0 = performance.now();
    await m.buildTaskContext(FIRST_QUERY, { cores, maxEntries: 12 });
    const firstQueryMs = performance.now() - t0;
    const cold: number[] = [];
    const stageTimes: Record<string, number[]> = {};
    for (const [i, q] of store.queries.entries()) {
      progress(`${n}: context (cold) ${i}/${store.queries.length}`);
      t0 = performance.now();
      const b = await m.buildTaskContext(q.text, { cores, maxEntries: 12 });
      cold.push(performance.now() - t0);
      for (const [k, v] of Object.entries(b.timings)) (stageTimes[k] ??= []).push(v);
    }
    const warm: number[] = [];
    for (const q of store.queries) {
      t0 = performance.now();
      const b = await m.buildTaskContext(q.text, { cores, maxEntries: 12 });
      warm.push(performance.now() - t0);
      if (!b.cacheHit) throw new Error('expected a cache hit');
    }
    // matryoshkaSearch at its default candidates and at buildTaskContext's 100
    const overlap = { default: 0, at100: 0 };
    for (const [i, q] of store.queries.entries()) {
      progress(`${n}: two-stage recall ${i}/${store.queries.length}`);
      const exact = new Set((await m.semanticSearch(q.text, { limit: 10 })).map((h) => h.entry.id));
      const share = (hits: { entry: { id: string } }[]) => hits.filter((h) => exact.has(h.entry.id)).length / Math.max(1, exact.size);
      overlap.default += share((await m.matryoshkaSearch(q.text, { limit: 10 })).hits);
      overlap.at100 += share((await m.matryoshkaSearch(q.text, { limit: 10, candidates: 100 })).hits);
    }
    const peers = values.peers
      ? await buildPeers(
          store.doc.entries.map((e) => ({
            id: e.id!,
            core: e.core_id!,
            text: `${e.title}\n${e.content}`,
            vector: store.vectors.get(`${e.title}\n${e.content}`)!,
          })),
          PEERS,
          (p) => progress(`${n}: ${p}`),
        )
      : undefined;
    let methods: Record<string, MethodTiming>;
    try {
      methods = await timeSearchMethods(m, store, cores, peers?.peers ?? [], (p) => progress(`${n}: ${p}`));
    } finally {
      await peers?.close();
    }
    progress(`${n}: heap allocated per query …`);
    const sample = store.queries.slice(0, 50);
    const heapAllocatedKb = {
      buildTaskContext:
        (await heapAllocatedPerCall(sample, (q, i) => {
          const text = `${q.text} zzalloc${i}`;
          store.vectors.set(text, q.vector);
          return m.buildTaskContext(text, { cores, maxEntries: 12 });
        })) / 1024,
      semanticSearch: (await heapAllocatedPerCall(sample, (q) => m.semanticSearch(q.text, { limit: 10 }))) / 1024,
    };
    const ballast = ballastGb > 0 ? await withBallast(m, store, cores, n) : undefined;
    progress(`${n}: writing snapshots …`);
    t0 = performance.now();
    const written = await m.unsafeExposeInternals().stores.residents.writeSnapshots({ rewrite: true });
    const snapshotWrite = { ms: performance.now() - t0, mb: written.reduce((sum, w) => sum + w.bytes, 0) / 1024 ** 2 };
    await m.close();
    progress(`${n}: a fresh process: open and first query, without snapshots …`);
    // Built from the stores first (the process writes the snapshots again as it closes), then
    // loaded. Past 500K entries not built: at 1M that took 152 s and more memory than the bench
    // process leaves free.
    const built =
      n <= 500_000
        ? await (async () => {
            await rm(join(dir, 'snapshots'), { recursive: true, force: true });
            return firstQueryInFreshProcess(dir, store.queries[0]!.vector, cores);
          })()
        : { firstQueryMs: NaN, rssMb: NaN };
    progress(`${n}: a fresh process: open and first query, from snapshots …`);
    const freshProcess = {
      ...(await firstQueryInFreshProcess(dir, store.queries[0]!.vector, cores)),
      built: { firstQueryMs: built.firstQueryMs, rssMb: built.rssMb },
    };

    const projection = JSON.parse(await readFile(join(dir, 'projection.json'), 'utf8').catch(() => 'null')) as Projection | null;
    const naive = await NaivePipeline.open(dir);
    const naiveMs: number[] = [];
    const plainMs: number[] = [];
    for (const [i, q] of store.queries.entries()) {
      progress(`${n}: naive pipeline ${i}/${store.queries.length}`);
      const small = projection ? project(q.vector, projection) : q.vector.slice(0, 128);
      t0 = performance.now();
      await naive.query(q.vector, small, cores);
      naiveMs.push(performance.now() - t0);
      t0 = performance.now();
      await naive.plainVector(q.vector, 12);
      plainMs.push(performance.now() - t0);
    }
    await naive.close();
    const coldStats = stats(cold);
    const naiveStats = stats(naiveMs);
    return {
      size: n,
      ingest: { entriesPerSec: n / (entriesMs / 1000), entriesMs, relationsMs, indexMs },
      context: {
        cold: coldStats,
        warm: stats(warm),
        stages: Object.fromEntries(Object.entries(stageTimes).map(([k, v]) => [k, percentile(v, 50)])),
        firstQueryMs,
      },
      twoStageRecallAt10: overlap.default / store.queries.length,
      twoStageRecallAt10With100: overlap.at100 / store.queries.length,
      naive: naiveStats,
      plainVector: stats(plainMs),
      speedupVsNaive: naiveStats.p50 / coldStats.p50,
      freshProcess,
      snapshotWrite,
      methods,
      heapAllocatedKb,
      ...(peers ? { peerBuildSeconds: peers.buildSeconds } : {}),
      ...(ballast ? { ballast } : {}),
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await m.close();
    if (values.keep) {
      await writeFile(`${dir}.queries.json`, JSON.stringify(store.queries.map((q) => ({ text: q.text, vector: [...q.vector] }))));
      console.error(`${n}: database kept at ${dir}, its queries in ${dir}.queries.json`);
    } else await rm(dir, { recursive: true, force: true });
  }
}

/** bench/freshProcess.ts on the database just measured (closed by this process first). */
async function firstQueryInFreshProcess(
  dir: string,
  vector: Float32Array,
  cores: string[],
): Promise<Omit<SizeResult['freshProcess'], 'built'>> {
  const vectorFile = join(dir, '..', `${dir.split('/').pop()}-first-query.f32`);
  await writeFile(vectorFile, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
  try {
    const script = fileURLToPath(new URL('./freshProcess.ts', import.meta.url));
    const run = spawnSync(process.execPath, ['--import', 'tsx', script, dir, vectorFile, cores.join(',')], {
      encoding: 'utf8',
      env: { ...process.env, RUST_LOG: 'error' },
    });
    if (run.status !== 0) throw new Error(`the fresh process failed (${run.status}): ${run.stderr.slice(-500)}`);
    return JSON.parse(run.stdout.trim().split('\n').pop()!) as Omit<SizeResult['freshProcess'], 'built'>;
  } finally {
    await rm(vectorFile, { force: true });
  }
}

/** buildTaskContext and semanticSearch on fresh texts, with `--ballast` GB of live objects held meanwhile. */
async function withBallast(
  m: Awaited<ReturnType<typeof openMemory>>,
  store: ReturnType<typeof syntheticStore>,
  cores: string[],
  n: number,
): Promise<NonNullable<SizeResult['ballast']>> {
  progress(`${n}: allocating ${ballastGb} GB of ballast …`);
  const ballast = allocateBallast(ballastGb);
  const heapUsedMb = process.memoryUsage().heapUsed / 1024 ** 2;
  const context: number[] = [];
  const semantic: number[] = [];
  for (const [i, q] of store.queries.entries()) {
    progress(`${n}: with ballast ${i}/${store.queries.length}`);
    const text = `${q.text} zzballast`;
    store.vectors.set(text, q.vector);
    let t = performance.now();
    await m.buildTaskContext(text, { cores, maxEntries: 12 });
    context.push(performance.now() - t);
    t = performance.now();
    await m.semanticSearch(q.text, { limit: 10 });
    semantic.push(performance.now() - t);
  }
  ballast.length = 0; // held live until here
  return { gigabytes: ballastGb, heapUsedMb, context: stats(context), semanticSearch: stats(semantic) };
}

const results: SizeResult[] = [];
for (const n of sizes) results.push(await benchSize(n));
progress('');
const f = (x: number, d = 2) => x.toFixed(d);
const rows = [
  [
    'entries',
    'ingest/s',
    'ctx p50',
    'ctx p95',
    'ctx p99',
    'hit p50',
    'naive p50',
    'plain p50',
    'speedup',
    'R@10 dflt',
    'R@10 100c',
    'RSS MB',
    'fresh 1st s',
    'fresh RSS',
    'unsnap 1st s',
    'snap write s',
  ],
  ...results.map((r) => [
    r.size.toLocaleString('en'),
    f(r.ingest.entriesPerSec, 0),
    f(r.context.cold.p50),
    f(r.context.cold.p95),
    f(r.context.cold.p99),
    f(r.context.warm.p50, 3),
    f(r.naive.p50),
    f(r.plainVector.p50),
    `${f(r.speedupVsNaive, 1)}×`,
    f(r.twoStageRecallAt10, 3),
    f(r.twoStageRecallAt10With100, 3),
    f(r.peakRssMb, 0),
    f(r.freshProcess.firstQueryMs / 1000),
    f(r.freshProcess.rssMb, 0),
    f(r.freshProcess.built.firstQueryMs / 1000),
    f(r.snapshotWrite.ms / 1000),
  ]),
];
const printTable = (table: string[][]) => {
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
};
console.log(
  "latencies in ms; ctx = buildTaskContext with the query vector given (cold cache), hit = cache hit, naive = the seed design's pipeline, plain = one LanceDB vector search;",
);
console.log("fresh = a new process on the database: open + first query (s), and its RSS after it (MB, the engine's own memory)");
printTable(rows);
for (const r of results) {
  const base = r.methods.buildTaskContext!.p50;
  console.log(
    `\n${r.size.toLocaleString('en')} entries: every search method, interleaved query by query (k = 10; ratio = p50 ÷ buildTaskContext p50)`,
  );
  printTable([
    ['method', 'p50', 'p95', 'p99', 'queries', 'ratio'],
    ...Object.entries(r.methods).map(([name, t]) => [
      t.kind === 'peer' ? `${name} (peer)` : name,
      f(t.p50),
      f(t.p95),
      f(t.p99),
      `${t.queries}${t.capped ? ' (capped)' : ''}`,
      `${f(t.p50 / base, 2)}×`,
    ]),
    ...(r.ballast
      ? [
          [
            `buildTaskContext, ${r.ballast.gigabytes} GB ballast`,
            f(r.ballast.context.p50),
            f(r.ballast.context.p95),
            f(r.ballast.context.p99),
            String(queryCount),
            `${f(r.ballast.context.p50 / base, 2)}×`,
          ],
          [
            `semanticSearch, ${r.ballast.gigabytes} GB ballast`,
            f(r.ballast.semanticSearch.p50),
            f(r.ballast.semanticSearch.p95),
            f(r.ballast.semanticSearch.p99),
            String(queryCount),
            `${f(r.ballast.semanticSearch.p50 / base, 2)}×`,
          ],
        ]
      : []),
  ]);
  if (r.peerBuildSeconds)
    console.log(
      `peers built in: ${Object.entries(r.peerBuildSeconds)
        .map(([k, v]) => `${k} ${f(v, 1)} s`)
        .join(', ')}`,
    );
  if (r.ballast) console.log(`ballast: ${r.ballast.gigabytes} GB of live objects, heap used ${f(r.ballast.heapUsedMb / 1024, 1)} GB`);
  console.log(
    `JS heap allocated per query: buildTaskContext ${f(r.heapAllocatedKb.buildTaskContext, 0)} KB, semanticSearch ${f(r.heapAllocatedKb.semanticSearch, 0)} KB`,
  );
}
for (const r of results)
  console.log(
    `${r.size}: stages (median ms) ${Object.entries(r.context.stages)
      .map(([k, v]) => `${k} ${f(v)}`)
      .join(
        ', ',
      )}; first query after ingest ${f(r.context.firstQueryMs / 1000, 2)} s; ingest entries ${f(r.ingest.entriesMs / 1000, 1)} s, relations ${f(r.ingest.relationsMs / 1000, 1)} s, index ${f(r.ingest.indexMs / 1000, 1)} s`,
  );
await mkdir(resultsDir, { recursive: true });
const json = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: (await import('node:os')).cpus().length,
  queries: queryCount,
  graph,
  results,
};
const name = values.out ?? `bench-${sizes.join('-')}`;
await writeFile(join(resultsDir, `${name}.json`), JSON.stringify(json, null, 2));
await writeFile(join(resultsDir, `${name}.svg`), latencyBySizeChart(results));
console.log(`wrote bench/results/${name}.json and .svg`);
if (values.report !== undefined) {
  await writeFile(values.report, benchReportHtml(json));
  console.log(`wrote ${values.report}`);
}
