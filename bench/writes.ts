/**
 * npm run bench:writes [-- --size 10000 --writes 50 --concurrent 8]
 * Writes on a big store, in process: a lone `remember` (one at a time, each awaited) and
 * `--concurrent` writers remembering at once, on a synthetic store of `--size` entries with
 * precomputed vectors (bench/synthetic.ts). Then every acknowledged write is looked for in a
 * fresh open of the folder: lost and duplicated counts (aim 0). Prints a table and writes
 * bench/results/writes-<size>.json.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemory, type Embedder } from '../src/index.js';
import { benchOptions, fnv1a, ingestSynthetic, lookupEmbedder, stats, syntheticStore } from './synthetic.js';
import { stepTable, timeSteps } from './writeSteps.js';

const USAGE = `usage: npm run bench:writes -- [--size 10000] [--writes 50] [--concurrent 8] [--out <name>] [--warm] [--steps]

  --size <n>        entries in the store, >= 100 (default 10000)
  --writes <n>      remember calls per writer and phase, >= 5 (default 50)
  --concurrent <n>  writers at once in the second phase, 1 to 64 (default 8)
  --out <name>      bench/results/<name>.json (default writes-<size>)
  --warm            one query before the writes, as a served store has had (the first write
                    then does not load what queries hold in memory)
  --steps           also print the time of each store call of the lone writes (bench/writeSteps.ts)

Exit codes: 0 done with no lost or duplicated write, 1 lost or duplicated writes (or a failed run), 2 bad arguments.`;

const values = benchOptions(
  USAGE,
  {
    size: { type: 'string', default: '10000' },
    writes: { type: 'string', default: '50' },
    concurrent: { type: 'string', default: '8' },
    out: { type: 'string' },
    steps: { type: 'boolean', default: false },
    warm: { type: 'boolean', default: false },
  },
  (v) =>
    Number.isInteger(Number(v.size)) &&
    Number(v.size) >= 100 &&
    Number.isInteger(Number(v.writes)) &&
    Number(v.writes) >= 5 &&
    Number.isInteger(Number(v.concurrent)) &&
    Number(v.concurrent) >= 1 &&
    Number(v.concurrent) <= 64,
);
const size = Number(values.size);
const writes = Number(values.writes);
const concurrent = Number(values.concurrent);
// benchOptions keeps string options only: the flag is read from the command line.
const steps = process.argv.includes('--steps') ? timeSteps() : undefined;
const progress = (m: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${m}`);

const store = syntheticStore(size, { queries: 1 });
const dimensions = 512;
const known = lookupEmbedder(store.vectors, dimensions);
/** The store's own vectors, and a deterministic unit vector for any text it does not hold (the writes'). */
const embedder: Embedder = {
  ...known,
  async embed(texts) {
    return texts.map((t) => {
      const held = store.vectors.get(t);
      if (held) return held;
      const v = new Float32Array(dimensions);
      for (const w of t.split(/\W+/)) if (w) v[fnv1a(w) % dimensions]! += 1;
      v[0]! += 0.01;
      const n = Math.hypot(...v);
      return v.map((x) => x / n);
    });
  },
};

const dir = await mkdtemp(join(tmpdir(), 'memcore-writes-'));
let failed = false;
try {
  const memory = await openMemory({ path: join(dir, 'db'), embedder, env: {} });
  await ingestSynthetic(memory, store, progress);
  const acknowledged: string[] = [];
  const remember = async (w: number, i: number) => {
    const t = performance.now();
    const r = await memory.remember({
      title: `Write ${w}.${i}`,
      content: `Writer ${w} learned lesson ${i} about token rotation.`,
      core: 'writes',
    });
    acknowledged.push(r.id);
    return performance.now() - t;
  };
  if (process.argv.includes('--warm')) await memory.buildTaskContext(store.queries[0]!.text);
  progress('lone writes …');
  const lone: number[] = [];
  let loneCpu: NodeJS.CpuUsage | undefined;
  for (let i = 0; i < writes; i++) {
    // CPU time of the process (every thread: LanceDB's and the graph's too) moves less with the
    // machine's load than wall time: from the second write on, as the steps.
    if (i === 1) loneCpu = process.cpuUsage();
    // The first write loads the indexes held in memory: its steps are not a lone write's.
    if (steps) steps.on = i > 0;
    lone.push(await remember(-1, i));
  }
  if (steps) steps.on = false;
  const cpu = process.cpuUsage(loneCpu);
  const loneCpuMsPerWrite = (cpu.user + cpu.system) / 1000 / Math.max(1, writes - 1);
  progress(`${concurrent} writers …`);
  const started = performance.now();
  const each = await Promise.all(
    Array.from({ length: concurrent }, async (_, w) => {
      const ms: number[] = [];
      for (let i = 0; i < writes; i++) ms.push(await remember(w, i));
      return ms;
    }),
  );
  const concurrentSeconds = (performance.now() - started) / 1000;
  await memory.close();

  progress('checking every acknowledged write in a fresh open …');
  const again = await openMemory({ path: join(dir, 'db'), embedder, env: {} });
  const listed = await again.listEntries({ cores: ['writes'], limit: 10_000 });
  await again.close();
  const counts = new Map<string, number>();
  for (const e of listed) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
  const lost = acknowledged.filter((id) => !counts.has(id)).length;
  const duplicated = [...counts.values()].filter((n) => n > 1).length;
  const all = each.flat();
  const result = {
    date: new Date().toISOString(),
    size,
    writes,
    concurrent,
    loneMs: stats(lone),
    loneCpuMsPerWrite,
    warm: process.argv.includes('--warm'),
    concurrentMs: stats(all),
    concurrentWritesPerSecond: all.length / concurrentSeconds,
    acknowledged: acknowledged.length,
    lost,
    duplicated,
  };
  progress('');
  const row = (label: string, s: { p50: number; p99: number }) => `| ${label} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} |`;
  console.log(`\nremember on a ${size}-entry store (in process)\n`);
  console.log('| writers | p50 ms | p99 ms |\n|---|---|---|');
  console.log(row('1 (lone)', result.loneMs));
  console.log(row(`${concurrent} at once`, result.concurrentMs));
  console.log(`\nCPU time of a lone write (writes 2 to ${writes}, every thread of the process): ${loneCpuMsPerWrite.toFixed(1)} ms`);
  if (steps)
    console.log(`\nwhere a lone write's time goes (writes 2 to ${writes}, timers per store call)\n\n${stepTable(steps, writes - 1)}`);
  console.log(
    `\n${result.concurrentWritesPerSecond.toFixed(0)} writes/s with ${concurrent} writers; acknowledged ${acknowledged.length}, lost ${lost}, duplicated ${duplicated}`,
  );
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(resultsDir, { recursive: true });
  await writeFile(join(resultsDir, `${values.out ?? `writes-${size}`}.json`), JSON.stringify(result, null, 2) + '\n');
  failed = lost > 0 || duplicated > 0;
} catch (e) {
  console.error(`writes bench failed: ${(e as Error).stack}`);
  failed = true;
} finally {
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
