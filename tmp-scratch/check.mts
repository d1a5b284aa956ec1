import { openMemory } from '../src/index.ts';
const m = await openMemory({ path: process.argv[2]!, env: {}, embedder: { id: 'test:h', dimensions: 64, truncatable: true, async embed(t: string[]) { return t.map((x) => { const v = new Float32Array(64); v[x.length % 64] = 1; return v; }); } } });
console.log(JSON.stringify(await m.stats()).slice(0, 200));
await m.close();
