/**
 * buildTaskContext in a process of its own on a kept bench database (`npm run bench -- --keep`),
 * without the bench's synthetic store in the heap: open, one first query, a pause for the parts
 * a snapshot hands over later, then every query of the bench's, `passes` times, each with a text
 * of its own (the cache never answers). Prints one JSON line per pass: p50, p95 and the stages'
 * medians.
 *
 *   tsx bench/warmProcess.ts <db folder> <db folder>.queries.json [passes, default 2]
 */
import { openKeptStore, percentile } from './synthetic.js';

const [dir, queryFile, passesArg] = process.argv.slice(2);
const passes = Number(passesArg ?? 2);
if (!dir || !queryFile || !Number.isInteger(passes) || passes < 1) {
  console.error('usage: tsx bench/warmProcess.ts <db folder> <queries.json> [passes ≥ 1]');
  process.exit(2);
}
const { m, queries, ask } = await openKeptStore(dir, queryFile);
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
