/**
 * The memory page's numbers (issue: see the memory): its script bundle gzipped, search-as-you-type
 * through the page's API at store size, and the time to the first drawn graph of a 10,000-entry
 * core in headless chromium. The store is synthetic (bench/synthetic.ts) with its entries spread
 * over cores of 10,000 and embedded by a word-hash embedder, so that any prefix a person types can
 * be embedded; the server is the owner `memcore serve` runs, in this process.
 *
 *   npm run bench:page -- [--entries 100000] [--out page-100000]
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { openMemory } from '../src/index.js';
import { startOwner } from '../src/server/owner.js';
import { buildPage } from '../src/web/buildPage.js';
import { PAGE_DIR } from '../src/web/pageAssets.js';
import { benchOptions, ingestSynthetic, stats, syntheticStore, wordHashEmbedder } from './synthetic.js';

const USAGE = `usage: npm run bench:page -- [--entries 100000] [--core-size 10000] [--out <name>]

  --entries <n>     entries in the store (default 100000, at least 1000)
  --core-size <n>   entries per core; the graph is drawn for whole cores of this size (default 10000)
  --out <name>      results go to bench/results/<name>.json (default page-<entries>)

Needs Debian's chromium (MEMCORE_CHROMIUM, default /usr/bin/chromium).
Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;

const values = benchOptions(
  USAGE,
  { entries: { type: 'string' }, 'core-size': { type: 'string' }, out: { type: 'string' } },
  (v) =>
    (v.entries === undefined || (/^\d+$/.test(v.entries) && Number(v.entries) >= 1000)) &&
    (v['core-size'] === undefined || /^\d+$/.test(v['core-size'])),
);
const entries = Number(values.entries ?? 100_000);
const coreSize = Math.min(entries, Number(values['core-size'] ?? 10_000));
const chromiumPath = process.env.MEMCORE_CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(chromiumPath)) {
  console.error(`no browser at ${chromiumPath}: apt-get install chromium (or set MEMCORE_CHROMIUM)`);
  process.exit(1);
}
const progress = (m: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${m}`);

const bundle = await buildPage(PAGE_DIR);

const store = syntheticStore(entries, { queries: 10 });
store.doc.entries = store.doc.entries.map((e, i) => ({ ...e, core_id: `core-${Math.floor(i / coreSize)}` }));
const dir = await mkdtemp(join(tmpdir(), 'memcore-bench-page-'));
// Not truncatable: a hashed vector's first dimensions are no Matryoshka prefix, and an embedder
// that claimed they were would have stage 1 calibrate itself to thousands of candidates.
const engine = await openMemory({ path: dir, embedder: wordHashEmbedder(512, false), env: {} });
const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
try {
  await ingestSynthetic(engine, store, (m) => progress(`${entries}: ${m}`));
  progress(`${entries}: indexing …`);
  await engine.index();
  const owner = await startOwner(engine, { http: { port: 0 }, runCli: async () => 1, version: 'bench' });
  const origin = new URL(owner.url!).origin;
  const auth = { authorization: `Bearer ${owner.token!}` };

  // Search as you type: every query typed two characters at a time, each pause one search.
  const words = store.doc.entries.slice(0, 60).map((e) => e.title.replace(/ #\d+$/, ''));
  progress('search as you type …');
  await fetch(`${origin}/api/search?q=warm`, { headers: auth });
  const typed: number[] = [];
  for (const query of words) {
    for (let end = 2; end <= query.length + 1; end += 2) {
      const t = performance.now();
      const res = await fetch(`${origin}/api/search?q=${encodeURIComponent(query.slice(0, end))}`, { headers: auth });
      if (res.status !== 200) throw new Error(`search answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      typed.push(performance.now() - t);
    }
  }

  // The first drawn graph of a whole core, from the start of the navigation, in a fresh tab each time.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const signIn = await context.newPage();
  await signIn.goto(owner.pageLogin!());
  const renders: number[] = [];
  const apiMs: number[] = [];
  let drawn = { nodes: 0, total: 0, sampled: false };
  const cores = Math.max(1, Math.min(5, Math.floor(entries / coreSize)));
  for (let i = 0; i < cores; i++) {
    progress(`graph of core-${i} …`);
    let t = performance.now();
    const graph = (await (await fetch(`${origin}/api/graph?core=core-${i}`, { headers: auth })).json()) as {
      nodes: unknown[];
      total: number;
      sampled: boolean;
    };
    apiMs.push(performance.now() - t);
    drawn = { nodes: graph.nodes.length, total: graph.total, sampled: graph.sampled };
    const page = await context.newPage();
    t = performance.now();
    await page.goto(`${origin}/graph?core=core-${i}`);
    await page.waitForSelector('#graph[data-rendered="true"]', { timeout: 120_000 });
    renders.push(Number(await page.getAttribute('#graph', 'data-render-ms')));
    await page.close();
  }
  await owner.close();
  progress('');

  const f = (x: number) => x.toFixed(1);
  const search = stats(typed);
  const render = stats(renders);
  const api = stats(apiMs);
  console.log(`memory page, ${entries.toLocaleString('en')} entries in cores of ${coreSize.toLocaleString('en')} (ms)`);
  console.log(
    `script bundle               ${(bundle.scriptBytes / 1024).toFixed(0)} KB, ${(bundle.scriptGzipBytes / 1024).toFixed(0)} KB gzipped (target ≤ 300)`,
  );
  console.log(
    `search as you type          p50 ${f(search.p50)}  p95 ${f(search.p95)}  p99 ${f(search.p99)}  over ${typed.length} requests (target p50 ≤ 20)`,
  );
  console.log(
    `graph of a core: first draw median ${f(render.p50)}  max ${f(Math.max(...renders))}  over ${renders.length} cores; ${drawn.nodes} of ${drawn.total} entries drawn${drawn.sampled ? ' (sampled)' : ''} (target ≤ 2000)`,
  );
  console.log(`  of which /api/graph       median ${f(api.p50)}`);
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(resultsDir, { recursive: true });
  const name = values.out ?? `page-${entries}`;
  await writeFile(
    join(resultsDir, `${name}.json`),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        entries,
        coreSize,
        bundle: { bytes: bundle.scriptBytes, gzipBytes: bundle.scriptGzipBytes },
        searchAsYouType: { requests: typed.length, ...search },
        graph: { firstDrawMs: renders, apiMs, nodesDrawn: drawn.nodes, coreEntries: drawn.total, sampled: drawn.sampled },
      },
      null,
      2,
    ),
  );
  console.log(`wrote bench/results/${name}.json`);
} finally {
  await browser.close();
  await engine.close();
  await rm(dir, { recursive: true, force: true });
}
