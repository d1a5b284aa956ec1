/**
 * Why relation ingest slows as the graph grows: Kuzu alone (no memcore), a node table of entries
 * and a relationship table filled in transactions of `--batch` edges between random entries, the
 * way the driver writes them (COPY from an UNWIND of parameters, then COMMIT). Prints the COPY
 * and COMMIT time of a batch as the table grows, and the total.
 *
 * npm run bench:relations [-- --nodes 1000000 --edges 2300000 --batch 10000,100000 --out relation-commit]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kuzu from 'kuzu';
import type { QueryResult } from 'kuzu';
import { mulberry32 } from '../src/embed/matryoshka.js';
import { benchOptions } from './synthetic.js';

const USAGE = `usage: npm run bench:relations -- [--nodes 1000000] [--edges 2300000] [--batch 10000,100000] [--out relation-commit]
  --nodes <n>      entries (default 1000000)
  --edges <n>      RELATED edges between random entries (default 2300000)
  --batch <list>   edges per transaction, one run each (default 10000,100000)
  --out <name>     write bench/results/<name>.json (default relation-commit)`;

const values = benchOptions(
  USAGE,
  {
    nodes: { type: 'string', default: '1000000' },
    edges: { type: 'string', default: '2300000' },
    batch: { type: 'string', default: '10000,100000' },
    out: { type: 'string', default: 'relation-commit' },
  },
  (v) =>
    [v.nodes, v.edges, ...(v.batch ?? '').split(',')].every((x) => Number.isInteger(Number(x)) && Number(x) >= 1) &&
    /^[\w.-]+$/.test(v.out ?? ''),
);
const nodes = Number(values.nodes);
const edges = Number(values.edges);
const batches = values.batch!.split(',').map(Number);

interface Run {
  batch: number;
  nodesMs: number;
  totalMs: number;
  /** COPY and COMMIT of the batch that starts at `storedEdges`, at about a tenth of the way each. */
  samples: { storedEdges: number; copyMs: number; commitMs: number }[];
}

async function run(batch: number): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'memcore-relation-commit-'));
  const db = new kuzu.Database(join(dir, 'graph.kuzu'));
  await db.init();
  const conn = new kuzu.Connection(db);
  const query = async (cypher: string, params?: Record<string, kuzu.KuzuValue>) => {
    const result = (params ? await conn.execute(await conn.prepare(cypher), params) : await conn.query(cypher)) as QueryResult;
    result.close();
  };
  try {
    await query('CREATE NODE TABLE MemoryEntry(id STRING, core_id STRING, PRIMARY KEY(id))');
    await query('CREATE REL TABLE RELATED(FROM MemoryEntry TO MemoryEntry, weight DOUBLE, kind STRING)');
    let t = performance.now();
    for (let i = 0; i < nodes; i += 100_000) {
      const ids = Array.from({ length: Math.min(100_000, nodes - i) }, (_, k) => `e${i + k}`);
      await query('COPY MemoryEntry FROM (UNWIND range(1, $n) AS i RETURN $ids[i], "core")', { n: ids.length, ids });
    }
    const nodesMs = performance.now() - t;
    const rand = mulberry32(7);
    const samples: Run['samples'] = [];
    const every = Math.max(1, Math.floor(edges / batch / 10));
    t = performance.now();
    for (let stored = 0, k = 0; stored < edges; stored += batch, k++) {
      const n = Math.min(batch, edges - stored);
      const from = Array.from({ length: n }, () => `e${Math.floor(rand() * nodes)}`);
      const to = Array.from({ length: n }, () => `e${Math.floor(rand() * nodes)}`);
      const t0 = performance.now();
      await query('BEGIN TRANSACTION');
      await query('COPY RELATED FROM (UNWIND range(1, $n) AS i RETURN $from[i], $to[i], 0.5, "related")', { n, from, to });
      const t1 = performance.now();
      await query('COMMIT');
      if (k % every === 0) samples.push({ storedEdges: stored, copyMs: t1 - t0, commitMs: performance.now() - t1 });
      if (process.stderr.isTTY) process.stderr.write(`\r\x1b[Kbatch ${batch}: ${stored + n}/${edges} edges`);
    }
    return { batch, nodesMs, totalMs: performance.now() - t, samples };
  } finally {
    await conn.close();
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const runs: Run[] = [];
for (const batch of batches) runs.push(await run(batch));
if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
console.log(`${nodes.toLocaleString('en')} entries, ${edges.toLocaleString('en')} random RELATED edges; ms per batch as the table grows`);
for (const r of runs) {
  console.log(
    `\nbatch ${r.batch.toLocaleString('en')}: total ${(r.totalMs / 1000).toFixed(1)} s (nodes ${(r.nodesMs / 1000).toFixed(1)} s)`,
  );
  console.log('stored edges   copy  commit');
  for (const s of r.samples)
    console.log(
      `${s.storedEdges.toLocaleString('en').padStart(12)}  ${s.copyMs.toFixed(0).padStart(5)}  ${s.commitMs.toFixed(0).padStart(6)}`,
    );
}
const out = join(new URL('./results/', import.meta.url).pathname, `${values.out}.json`);
await writeFile(out, `${JSON.stringify({ date: new Date().toISOString(), nodes, edges, runs }, null, 2)}\n`);
console.log(`\nwrote ${out}`);
