/**
 * A bench store built the lean way: the synthetic generator (bench/synthetic.ts, the same records
 * as `npm run bench`) streamed into the engine's ingest, code first, then entries 5,000 a write,
 * then relations 100,000 a write (the bench's batches), then close, which leaves the snapshots
 * current. The process holds one chunk of the generated store at a time, not its 2 GB of vectors
 * at 1M, so a 1M store builds in ~4 GB rather than the full bench's ~19 GB. Prints one JSON line
 * with the phases' times (relations also per write) and the peak RSS; the queries go beside the
 * folder as <dir>.queries.json (bench/warmProcess.ts).
 *
 *   npx tsx bench/buildStore.ts --size 1000000 --dir /tmp/scale-1m [--phase entries|relations|all] [--no-close]
 *
 * `--phase entries` stops after the entries (a base to copy for relation experiments);
 * `--phase relations` writes the relations into such a folder (the entries are generated again,
 * not written, to reach the same random sequence). `--no-close` exits after the writes, each of
 * them committed, without the close that leaves the snapshots current: at 1M that close builds
 * every structure held in memory from the stores (it passed 11 GB of RSS, 2026-11-26).
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { openMemory, type MemoryEngine } from '../src/index.js';
import type { RelationRecord } from '../src/model/memoryFile.js';
import { benchOptions, lookupEmbedder, syntheticParts } from './synthetic.js';

const USAGE = 'usage: npx tsx bench/buildStore.ts --size <entries> --dir <folder> [--phase entries|relations|all] [--no-close]';
const values = benchOptions(
  USAGE,
  { size: { type: 'string' }, dir: { type: 'string' }, phase: { type: 'string' }, 'no-close': { type: 'boolean' } },
  (v) =>
    v.size !== undefined && /^\d+$/.test(v.size) && v.dir !== undefined && ['entries', 'relations', 'all', undefined].includes(v.phase),
);
const size = Number(values.size);
const dir = values.dir!;
const phase = values.phase ?? 'all';
const noClose = process.argv.includes('--no-close');
const writeEntries = phase !== 'relations';
const writeRelations = phase !== 'entries';
const DIMENSIONS = 512;
const ENTRY_BATCH = 5_000;
const RELATION_BATCH = 100_000;

const progress = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);
const vectors = new Map<string, Float32Array>();
const m: MemoryEngine = await openMemory({ path: dir, embedder: lookupEmbedder(vectors, DIMENSIONS), env: {} });
// CPU time (user + system, every thread of the process: Kuzu's included) moves less with the load than wall time
const times = { entriesMs: 0, relationsMs: 0, relationsCpuMs: 0, closeMs: 0, relationWritesMs: [] as number[] };
let peakRss = 0;
const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage().rss));

let pending: RelationRecord[] = [];
let written = 0;
async function flushRelations(all: boolean): Promise<void> {
  while (pending.length >= RELATION_BATCH || (all && pending.length > 0)) {
    const batch = pending.slice(0, RELATION_BATCH);
    pending = pending.slice(batch.length);
    const t = performance.now();
    const cpu = process.cpuUsage();
    // the bench's source names (bench/synthetic.ts ingestSynthetic), so that a rerun replaces them
    await m.ingestDocument({ relations: batch }, { source: `relations-${written}` });
    const ms = performance.now() - t;
    const used = process.cpuUsage(cpu);
    times.relationsCpuMs += (used.user + used.system) / 1000;
    times.relationsMs += ms;
    times.relationWritesMs.push(Math.round(ms));
    written += batch.length;
    sample();
    progress(`relations ${written}: ${(ms / 1000).toFixed(2)} s, RSS ${(process.memoryUsage().rss / 1024 ** 3).toFixed(2)} GB`);
  }
}

try {
  for (const part of syntheticParts(size, { vectors: writeEntries }, RELATION_BATCH)) {
    if (part.kind === 'code' && writeEntries) {
      await m.ingestDocument({ code_locations: part.code_locations }, { source: 'code' });
    } else if (part.kind === 'entries' && writeEntries) {
      for (const [k, v] of part.vectors) vectors.set(k, v);
      const t = performance.now();
      for (let i = 0; i < part.entries.length; i += ENTRY_BATCH) {
        const first = (part.entries[i]!.id as string).slice(1);
        await m.ingestDocument({ entries: part.entries.slice(i, i + ENTRY_BATCH) }, { source: `entries-${first}` });
      }
      times.entriesMs += performance.now() - t;
      vectors.clear();
      sample();
      progress(`entries to ${part.entries.at(-1)!.id}, RSS ${(process.memoryUsage().rss / 1024 ** 3).toFixed(2)} GB`);
    } else if (part.kind === 'relations' && writeRelations) {
      for (const r of part.relations) pending.push(r);
      await flushRelations(false);
    } else if (part.kind === 'paths') {
      // the bench writes golden paths with the code; here they come after the relations they
      // do not need, and before the IMPLEMENTS relations that do
      if (writeEntries) await m.ingestDocument({ golden_paths: part.golden_paths }, { source: 'paths' });
      if (writeRelations) {
        for (const r of part.relations) pending.push(r);
        await flushRelations(true);
      }
    } else if (part.kind === 'queries') {
      await writeFile(`${dir}.queries.json`, JSON.stringify(part.queries.map((q) => ({ text: q.text, vector: [...q.vector] }))));
    }
  }
} finally {
  const t = performance.now();
  if (!noClose) await m.close();
  times.closeMs = performance.now() - t;
}
sample();
console.log(
  JSON.stringify({
    size,
    dir,
    phase,
    at: new Date().toISOString(),
    entriesMs: Math.round(times.entriesMs),
    relationsMs: Math.round(times.relationsMs),
    relationsCpuMs: Math.round(times.relationsCpuMs),
    load: os.loadavg().map((x) => Number(x.toFixed(1))),
    relations: written,
    closeMs: Math.round(times.closeMs),
    peakRssMb: Math.round(peakRss / 1024 ** 2),
    relationWritesMs: times.relationWritesMs,
  }),
);
if (noClose) process.exit(0);
