/**
 * The first query in a fresh process after each bulk write: a bench store of `--size` entries is
 * written as `ingest`, `import`, `import-code`, `reembed` and `restore` write it (their library
 * calls, then close, as the CLI's process ends), and after each, bench/freshProcess.ts opens the
 * folder in a new process and answers one buildTaskContext. Prints a table (the writer's time with
 * its close, the fresh process's open + first query, how it loaded each structure) and writes
 * bench/results/<out>.json (docs/performance.md, "The first query after a write").
 *
 *   npx tsx bench/afterWrite.ts [--size 20000] [--out after-write-20k]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemory, restoreMemory, type Embedder, type MemoryEngine } from '../src/index.js';
import { benchOptions, fnv1a, ingestSynthetic, syntheticStore } from './synthetic.js';

const USAGE = `usage: npx tsx bench/afterWrite.ts [--size 20000] [--out <name>]`;
const values = benchOptions(
  USAGE,
  { size: { type: 'string' }, out: { type: 'string' } },
  (v) => v.size === undefined || /^\d+$/.test(v.size),
);
const size = Number(values.size ?? 20_000);
const out = values.out ?? `after-write-${size >= 1000 ? `${size / 1000}k` : size}`;
const DIMENSIONS = 512;
const FIRST = 'first query in a fresh process';

const store = syntheticStore(size, { queries: 1 });
const queryVector = store.queries[0]!.vector;

/** The synthetic store's vectors; any other text (imported documents and code) a vector of its own words' hash. */
function benchEmbedder(id: string): Embedder {
  const hashed = (text: string) => {
    const v = new Float32Array(DIMENSIONS);
    for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
      const k = fnv1a(word) % DIMENSIONS;
      v[k] = (v[k] ?? 0) + 1;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  };
  return {
    id,
    dimensions: DIMENSIONS,
    truncatable: false,
    cacheVectors: false,
    embed: async (texts) => texts.map((t) => store.vectors.get(t) ?? (t === FIRST ? queryVector : hashed(t))),
  };
}

interface Step {
  command: string;
  /** What the write was. */
  what: string;
  /** The writer: its calls and its close (which leaves the snapshots). */
  writeMs: number;
  fresh: { openMs: number; firstQueryMs: number; rssMb: number; resident: Record<string, string> };
}

const progress = (m: string) => process.stderr.write(`${m}\n`);
const root = await mkdtemp(join(tmpdir(), `memcore-after-write-${size}-`));
const db = join(root, 'db');
const cores = ['core-0', 'core-1', 'core-2', 'core-3'];
const steps: Step[] = [];
let embedderId = `bench:precomputed-${DIMENSIONS}`;

/** Opens the folder, runs the write, closes; then a fresh process's first query. */
async function step(command: string, what: string, write: (m: MemoryEngine) => Promise<unknown>): Promise<void> {
  progress(`${command}: ${what} …`);
  const started = performance.now();
  const m = await openMemory({ path: db, embedder: benchEmbedder(embedderId), env: {} });
  try {
    await write(m);
  } finally {
    await m.close();
  }
  const writeMs = performance.now() - started;
  progress(`${command}: a fresh process …`);
  steps.push({ command, what, writeMs, fresh: freshProcess(db) });
}

function freshProcess(dir: string): Step['fresh'] {
  const vectorFile = join(root, 'query.f32');
  const script = fileURLToPath(new URL('./freshProcess.ts', import.meta.url));
  const run = spawnSync(process.execPath, ['--import', 'tsx', script, dir, vectorFile, cores.join(','), embedderId], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the fresh process failed (${run.status}): ${run.stderr.slice(-500)}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as Step['fresh'];
}

try {
  await writeFile(join(root, 'query.f32'), Buffer.from(queryVector.buffer, queryVector.byteOffset, queryVector.byteLength));
  await step('ingest', `${size} entries, ${store.doc.relations.length} relations, into an empty folder`, (m) =>
    ingestSynthetic(m, store, (p) => progress(`  ${p}`)),
  );
  // Small writes: an ingest (a bulk command: every snapshot left current), then upserts as
  // `remember` and MCP writes make them (left to the reader's catch-up from the change log).
  const extra = Array.from({ length: 400 }, (_, i) => {
    const base = store.doc.entries[i]!;
    const entry = { ...base, id: `x${i}`, title: `${base.title} again`, content: `${base.content} again` };
    store.vectors.set(`${entry.title}\n${entry.content}`, store.vectors.get(`${base.title}\n${base.content}`)!);
    return entry;
  });
  await step('ingest', '200 more entries', (m) => m.ingestDocument({ entries: extra.slice(0, 200) }, { source: 'extra' }));
  await step('upsert', '200 more entries, 20 writes (as remember does)', async (m) => {
    for (let i = 200; i < 400; i += 10) await m.upsert(extra.slice(i, i + 10));
  });

  const docs = join(root, 'docs');
  await mkdir(docs);
  for (let i = 0; i < 50; i++)
    await writeFile(join(docs, `note-${i}.md`), `# Note ${i}\n\n${store.doc.entries[i]!.content}\n\n## Detail\n\nmore about note ${i}.\n`);
  await step('import', '50 markdown documents', (m) => m.importMarkdown([docs]));

  const repo = join(root, 'repo');
  await mkdir(join(repo, 'src'), { recursive: true });
  for (let i = 0; i < 100; i++)
    await writeFile(
      join(repo, 'src', `mod${i}.ts`),
      `export function fn${i}(x: number) {\n  return x + ${i};\n}\n\nexport class Thing${i} {}\n`,
    );
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=B', ...args], { cwd: repo });
  git('init', '-q');
  git('add', '.');
  git('commit', '-q', '-m', 'bench');
  await step('import-code', '100 TypeScript files', (m) => m.importCode(repo, { codebase: 'bench-repo' }));

  const next = `bench:precomputed-${DIMENSIONS}-b`;
  await step('reembed', `every entry, to ${next}`, async (m) => {
    await m.reembed(benchEmbedder(next));
    embedderId = next; // the fresh process's
  });

  const backup = join(root, 'backup');
  const restored = join(root, 'restored');
  await step('backup', 'the folder (no snapshots)', (m) => m.backup(backup));
  steps.pop(); // a read: not measured
  progress('restore …');
  const started = performance.now();
  await restoreMemory(backup, { path: restored });
  steps.push({
    command: 'restore',
    what: 'the backup, into a new folder',
    writeMs: performance.now() - started,
    fresh: freshProcess(restored),
  });
} finally {
  await rm(root, { recursive: true, force: true });
}

const f = (x: number, digits = 2) => x.toFixed(digits);
console.log(`\nfirst query in a fresh process after each write, ${size} entries (${new Date().toISOString()})\n`);
console.log('| command | write | writer s (with close) | fresh open s | fresh open + first query s | fresh RSS MB | structures loaded |');
console.log('|---|---|---:|---:|---:|---:|---|');
for (const s of steps) {
  const loads = Object.entries(s.fresh.resident)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    `| ${s.command} | ${s.what} | ${f(s.writeMs / 1000)} | ${f(s.fresh.openMs / 1000)} | ${f(s.fresh.firstQueryMs / 1000)} | ${f(s.fresh.rssMb, 0)} | ${loads} |`,
  );
}
const file = fileURLToPath(new URL(`./results/${out}.json`, import.meta.url));
await writeFile(file, JSON.stringify({ size, at: new Date().toISOString(), steps }, null, 2));
console.log(`\nwritten ${file}`);
