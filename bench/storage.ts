/**
 * Where a store's bytes go: builds a store of short entries through the public API and reports the
 * size of each part of the folder per entry, after ingest and after `index` (which compacts).
 *
 * npm run bench:storage [-- --entries 10000 --batch 500 --out storage]
 */
import { mkdtemp, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openMemory, type Embedder } from '../src/index.js';
import { mulberry32 } from '../src/embed/matryoshka.js';
import { graphDriverLabel, graphDriverOf, graphFileName } from '../src/store/graph/drivers.js';
import { readMeta } from '../src/store/meta.js';

const USAGE = `usage: npm run bench:storage -- [--entries 10000] [--batch 500] [--out <name>]
  --entries <n>   short entries to ingest (default 10000)
  --batch <n>     entries per ingest call, as files of that size would be (default 500)
  --out <name>    write bench/results/<name>.json (default storage)`;

function options() {
  try {
    const { values } = parseArgs({
      options: {
        entries: { type: 'string', default: '10000' },
        batch: { type: 'string', default: '500' },
        out: { type: 'string', default: 'storage' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    const entries = Number(values.entries);
    const batch = Number(values.batch);
    if (!Number.isInteger(entries) || entries < 1 || !Number.isInteger(batch) || batch < 1)
      throw new Error('--entries and --batch take whole numbers ≥ 1');
    return { entries, batch, out: values.out };
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

/** Short entries (~20 words) of distinct text from a small vocabulary. */
function shortEntries(n: number): { id: string; core_id: string; title: string; content: string }[] {
  const rand = mulberry32(11);
  const words =
    'token refresh cache migration retry timeout queue webhook payment invoice cursor header error field event trace deploy rollback flag release test database upload session cookie tenant quota clock'.split(
      ' ',
    );
  const pick = (k: number) => Array.from({ length: k }, () => words[Math.floor(rand() * words.length)]!).join(' ');
  return Array.from({ length: n }, (_, i) => ({
    id: `e${i}`,
    core_id: `core-${i % 8}`,
    title: `${pick(4)} ${i}`,
    content: `${pick(16)}.`,
  }));
}

/** 512-d vectors seeded by the text, like the local model's in size; cached like the local model's. */
function seededEmbedder(): Embedder {
  return {
    id: 'bench:seeded-512',
    dimensions: 512,
    truncatable: false,
    async embed(texts) {
      return texts.map((t) => {
        let seed = 0;
        for (const ch of t) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) >>> 0;
        const rand = mulberry32(seed);
        const v = Float32Array.from({ length: 512 }, () => rand() - 0.5);
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      });
    },
  };
}

async function sizeOf(path: string): Promise<number> {
  const s = await stat(path).catch(() => undefined);
  if (!s) return 0;
  if (!s.isDirectory()) return s.size;
  let total = 0;
  for (const name of await readdir(path)) total += await sizeOf(join(path, name));
  return total;
}

/** Bytes of each part of the folder: the current table data apart from what older versions keep. */
async function parts(dir: string): Promise<Record<string, number>> {
  const table = join(dir, 'lance', 'entries.lance');
  const graph = graphDriverOf(await readMeta(dir));
  const graphFile = join(dir, graphFileName(graph));
  return {
    'entries table: data files': await sizeOf(join(table, 'data')),
    'entries table: versions and transactions': (await sizeOf(join(table, '_versions'))) + (await sizeOf(join(table, '_transactions'))),
    'entries table: indexes': await sizeOf(join(table, '_indices')),
    'embedding cache': await sizeOf(join(dir, 'lance', 'embedding_cache.lance')),
    [`graph (${graphDriverLabel(graph)})`]: (await sizeOf(graphFile)) + (await sizeOf(`${graphFile}.wal`)),
    'meta, projection, journal':
      (await sizeOf(join(dir, 'meta.json'))) + (await sizeOf(join(dir, 'projection.json'))) + (await sizeOf(join(dir, 'journal'))),
  };
}

const { entries, batch, out } = options();
const dir = await mkdtemp(join(tmpdir(), 'memcore-storage-'));
try {
  const m = await openMemory({ path: dir, embedder: seededEmbedder(), env: {} });
  const all = shortEntries(entries);
  const textBytes = all.reduce((n, e) => n + Buffer.byteLength(e.title) + Buffer.byteLength(e.content), 0);
  for (let i = 0; i < all.length; i += batch) {
    await m.ingestDocument({ entries: all.slice(i, i + batch) }, { source: `batch-${i}` });
    if (process.stderr.isTTY) process.stderr.write(`\ringested ${Math.min(i + batch, all.length)}/${all.length}`);
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  const afterIngest = await parts(dir);
  await m.index();
  const afterIndex = await parts(dir);
  await m.close();
  const perEntry = (p: Record<string, number>) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Math.round(v / entries)]));
  const total = (p: Record<string, number>) => Object.values(p).reduce((a, b) => a + b, 0);
  const rows = Object.keys(afterIngest).map((k) => [
    k,
    String(Math.round(afterIngest[k]! / entries)),
    String(Math.round(afterIndex[k]! / entries)),
  ]);
  rows.push(['total', String(Math.round(total(afterIngest) / entries)), String(Math.round(total(afterIndex) / entries))]);
  console.log(
    `${entries} short entries (title + content ${Math.round(textBytes / entries)} bytes on average), ingested ${batch} at a time; bytes per entry:`,
  );
  const width = [Math.max(...rows.map((r) => r[0]!.length)), 12, 12];
  console.log(['part', 'after ingest', 'after index'].map((h, i) => h.padEnd(width[i]!)).join('  '));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join('  '));
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  const file = new URL(`./results/${out}.json`, import.meta.url);
  await writeFile(
    file,
    JSON.stringify(
      { entries, batch, textBytesPerEntry: textBytes / entries, afterIngest: perEntry(afterIngest), afterIndex: perEntry(afterIndex) },
      null,
      2,
    ) + '\n',
  );
  console.log(`wrote ${file.pathname}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
