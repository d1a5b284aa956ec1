import { openMemory, type Embedder } from '../src/index.js';
import { syntheticStore } from './synthetic.js';
const n = Number(process.argv[2]); const dir = process.argv[3]!;
const store = syntheticStore(n, { queries: 50 });
for (const q of store.queries) store.vectors.set(q.text, q.vector);
const embedder: Embedder = { id: 'bench:precomputed-512', dimensions: 512, truncatable: false, cacheVectors: false, async embed(t) { return t.map((x) => store.vectors.get(x)!); } };
const m = await openMemory({ path: dir, embedder, env: {}, cache: { ttlMs: 0 } });
const s = (m as any).stores;
const sums: Record<string, number> = {};
const T = async <R>(l: string, f: () => Promise<R>): Promise<R> => { const t = performance.now(); const r = await f(); sums[l] = (sums[l] ?? 0) + performance.now() - t; return r; };
const cores = ['core-0', 'core-1', 'core-2', 'core-3'];
for (const [i, q] of store.queries.slice(0, 30).entries()) {
  const b = await T('ctx', () => m.buildTaskContext(q.text, { cores, maxEntries: 12 }));
  if (i < 5) continue;
  for (const [k, v] of Object.entries(b.timings)) sums[`stage ${k}`] = (sums[`stage ${k}`] ?? 0) + v;
  const ids = b.entries.map((e) => e.entry.id);
  const seeds = ids.slice(0, 4);
  const reach = await T('graph.expand', () => s.graph.expand(seeds, { depth: 2, edgeTypes: ['RELATED', 'DEPENDS_ON'] })) as any[];
  const rids = [...new Set(reach.map((r) => r.targetId))];
  await T('table.read reached', () => s.table.read({ ids: rids, cores }, { withVectors: true }));
  await T('table.read reached novec', () => s.table.read({ ids: rids, cores }));
  await T('edgesAmong 250', () => s.graph.edgesAmong([...rids, ...ids, ...Array.from({ length: 150 }, (_, j) => `e${j * 613}`)], ['RELATED', 'DEPENDS_ON']));
  await T('codeRefs', () => s.graph.codeReferencesOf(ids));
  await T('goldenPathsOf', () => s.graph.goldenPathsOf(ids));
}
await m.close();
for (const [k, v] of Object.entries(sums)) console.log(k.padEnd(28), (v / (k === 'ctx' ? 30 : 25)).toFixed(1));
