import { openMemory } from '../src/index.ts';
const dir = process.argv[2]!;
const n = Number(process.argv[3] ?? 50);
const m = await openMemory({ path: dir, env: {}, embedder: { id: 'test:h', dimensions: 64, truncatable: true, async embed(t: string[]) { return t.map((x) => { const v = new Float32Array(64); v[x.length % 64] = 1; return v; }); } } });
try {
  for (let b = 0; b < 1000; b++) {
    const r = await m.ingestDocument({ core_id: 'c', entries: Array.from({ length: n }, (_, i) => ({ id: `e${b}-${i}`, title: `entry ${b} ${i}`, content: 'x'.repeat(2000) })) }, { source: `b${b}` });
    process.stdout.write(`${b} `);
  }
} catch (e) {
  console.log('\ncaught:', (e as Error).name, (e as { code?: string }).code, (e as Error).message.slice(0, 300));
}
await m.close().catch((e) => console.log('close failed', (e as Error).message.slice(0, 200)));
console.log('exit normally');
