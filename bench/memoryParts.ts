/**
 * Where a fresh process's memory goes on a kept bench database: open, one first query, the parts a
 * snapshot hands over later, then 20 queries; prints process.memoryUsage() (RSS, the JS heap, the
 * memory of ArrayBuffers, the rest native) after each step as one JSON line.
 *
 *   tsx bench/memoryParts.ts <db folder> <db folder>.queries.json
 */
import { getHeapStatistics } from 'node:v8';
import { openKeptStore } from './synthetic.js';

const [dir, queryFile] = process.argv.slice(2);
if (!dir || !queryFile) {
  console.error('usage: tsx bench/memoryParts.ts <db folder> <queries.json>');
  process.exit(2);
}
const mb = (n: number) => Math.round(n / 1024 ** 2);
const report = (step: string) => {
  const u = process.memoryUsage();
  const heap = getHeapStatistics();
  console.log(
    JSON.stringify({
      step,
      rssMb: mb(u.rss),
      heapUsedMb: mb(u.heapUsed),
      heapTotalMb: mb(heap.total_heap_size),
      arrayBuffersMb: mb(u.arrayBuffers),
      externalMb: mb(u.external),
      otherMb: mb(u.rss - heap.total_heap_size - u.external),
    }),
  );
};
report('start');
const { m, ask } = await openKeptStore(dir, queryFile);
report('open');
await ask(0, 'first');
report('first query');
await new Promise((resolve) => setTimeout(resolve, 8_000));
report('settled');
for (let i = 1; i <= 20; i++) await ask(i, 'warm');
report('20 queries');
globalThis.gc?.();
report('after gc');
await m.close();
