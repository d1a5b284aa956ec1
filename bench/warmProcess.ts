/**
 * buildTaskContext in a process of its own on a kept bench database (`npm run bench -- --keep`),
 * without the bench's synthetic store in the heap: open, one first query, a pause for the parts
 * a snapshot hands over later, then every query of the bench's, `passes` times, each with a text
 * of its own (the cache never answers). Prints one JSON line per pass: p50, p95 and the stages'
 * medians.
 *
 *   tsx bench/warmProcess.ts <db folder> <db folder>.queries.json [passes, default 2]
 */
import { readFile } from 'node:fs/promises';
import { openMemory } from '../src/index.js';
import { lookupEmbedder, percentile } from './synthetic.js';

const [dir, queryFile, passesArg] = process.argv.slice(2);
const passes = Number(passesArg ?? 2);
if (!dir || !queryFile || !Number.isInteger(passes) || passes < 1) {
  console.error('usage: tsx bench/warmProcess.ts <db folder> <queries.json> [passes ≥ 1]');
  process.exit(2);
}
const queries = (JSON.parse(await readFile(queryFile, 'utf8')) as { text: string; vector: number[] }[]).map((q) => ({
  text: q.text,
  vector: Float32Array.from(q.vector),
}));
const vectors = new Map<string, Float32Array>();
const m = await openMemory({ path: dir, embedder: lookupEmbedder(vectors, queries[0]!.vector.length), env: {} });
const cores = ['core-0', 'core-1', 'core-2', 'core-3'];
const ask = (i: number, tag: string) => {
  const text = `${queries[i]!.text} ${tag}`;
  vectors.set(text, queries[i]!.vector);
  return m.buildTaskContext(text, { cores, maxEntries: 12 });
};
const started = performance.now();
await ask(0, 'first');
const firstQueryMs = performance.now() - started;
await new Promise((resolve) => setTimeout(resolve, 8_000));
console.log(JSON.stringify({ firstQueryMs, rssMb: process.memoryUsage().rss / 1024 ** 2 }));
for (let pass = 1; pass <= passes; pass++) {
  const times: number[] = [];
  const stages: Record<string, number[]> = {};
  for (let i = 0; i < queries.length; i++) {
    const t = performance.now();
    const bundle = await ask(i, `pass${pass}`);
    times.push(performance.now() - t);
    for (const [stage, ms] of Object.entries(bundle.timings)) (stages[stage] ??= []).push(ms);
  }
  const median = Object.fromEntries(Object.entries(stages).map(([stage, ms]) => [stage, Number(percentile(ms, 50).toFixed(2))]));
  console.log(JSON.stringify({ pass, p50: percentile(times, 50), p95: percentile(times, 95), stages: median }));
}
console.log(JSON.stringify({ rssMb: process.memoryUsage().rss / 1024 ** 2 }));
await m.close();
