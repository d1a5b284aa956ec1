/**
 * The keyword search of a kept bench database two ways, interleaved query by query: reading every
 * posting, and counting matches on bitsets (matchCountTop). Same scope, limit and filter as
 * `buildTaskContext` in bench/warmProcess.ts (cores 0–3, 200 candidates). Prints the median wall
 * and CPU ms of each and how many results differed (0: the counting path is exact).
 *
 *   tsx bench/keywordCounting.ts <db folder> <db folder>.queries.json [queries, default all]
 *   tsx bench/keywordCounting.ts --synthetic <entries>   (the bench's texts and queries, no database)
 */
import { readFile } from 'node:fs/promises';
import { openMemory } from '../src/index.js';
import { keywordQuery } from '../src/retrieve/keywordCandidates.js';
import type { KeywordIndex } from '../src/store/resident/keywordIndex.js';
import type { EntryColumns } from '../src/store/resident/entryColumns.js';
import { KeywordIndex as Index } from '../src/store/resident/keywordIndex.js';
import { lookupEmbedder, percentile, syntheticParts } from './synthetic.js';

const [dir, queryFile, countArg] = process.argv.slice(2);
const synthetic = dir === '--synthetic' ? Number(queryFile) : undefined;
const count = countArg === undefined ? Infinity : Number(countArg);
if (!dir || !queryFile || !(count >= 1) || (synthetic !== undefined && !(Number.isInteger(synthetic) && synthetic > 0))) {
  console.error('usage: tsx bench/keywordCounting.ts <db folder> <queries.json> [queries ≥ 1] | --synthetic <entries>');
  process.exit(2);
}
const cores = ['core-0', 'core-1', 'core-2', 'core-3'];
let queries: { text: string }[];
let index: KeywordIndex;
let accept: ((id: string) => boolean) | undefined;
let m: Awaited<ReturnType<typeof openMemory>> | undefined;
if (synthetic !== undefined) {
  // The texts the bench ingests (title, then content, as search_text joins them), no filter beyond the scope.
  index = new Index();
  queries = [];
  for (const part of syntheticParts(synthetic, { vectors: false })) {
    if (part.kind === 'entries')
      index.upsert(part.entries.map((e) => ({ id: e.id!, text: `${e.title}\n${e.content}`, group: e.core_id ?? '' })));
    if (part.kind === 'queries') queries = part.queries;
  }
} else {
  const read = (JSON.parse(await readFile(queryFile, 'utf8')) as { text: string; vector: number[] }[]).slice(0, count);
  queries = read;
  m = await openMemory({ path: dir, embedder: lookupEmbedder(new Map(), read[0]!.vector.length), env: {} });
  // The engine's own structures, as the query path holds them.
  const stores = (m as unknown as { stores: { keywords(): Promise<KeywordIndex>; columns(): Promise<EntryColumns> } }).stores;
  const [held, columns] = await Promise.all([stores.keywords(), stores.columns()]);
  index = held;
  accept = columns.matcher({ cores });
}
const counting = index.pruneFromPostings;
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const ms = { all: { wall: [] as number[], cpu: [] as number[] }, counted: { wall: [] as number[], cpu: [] as number[] } };
let differed = 0;
// Pass 0 builds the bitsets of the terms met; passes 1 and 2 are measured, each way first in turn.
for (let pass = 0; pass <= 2; pass++)
  for (const [i, q] of queries.entries()) {
    const text = keywordQuery(`${q.text} pass${pass}`);
    const out: Record<string, unknown> = {};
    for (const way of (i + pass) % 2 ? (['all', 'counted'] as const) : (['counted', 'all'] as const)) {
      index.pruneFromPostings = way === 'all' ? Infinity : counting;
      const wall = performance.now();
      const cpu = cpuMs();
      out[way] = index.search(text, { limit: 200, groups: cores, accept });
      if (pass > 0) {
        ms[way].cpu.push(cpuMs() - cpu);
        ms[way].wall.push(performance.now() - wall);
      }
    }
    if (JSON.stringify(out.all) !== JSON.stringify(out.counted)) differed++;
  }
index.pruneFromPostings = counting;
const p50 = (xs: number[]) => Number(percentile(xs, 50).toFixed(2));
console.log(
  JSON.stringify({
    queries: queries.length,
    differed,
    everyPosting: { wallP50: p50(ms.all.wall), cpuP50: p50(ms.all.cpu) },
    counted: { wallP50: p50(ms.counted.wall), cpuP50: p50(ms.counted.cpu) },
  }),
);
await m?.close();
