/**
 * npm run bench:load [-- --clients 8 --seconds 60]
 * A load test of `memcore serve` on 127.0.0.1: N MCP clients over streamable HTTP, each looping
 * over a mix of build_task_context (60%), search_memory (20%), remember (15%) and get_entries (5%)
 * for a fixed time, against the example memory and the offline model. Afterwards every write the
 * server acknowledged is looked for, through the server and, once it has stopped, in the folder
 * itself. Reports errors (aim 0), lost and duplicated writes (aim 0), p50/p99 per operation and
 * of the writes alone (concurrent writes are group-committed); writes bench/results/load-<clients>.json.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { traceTable, type ClientWrite, type LoadTrace } from './loadTrace.js';
import { benchOptions, stats } from './synthetic.js';

const USAGE = `usage: npm run bench:load -- [--clients 8] [--seconds 60] [--out <name>] [--trace]

  --clients <n>   concurrent MCP clients, 1 to 64 (default 8)
  --seconds <n>   how long they run, 1 to 600 (default 60)
  --out <name>    bench/results/<name>.json (default load-<clients>)
  --trace         also time each write's steps inside the server (bench/loadTrace.ts) and print where they went

Exit codes: 0 done with no error and no lost or duplicated write, 1 errors, lost or duplicated writes (or a failed run), 2 bad arguments.`;

const values = benchOptions(
  USAGE,
  {
    clients: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '60' },
    out: { type: 'string' },
    trace: { type: 'boolean', default: false },
  },
  (v) => {
    const n = Number(v.clients);
    const t = Number(v.seconds);
    return Number.isInteger(n) && n >= 1 && n <= 64 && Number.isInteger(t) && t >= 1 && t <= 600;
  },
);
const clients = Number(values.clients);
const seconds = Number(values.seconds);
const repo = fileURLToPath(new URL('..', import.meta.url));
const cli = join(repo, 'src/cli/main.ts');
const progress = (m: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${m}`);
const memcore = (args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', cli, ...args], { cwd: repo, maxBuffer: 1 << 26 });

const TASKS = [
  'add a refresh-token endpoint',
  'rotate signing keys',
  'zero-downtime NOT NULL column',
  'return problem+json errors',
  'version the orders API',
  'retry a failed payment',
  'log out every session',
  'add an index without locking the table',
];
type Op = 'build_task_context' | 'search_memory' | 'remember' | 'get_entries';

const dir = await mkdtemp(join(tmpdir(), 'memcore-load-'));
const db = join(dir, 'db');
// benchOptions keeps the string options only.
const traceFile = process.argv.slice(2).includes('--trace') ? join(dir, 'trace.json') : undefined;
const server = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    ...(traceFile ? ['--import', join(repo, 'bench/loadTrace.ts')] : []),
    cli,
    'serve',
    '--db',
    db,
    '--port',
    '0',
    '--json',
  ],
  { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(traceFile ? { MEMCORE_LOAD_TRACE: traceFile } : {}) } },
);
let failed = false;
try {
  const ready = JSON.parse(
    await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.trimEnd().endsWith('}')) resolve(out);
      });
      server.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
    }),
  ) as { url: string; tokenFile: string };
  const token = (await readFile(ready.tokenFile, 'utf8')).trim();
  progress('ingesting the example memory through the server …');
  await memcore(['ingest', join(repo, 'examples/memory/orders-api.yaml'), '--db', db]);

  const latencies: Record<Op, number[]> = { build_task_context: [], search_memory: [], remember: [], get_entries: [] };
  const errors: string[] = [];
  const acknowledged: string[] = [];
  const loadAtStart = loadavg()[0]!;
  // The clients share this process's one thread: its delays are part of every latency measured.
  const clientLoop = monitorEventLoopDelay({ resolution: 10 });
  clientLoop.enable();
  const deadline = Date.now() + seconds * 1000;
  const started = performance.now();
  /** Each remember: when it started (ms into the run) and how long it took. */
  const writeTimes: { atMs: number; ms: number }[] = [];
  /** Each remember by title, in epoch ms (the server's trace is joined on them). */
  const clientWrites: ClientWrite[] = [];
  let calls = 0;
  const runClient = async (n: number) => {
    const client = new Client({ name: `load-${n}`, version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(ready.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    for (let i = 0; Date.now() < deadline; i++) {
      const roll = (n * 7919 + i * 104729) % 100;
      const op: Op = roll < 60 ? 'build_task_context' : roll < 80 ? 'search_memory' : roll < 95 ? 'remember' : 'get_entries';
      const args =
        op === 'build_task_context'
          ? { task: `${TASKS[i % TASKS.length]} (${n}.${i})` }
          : op === 'search_memory'
            ? { query: TASKS[(i + n) % TASKS.length]!, limit: 5 }
            : op === 'remember'
              ? { title: `Load note ${n}.${i}`, content: `Client ${n} wrote note ${i} about ${TASKS[i % TASKS.length]}.`, core: 'load' }
              : { ids: acknowledged.slice(-3).concat('auth-refresh-rotation') };
      const t = performance.now();
      try {
        const r = await client.callTool({ name: op, arguments: args });
        latencies[op].push(performance.now() - t);
        if (op === 'remember') {
          writeTimes.push({ atMs: t - started, ms: performance.now() - t });
          const epoch = performance.timeOrigin;
          clientWrites.push({ title: (args as { title: string }).title, start: epoch + t, end: epoch + performance.now() });
        }
        if (r.isError) errors.push(`${op}: ${JSON.stringify(r.content).slice(0, 200)}`);
        else if (op === 'remember') {
          const { id } = r.structuredContent as { id: string };
          acknowledged.push(id);
          clientWrites.at(-1)!.id = id;
        }
      } catch (e) {
        errors.push(`${op}: ${(e as Error).message}`);
      }
      if (++calls % 20 === 0) progress(`${calls} calls, ${acknowledged.length} writes, ${errors.length} errors`);
    }
    await client.close();
  };
  await Promise.all(Array.from({ length: clients }, (_, n) => runClient(n)));
  clientLoop.disable();
  const loadAtEnd = loadavg()[0]!;

  progress('checking every acknowledged write …');
  const check = new Client({ name: 'load-check', version: '1' });
  await check.connect(
    new StreamableHTTPClientTransport(new URL(ready.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  const missingServed = (
    (
      await check.callTool({
        name: 'get_entries',
        arguments: { ids: acknowledged.length ? acknowledged.slice(0, 1000) : ['auth-refresh-rotation'] },
      })
    ).structuredContent as { missing: string[] }
  ).missing;
  await check.close();
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  const listed = JSON.parse((await memcore(['list', '--core', 'load', '--limit', '10000', '--json', '--db', db])).stdout) as {
    id: string;
  }[];
  const onDisk = new Set(listed.map((e) => e.id));
  const lost = acknowledged.filter((id) => !onDisk.has(id));
  // An entry listed twice is a write applied twice (each remember here has a title, so an id, of its own).
  const duplicated = listed.length - onDisk.size;

  const result = {
    date: new Date().toISOString(),
    clients,
    seconds,
    calls,
    errors: errors.length,
    firstErrors: errors.slice(0, 5),
    writesAcknowledged: acknowledged.length,
    lostWrites: lost.length,
    duplicatedWrites: duplicated,
    writeMs: latencies.remember.length ? stats(latencies.remember) : undefined,
    /** The slowest writes, when they started: the first ones pay what a process loads once (the model in its workers). */
    slowestWrites: [...writeTimes].sort((a, b) => b.ms - a.ms).slice(0, 5),
    missingThroughServer: missingServed.length,
    opsPerSecond: calls / seconds,
    /** The 1-minute load average when the clients started and stopped (2 cores here: above 2, the machine was shared). */
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    clientLoopDelayMs: { p50: clientLoop.percentile(50) / 1e6, p99: clientLoop.percentile(99) / 1e6, max: clientLoop.max / 1e6 },
    latencyMs: Object.fromEntries(Object.entries(latencies).map(([op, ms]) => [op, ms.length ? { n: ms.length, ...stats(ms) } : { n: 0 }])),
  };
  progress('');
  console.log(
    `\nmemcore serve under load: ${clients} MCP clients over HTTP for ${seconds} s, ${calls} calls (${result.opsPerSecond.toFixed(1)}/s)\n`,
  );
  console.log('| operation | calls | p50 ms | p99 ms |\n|---|---|---|---|');
  for (const [op, s] of Object.entries(result.latencyMs)) {
    const v = s as { n: number; p50?: number; p99?: number };
    console.log(`| ${op} | ${v.n} | ${v.p50?.toFixed(1) ?? '-'} | ${v.p99?.toFixed(1) ?? '-'} |`);
  }
  console.log(
    `\nerrors: ${result.errors}; writes acknowledged: ${result.writesAcknowledged}; lost: ${result.lostWrites} (missing through the server: ${result.missingThroughServer}); duplicated: ${result.duplicatedWrites}`,
  );
  console.log(
    `load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end; the clients' event loop (this process) delay p50 ${result.clientLoopDelayMs.p50.toFixed(1)} / p99 ${result.clientLoopDelayMs.p99.toFixed(1)} ms`,
  );
  if (result.writeMs) console.log(`writes (remember): p50 ${result.writeMs.p50.toFixed(1)} ms, p99 ${result.writeMs.p99.toFixed(1)} ms`);
  if (result.slowestWrites.length > 0)
    console.log(
      `slowest writes: ${result.slowestWrites.map((w) => `${w.ms.toFixed(0)} ms at ${(w.atMs / 1000).toFixed(1)} s`).join(', ')}`,
    );
  if (traceFile) {
    const trace = JSON.parse(await readFile(traceFile, 'utf8')) as LoadTrace;
    console.log(`\nwhere the writes' time went (ms; the five slowest on the right):\n${traceTable(trace, clientWrites)}`);
  }
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(resultsDir, { recursive: true });
  await writeFile(join(resultsDir, `${values.out ?? `load-${clients}`}.json`), JSON.stringify(result, null, 2) + '\n');
  failed = result.errors > 0 || result.lostWrites > 0 || result.duplicatedWrites > 0 || result.missingThroughServer > 0;
} catch (e) {
  console.error(`load run failed: ${(e as Error).message}`);
  failed = true;
} finally {
  if (server.exitCode === null) server.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
