/**
 * npm run bench:served [-- --size 100000 --queries 200 --cli-runs 20]
 * A served store: what an agent's MCP call costs over the in-process call, and what a CLI call
 * costs when a server owns the folder against one that opens it cold. The owner runs in this
 * process (it holds the bench's precomputed-vector embedder); MCP clients, in a process of their
 * own (bench/servedClient.ts), reach it over streamable HTTP and over stdio through a `memcore mcp`
 * relay process, as an agent does; CLI calls are processes of the built CLI (dist/, built first). Prints a table and
 * writes bench/results/served-<size>.json.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { main } from '../src/cli/main.js';
import { openMemory, type MemoryEngine } from '../src/index.js';
import { startOwner } from '../src/server/owner.js';
import { benchOptions, ingestSynthetic, lookupEmbedder, stats, syntheticStore } from './synthetic.js';

const USAGE = `usage: npm run bench:served -- [--size 100000] [--queries 200] [--cli-runs 20] [--out <name>]

  --size <n>       entries in the store, ≥ 100 (default 100000)
  --queries <n>    build_task_context calls per path, ≥ 10 (default 200)
  --cli-runs <n>   memcore context processes timed on the served store, ≥ 1 (default 20)
  --out <name>     bench/results/<name>.json (default served-<size>)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;

const values = benchOptions(
  USAGE,
  {
    size: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '200' },
    'cli-runs': { type: 'string', default: '20' },
    out: { type: 'string' },
  },
  (v) =>
    [
      [v.size, 100],
      [v.queries, 10],
      [v['cli-runs'], 1],
    ].every(([x, min]) => Number.isInteger(Number(x)) && Number(x) >= Number(min)),
);
const size = Number(values.size);
const queryCount = Number(values.queries);
const cliRuns = Number(values['cli-runs']);
const progress = (m: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${m}`);
const repo = fileURLToPath(new URL('..', import.meta.url));
const builtCli = join(repo, 'dist/cli/main.js');

async function timed(n: number, run: (i: number) => Promise<unknown>, label: string): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    progress(`${label} ${i}/${n}`);
    const t = performance.now();
    await run(i);
    ms.push(performance.now() - t);
  }
  return ms;
}

progress('building dist/ …');
execFileSync('npm', ['run', '--silent', 'build'], { cwd: repo, stdio: 'ignore' });
const store = syntheticStore(size, { queries: queryCount });
for (const q of store.queries) store.vectors.set(q.text, q.vector);
const dir = await mkdtemp(join(tmpdir(), `memcore-served-${size}-`));
// No context cache: every call below is a full pipeline run, as the first call of a task is.
const open = () => openMemory({ path: dir, embedder: lookupEmbedder(store.vectors, 512), env: {}, cache: { ttlMs: 0 } });
let engine: MemoryEngine = await open();
const args = { cores: ['core-0', 'core-1', 'core-2', 'core-3'], max_entries: 12 };
try {
  await ingestSynthetic(engine, store, (m) => progress(`${size}: ${m}`));
  progress('indexing …');
  await engine.index({ annMinRows: 50_000 });
  await engine.close();

  // What a one-shot call pays with no server: open the folder and answer a first query, which
  // loads the resident structures (a CLI process cannot run it here: the store's embedder is the
  // bench's own, so this is measured in process, and a process start comes on top).
  const cold = await timed(
    2,
    async () => {
      const once = await open();
      await once.buildTaskContext(store.queries[0]!.text, { cores: args.cores, maxEntries: 12 });
      await once.close();
    },
    'cold open + first query',
  );

  engine = await open();
  const owner = await startOwner(engine, { runCli: (argv, io, context) => main(argv, io, context), version: 'bench', http: { port: 0 } });
  const queries = store.queries.map((q) => q.text);
  await engine.buildTaskContext(queries[0]!, { cores: args.cores, maxEntries: 12 }); // loads the resident structures

  const inProcess = await timed(
    queryCount,
    (i) => engine.buildTaskContext(queries[i]!, { cores: args.cores, maxEntries: 12 }),
    'in process',
  );

  // The agent is a process of its own, as it is in use: its side of each call does not queue behind the server's.
  const tasksFile = join(dir, 'bench-tasks.json');
  await writeFile(tasksFile, JSON.stringify({ tasks: queries, args }));
  const agent = async (label: string, ...how: string[]) => {
    progress(label);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./servedClient.ts', import.meta.url)), tasksFile, ...how],
      { cwd: repo, maxBuffer: 1 << 24 },
    );
    return JSON.parse(stdout) as number[];
  };
  const overHttp = await agent('MCP over HTTP', 'http', owner.url!, owner.token!);
  const overStdio = await agent('MCP over stdio relay', 'stdio', builtCli, dir);

  const served = await timed(
    cliRuns,
    (i) =>
      promisify(execFile)(
        process.execPath,
        [builtCli, 'context', queries[i % queries.length]!, '--core', 'core-0', '--format', 'prompt', '--db', dir],
        { env: {}, maxBuffer: 1 << 24 },
      ),
    'served CLI',
  );
  const nodeAlone = await timed(5, () => promisify(execFile)(process.execPath, ['-e', '0']), 'node -e 0');
  await owner.close();

  const result = {
    size,
    queries: queryCount,
    inProcessMs: stats(inProcess),
    mcpHttpMs: stats(overHttp),
    mcpStdioRelayMs: stats(overStdio),
    overheadP50Ms: { http: stats(overHttp).p50 - stats(inProcess).p50, stdioRelay: stats(overStdio).p50 - stats(inProcess).p50 },
    cliServedMs: stats(served),
    coldOpenMs: stats(cold),
    nodeStartMs: stats(nodeAlone),
  };
  progress('');
  const row = (name: string, s: { p50: number; p95: number }) =>
    `| ${name.padEnd(40)} | ${s.p50.toFixed(2).padStart(9)} | ${s.p95.toFixed(2).padStart(9)} |`;
  console.log(`\nserved store, ${size} entries, ${queryCount} calls a path (ms)\n`);
  console.log(
    [
      '| path | p50 | p95 |',
      '|---|---|---|',
      row('buildTaskContext in process', result.inProcessMs),
      row('build_task_context, MCP over HTTP', result.mcpHttpMs),
      row('build_task_context, MCP stdio via relay', result.mcpStdioRelayMs),
      row(`memcore context, served (${cliRuns} runs)`, result.cliServedMs),
      row('cold: open + first query, in process (2 runs)', result.coldOpenMs),
      row('node -e 0 (process start alone)', result.nodeStartMs),
    ].join('\n'),
  );
  console.log(
    `\nMCP overhead at p50: HTTP ${result.overheadP50Ms.http.toFixed(2)} ms, stdio relay ${result.overheadP50Ms.stdioRelay.toFixed(2)} ms`,
  );
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(resultsDir, { recursive: true });
  await writeFile(
    join(resultsDir, `${values.out ?? `served-${size}`}.json`),
    JSON.stringify({ date: new Date().toISOString(), ...result }, null, 2) + '\n',
  );
} finally {
  await engine.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}
