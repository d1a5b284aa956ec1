/**
 * npm run bench:first-call [-- --tasks 40 --entries 0 --out first-call]
 * What an agent waits for, end to end: task text in, `<memory>` block out, through `memcore mcp`
 * (the built CLI, dist/, built first) over stdio, with the local embedding model, every task new
 * to the server (no context cache, no query-vector cache hit). Beside it, the same tasks in process
 * (buildTaskContext and the <memory> text, the model included; the engine's own `embed` stage gives
 * the model's share), and the model embedding a task alone, so the README can say what the engine's
 * own figures leave out and what MCP stdio adds. On the example memory (default), or with
 * `--entries N` on the synthetic store of bench:served (N entries, their vectors stored under the
 * local model's id, so the server embeds each task with the real model). Prints a table and writes
 * bench/results/<out>.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { formatContext, localEmbedder, openMemory, type TaskContextOptions } from '../src/index.js';
import { benchOptions, ingestSynthetic, lookupEmbedder, percentile, stats, syntheticStore } from './synthetic.js';

const USAGE = `usage: npm run bench:first-call -- [--tasks 40] [--entries 0] [--out first-call] [--dir <folder>]

  --tasks <n>     distinct tasks timed on each path, 5 to 200 (default 40)
  --entries <n>   0: the example memory (default); 1000 to 1000000: the synthetic store of that size
  --out <name>    bench/results/<name>.json (default first-call, or first-call-<n> with --entries)
  --dir <folder>  keep the memory in this folder and reuse it on the next run with the same
                  --entries (default: a temporary folder, removed after the run)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;

const values = benchOptions(
  USAGE,
  {
    tasks: { type: 'string', default: '40' },
    entries: { type: 'string', default: '0' },
    out: { type: 'string' },
    dir: { type: 'string' },
  },
  (v) => {
    const n = Number(v.tasks);
    const size = Number(v.entries);
    return Number.isInteger(n) && n >= 5 && n <= 200 && Number.isInteger(size) && (size === 0 || (size >= 1000 && size <= 1_000_000));
  },
);
const taskCount = Number(values.tasks);
const entries = Number(values.entries);
const repo = fileURLToPath(new URL('..', import.meta.url));
const example = join(repo, 'examples/memory/orders-api.yaml');
const builtCli = join(repo, 'dist/cli/main.js');
const progress = (m: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${m}`);

// Tasks an agent might start on this service: each text is new, so nothing is answered from a cache.
const VERBS = ['Add', 'Fix', 'Change', 'Review', 'Speed up', 'Document', 'Test', 'Refactor'];
const THINGS = [
  'the refresh-token endpoint',
  'token reuse detection',
  'a NOT NULL column on orders',
  'the problem+json error responses',
  'the payment webhook retries',
  'the order cancellation flow',
  'rate limiting on login',
  'the JWKS key rotation',
  'the outbox publisher',
  'pagination of the orders list',
  'idempotency keys on checkout',
  'the migration runner',
  'the dead-letter queue alert',
  'the audit log of refunds',
  'caching of product prices',
  'the health check endpoint',
  'structured request logging',
  'the password reset email',
  'the CSV export of orders',
  'the session timeout',
  'the address validation',
  'the inventory reservation',
  'the currency rounding',
  'the admin role checks',
  'the API versioning header',
];
// On the synthetic store, its own query texts (words its entries hold, each text new).
const synthetic = entries ? syntheticStore(entries, { queries: taskCount + 2 }) : undefined;
const tasks = synthetic
  ? synthetic.queries.map((q) => q.text)
  : Array.from({ length: taskCount + 2 }, (_, i) => `${VERBS[i % VERBS.length]} ${THINGS[i % THINGS.length]} (${i})`);
const [warmStdio, warmInProcess, ...timedTasks] = tasks;

/**
 * CPU ms a process has used (user + system), from /proc on Linux; undefined elsewhere. On a shared
 * machine wall times carry every other process's load; the CPU a call costs does much less so.
 */
function processCpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms (CLK_TCK 100)
  } catch {
    return undefined;
  }
}
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const stageSum = (timings: Record<string, number>) => Object.values(timings).reduce((a, b) => a + b, 0);

async function timed(run: (task: string) => Promise<unknown>, label: string): Promise<number[]> {
  const ms: number[] = [];
  for (const [i, task] of timedTasks.entries()) {
    progress(`${label} ${i}/${timedTasks.length}`);
    const t = performance.now();
    await run(task);
    ms.push(performance.now() - t);
  }
  return ms;
}

progress('building dist/ …');
execFileSync('npm', ['run', '--silent', 'build'], { cwd: repo, stdio: 'ignore' });
// --dir: the folder is kept, and a folder this bench built before for the same --entries is reused
// (a marker file written after the build says so): a 100K store takes minutes to build.
const keptDir = values.dir;
const dir = keptDir ?? (await mkdtemp(join(tmpdir(), 'memcore-first-call-')));
const builtMarker = join(dir, `.first-call-${entries}`);
const reuse = keptDir !== undefined && existsSync(builtMarker);
if (keptDir !== undefined && !reuse) await mkdir(keptDir, { recursive: true });
const model = localEmbedder();
// On the synthetic store, the arguments of bench:served (whose +3.4 ms MCP figure this one revisits).
const args: { cores?: string[]; max_entries?: number } = entries
  ? { cores: ['core-0', 'core-1', 'core-2', 'core-3'], max_entries: 12 }
  : {};
const options: TaskContextOptions = entries ? { cores: args.cores!, maxEntries: args.max_entries! } : {};
try {
  if (reuse) {
    progress(`reusing ${dir}`);
  } else if (!synthetic) {
    progress('ingesting the example memory with the local model …');
    const setup = await openMemory({ path: dir, env: {} });
    await setup.ingest(example);
    await setup.close();
  } else {
    // The synthetic vectors stored under the local model's id: every task is still embedded by the real model.
    const store = synthetic;
    const stored = { ...lookupEmbedder(store.vectors, 512), id: model.id };
    const setup = await openMemory({ path: dir, embedder: stored, env: {} });
    await ingestSynthetic(setup, store, (m) => progress(`${entries}: ${m}`));
    progress('indexing …');
    await setup.index({ annMinRows: 50_000 });
    await setup.close();
  }
  if (keptDir !== undefined && !reuse) await writeFile(builtMarker, `${new Date().toISOString()}\n`);

  // The agent's side: the MCP SDK client spawning `memcore mcp`, as an agent config does.
  const client = new Client({ name: 'bench-first-call', version: '1' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [builtCli, 'mcp', '--db', dir],
    env: {},
    stderr: 'ignore',
  });
  await client.connect(transport);
  // The server has opened the folder, loaded its resident structures and the model.
  await client.callTool({ name: 'build_task_context', arguments: { task: warmStdio!, ...args } });
  // It warms itself when it starts (MemoryEngine.warm): the timed calls begin once it holds the
  // entries whole, as a server an agent has used for a few seconds does. A CLI call while it
  // serves runs in it, so `stats` says what the server holds.
  const warmedAt = performance.now();
  for (;;) {
    const stats = JSON.parse(execFileSync(process.execPath, [builtCli, 'stats', '--json', '--db', dir], { env: {}, encoding: 'utf8' })) as {
      search: { entries: string };
    };
    if (stats.search.entries === 'memory' || performance.now() - warmedAt > 60_000) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  let answerBytes = 0;
  const serverCpuBefore = processCpuMs(transport.pid!);
  const clientCpuBefore = ownCpuMs();
  // The bundle carries the server's own stage timings: what a call spent outside them (MCP, the
  // transport, the <memory> text, the engine's bookkeeping) is measured call by call, not as a
  // difference of two loops run at other moments.
  const stagesOverStdio: number[] = [];
  const overStdio = await timed(async (task) => {
    const r = await client.callTool({ name: 'build_task_context', arguments: { task, ...args } });
    const text = (r.content as { text?: string }[]).map((c) => c.text ?? '').join('');
    if (r.isError || !text.includes('<memory')) throw new Error(`no <memory> block for "${task}": ${text.slice(0, 200)}`);
    answerBytes = Math.max(answerBytes, JSON.stringify(r).length);
    stagesOverStdio.push(stageSum((r.structuredContent as { timings: Record<string, number> }).timings));
  }, 'MCP stdio');
  const serverCpuAfter = processCpuMs(transport.pid!);
  const cpuPerCall = {
    mcpServer:
      serverCpuBefore === undefined || serverCpuAfter === undefined ? undefined : (serverCpuAfter - serverCpuBefore) / timedTasks.length,
    mcpClient: (ownCpuMs() - clientCpuBefore) / timedTasks.length,
    inProcess: 0,
    model: 0,
  };
  await client.close();

  // The same tasks in process, on a store with no context cache: the engine, the <memory> text, and the engine's own embed stage.
  // Warmed as the server warms itself when it starts (MemoryEngine.warm): what an agent's
  // long-lived process meets, not a fresh one's first seconds.
  const engine = await openMemory({ path: dir, env: {}, cache: { ttlMs: 0 } });
  await engine.warm();
  await engine.buildTaskContext(warmInProcess!, options);
  const embedStage: number[] = [];
  const stageMs: Record<string, number[]> = {};
  const stagesInProcess: number[] = [];
  let cpuBefore = ownCpuMs();
  const inProcess = await timed(async (task) => {
    const bundle = await engine.buildTaskContext(`${task} again`, options);
    if (!formatContext(bundle, { style: 'prompt', withBundleId: true }).includes('<memory'))
      throw new Error(`no <memory> block for "${task}"`);
    embedStage.push(bundle.timings.embed ?? NaN);
    for (const [stage, ms] of Object.entries(bundle.timings)) (stageMs[stage] ??= []).push(ms);
    stagesInProcess.push(stageSum(bundle.timings));
  }, 'in process');
  cpuPerCall.inProcess = (ownCpuMs() - cpuBefore) / timedTasks.length;
  await engine.close();
  await model.embed([warmInProcess!]);
  cpuBefore = ownCpuMs();
  const embedOnly = await timed((task) => model.embed([`${task} once more`]), 'the model alone');
  cpuPerCall.model = (ownCpuMs() - cpuBefore) / timedTasks.length;

  // p10 beside p50: on a shared machine the quieter moments are nearer what an idle one gives.
  const withP10 = (xs: number[]) => ({ p10: percentile(xs, 10), ...stats(xs) });
  const mcp = withP10(overStdio);
  const local = withP10(inProcess);
  const embed = withP10(embedStage);
  const result = {
    memory: entries ? `synthetic, ${entries} entries (bench/synthetic.ts), cores 0-3, 12 entries` : 'examples/memory/orders-api.yaml',
    entries: entries || undefined,
    tasks: timedTasks.length,
    mcpStdioMs: mcp,
    inProcessMs: local,
    embedStageMs: embed,
    embedTaskMs: withP10(embedOnly),
    mcpOverheadP50Ms: mcp.p50 - local.p50,
    /** Per call, the wall time outside the engine's stages (bundle.timings): over stdio, and in process (the <memory> text, the cache key, the gap log). */
    outsideStagesP50Ms: {
      overStdio: percentile(
        overStdio.map((ms, i) => ms - stagesOverStdio[i]!),
        50,
      ),
      inProcess: percentile(
        inProcess.map((ms, i) => ms - stagesInProcess[i]!),
        50,
      ),
    },
    mcpOverheadP10Ms: mcp.p10 - local.p10,
    embedShareOfMcpP50: embed.p50 / mcp.p50,
    largestAnswerBytes: answerBytes,
    /** In process: each stage's p50 (bundle.timings), the engine's part beside the model's `embed`. */
    inProcessStageP50Ms: Object.fromEntries(Object.entries(stageMs).map(([stage, ms]) => [stage, percentile(ms, 50)])),
    /** CPU ms a call: the `memcore mcp` process and this (agent) process over stdio; this process in process and for the model alone. */
    cpuMsPerCall: cpuPerCall,
    loadAverage: loadavg(),
  };
  progress('');
  const row = (name: string, s: { p10: number; p50: number; p95: number }) =>
    `| ${name.padEnd(62)} | ${[s.p10, s.p50, s.p95].map((x) => x.toFixed(1).padStart(6)).join(' | ')} |`;
  console.log(`\n${result.memory}, local model, ${timedTasks.length} new tasks a path (ms)\n`);
  console.log(
    [
      '| path | p10 | p50 | p95 |',
      '|---|---|---|---|',
      row('build_task_context over MCP stdio (task in, <memory> out)', mcp),
      row('buildTaskContext + <memory> text in process, no cache', local),
      row('  of which the engine’s embed stage (the model on the task)', embed),
      row('the local model embedding the task alone', result.embedTaskMs),
    ].join('\n'),
  );
  console.log(
    `\nMCP stdio over in process: ${result.mcpOverheadP50Ms.toFixed(2)} ms at p50, ${result.mcpOverheadP10Ms.toFixed(2)} ms at p10; the model's share of the MCP call at p50: ${(100 * result.embedShareOfMcpP50).toFixed(0)}%; largest answer ${answerBytes} bytes`,
  );
  console.log(
    `Outside the engine's stages, a call's p50: ${result.outsideStagesP50Ms.overStdio.toFixed(2)} ms over stdio, ${result.outsideStagesP50Ms.inProcess.toFixed(2)} ms in process`,
  );
  console.log(
    `In process, each stage's p50 (ms): ${Object.entries(result.inProcessStageP50Ms)
      .map(([stage, ms]) => `${stage} ${ms.toFixed(2)}`)
      .join(', ')}`,
  );
  const cpu = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(1));
  console.log(
    `CPU a call (ms): over stdio ${cpu(cpuPerCall.mcpServer)} in memcore mcp + ${cpu(cpuPerCall.mcpClient)} in the agent; in process ${cpu(cpuPerCall.inProcess)}; the model alone ${cpu(cpuPerCall.model)}. Load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(resultsDir, { recursive: true });
  await writeFile(
    join(resultsDir, `${values.out ?? (entries ? `first-call-${entries}` : 'first-call')}.json`),
    JSON.stringify({ date: new Date().toISOString(), ...result }, null, 2) + '\n',
  );
} finally {
  if (keptDir === undefined) await rm(dir, { recursive: true, force: true });
}
