/**
 * The graph databases side by side on kept 100K bench stores (npm run bench -- --keep --graph …),
 * in a process each (a process loads one of them): open, the first buildTaskContext (which builds
 * what is held in memory from the graph's scans), 20 more (p50), and 2,000 RELATED relations
 * written in 4 links of 500 (the relation ingest). Writes to the store.
 *
 *   tsx bench/graphDrivers.ts <db folder>
 */
import { openMemory } from '../src/index.js';
import { mulberry32 } from '../src/embed/matryoshka.js';
import { readMeta } from '../src/store/meta.js';
import { lookupEmbedder } from './synthetic.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: tsx bench/graphDrivers.ts <db folder>');
  process.exit(2);
}
const rand = mulberry32(7);
const vectors = new Map<string, Float32Array>();
for (let i = 0; i < 21; i++) {
  const v = Float32Array.from({ length: 512 }, () => rand() - 0.5);
  const norm = Math.hypot(...v);
  vectors.set(
    `q${i}`,
    v.map((x) => x / norm),
  );
}
const cores = ['core-0', 'core-1', 'core-2', 'core-3'];
const t0 = performance.now();
const m = await openMemory({ path: dir, embedder: lookupEmbedder(vectors, 512), env: {} });
const openMs = performance.now() - t0;
await m.buildTaskContext('q0', { cores, maxEntries: 12 });
const firstQueryMs = performance.now() - t0;
const times: number[] = [];
for (let i = 1; i < 21; i++) {
  const t = performance.now();
  await m.buildTaskContext(`q${i}`, { cores, maxEntries: 12 });
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
const ids = (await m.listEntries({ limit: 10_000 })).map((e) => e.id);
const t1 = performance.now();
for (let b = 0; b < 4; b++)
  await m.link(
    Array.from({ length: 500 }, () => ({
      type: 'RELATED' as const,
      from: ids[Math.floor(rand() * ids.length)]!,
      to: ids[Math.floor(rand() * ids.length)]!,
      weight: 0.5,
    })).filter((r) => r.from !== r.to),
  );
const relationsMs = performance.now() - t1;
const stats = await m.stats();
await m.close();
console.log(
  JSON.stringify({
    graph: (await readMeta(dir))?.graph,
    entries: stats.entries,
    openMs: Math.round(openMs),
    firstQueryMs: Math.round(firstQueryMs),
    contextP50Ms: Number(times[10]!.toFixed(1)),
    relations2000Ms: Math.round(relationsMs),
  }),
);
