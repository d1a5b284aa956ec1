/**
 * Where a query's candidates stage goes on a kept bench database: buildTaskContext as
 * warmProcess.ts runs it, with the keyword search, the stage-1 scan's wait and its ranking timed
 * apart (wall and CPU time of this thread). Prints one JSON line per pass.
 *
 *   tsx bench/stageProfile.ts <db folder> <db folder>.queries.json [passes, default 1] [--every-posting]
 *
 * `--every-posting`: BM25 reads every posting (no match counting), for a before/after.
 */
import { KeywordIndex } from '../src/store/resident/keywordIndex.js';
import { EntryColumns } from '../src/store/resident/entryColumns.js';
import { openKeptStore, percentile } from './synthetic.js';

const [dir, queryFile, passesArg, way] = process.argv.slice(2);
const everyPosting = way === '--every-posting';
const passes = Number(passesArg ?? 1);
if (!dir || !queryFile || !Number.isInteger(passes) || passes < 1 || (way !== undefined && !everyPosting)) {
  console.error('usage: tsx bench/stageProfile.ts <db folder> <queries.json> [passes ≥ 1] [--every-posting]');
  process.exit(2);
}
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const spans: Record<string, { wall: number[]; cpu: number[] }> = {};
const timed = <T>(name: string, work: () => T): T => {
  const w = performance.now();
  const c = cpuMs();
  try {
    return work();
  } finally {
    const s = (spans[name] ??= { wall: [], cpu: [] });
    s.wall.push(performance.now() - w);
    s.cpu.push(cpuMs() - c);
  }
};
const search = KeywordIndex.prototype.search;
KeywordIndex.prototype.search = function (this: KeywordIndex, ...args: Parameters<typeof search>) {
  if (everyPosting) this.pruneFromPostings = Infinity;
  return timed('bm25', () => search.apply(this, args));
};
const start = EntryColumns.prototype.startNearestSmall;
EntryColumns.prototype.startNearestSmall = function (this: EntryColumns, query: Float32Array) {
  const rank = timed('scanStart', () => start.call(this, query));
  return rank && ((filter, limit) => timed('scanWaitAndRank', () => rank(filter, limit)));
};
const { m, queries, ask } = await openKeptStore(dir, queryFile);
await ask(0, 'first');
await new Promise((resolve) => setTimeout(resolve, 8_000));
for (let pass = 1; pass <= passes; pass++) {
  for (const k of Object.keys(spans)) delete spans[k];
  const times: number[] = [];
  const cpu: number[] = [];
  const stages: Record<string, number[]> = {};
  for (let i = 0; i < queries.length; i++) {
    const t = performance.now();
    const c = cpuMs();
    const bundle = await ask(i, `pass${pass}`);
    times.push(performance.now() - t);
    cpu.push(cpuMs() - c);
    for (const [stage, ms] of Object.entries(bundle.timings)) (stages[stage] ??= []).push(ms);
  }
  const med = (xs: number[]) => Number(percentile(xs, 50).toFixed(2));
  console.log(
    JSON.stringify({
      pass,
      p50: med(times),
      cpuP50: med(cpu),
      stages: Object.fromEntries(Object.entries(stages).map(([s, ms]) => [s, med(ms)])),
      spans: Object.fromEntries(Object.entries(spans).map(([s, v]) => [s, { wall: med(v.wall), cpu: med(v.cpu) }])),
    }),
  );
}
await m.close();
