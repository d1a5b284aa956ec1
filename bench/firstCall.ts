/**
 * npm run bench:first-call [-- --tasks 40 --out first-call]
 * What an agent waits for on the example memory, end to end: task text in, `<memory>` block out,
 * through `memcore mcp` (the built CLI, dist/, built first) over stdio, with the local embedding
 * model, every task new to the server (no context cache, no query-vector cache hit). Beside it,
 * the same tasks in process (buildTaskContext, the model included), and the model embedding a
 * task alone, so the README can say what the engine's own figures leave out. Prints a table and
 * writes bench/results/<out>.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { localEmbedder, openMemory } from '../src/index.js';
import { benchOptions, stats } from './synthetic.js';

const USAGE = `usage: npm run bench:first-call -- [--tasks 40] [--out first-call]

  --tasks <n>     distinct tasks timed on each path, 5 to 200 (default 40)
  --out <name>    bench/results/<name>.json (default first-call)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;

const values = benchOptions(USAGE, { tasks: { type: 'string', default: '40' }, out: { type: 'string' } }, (v) => {
  const n = Number(v.tasks);
  return Number.isInteger(n) && n >= 5 && n <= 200;
});
const taskCount = Number(values.tasks);
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
const tasks = Array.from({ length: taskCount + 2 }, (_, i) => `${VERBS[i % VERBS.length]} ${THINGS[i % THINGS.length]} (${i})`);
const [warmStdio, warmInProcess, ...timedTasks] = tasks;

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
const dir = await mkdtemp(join(tmpdir(), 'memcore-first-call-'));
try {
  progress('ingesting the example memory with the local model …');
  const setup = await openMemory({ path: dir, env: {} });
  await setup.ingest(example);
  await setup.close();

  // The agent's side: the MCP SDK client spawning `memcore mcp`, as an agent config does.
  const client = new Client({ name: 'bench-first-call', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [builtCli, 'mcp', '--db', dir], env: {}, stderr: 'ignore' }),
  );
  await client.callTool({ name: 'build_task_context', arguments: { task: warmStdio! } }); // the server has opened the folder and loaded the model
  const overStdio = await timed(async (task) => {
    const r = await client.callTool({ name: 'build_task_context', arguments: { task } });
    const text = (r.content as { text?: string }[]).map((c) => c.text ?? '').join('');
    if (r.isError || !text.includes('<memory')) throw new Error(`no <memory> block for "${task}": ${text.slice(0, 200)}`);
  }, 'MCP stdio');
  await client.close();

  // The same tasks in process, on a store with no context cache, and the model alone.
  const engine = await openMemory({ path: dir, env: {}, cache: { ttlMs: 0 } });
  await engine.buildTaskContext(warmInProcess!);
  const inProcess = await timed((task) => engine.buildTaskContext(`${task} again`), 'in process');
  await engine.close();
  const model = localEmbedder();
  await model.embed([warmInProcess!]);
  const embedOnly = await timed((task) => model.embed([`${task} once more`]), 'the model alone');

  const result = {
    memory: 'examples/memory/orders-api.yaml',
    tasks: timedTasks.length,
    mcpStdioMs: stats(overStdio),
    inProcessMs: stats(inProcess),
    embedTaskMs: stats(embedOnly),
  };
  progress('');
  const row = (name: string, s: { p50: number; p95: number }) =>
    `| ${name.padEnd(58)} | ${s.p50.toFixed(1).padStart(6)} | ${s.p95.toFixed(1).padStart(6)} |`;
  console.log(`\nthe example memory, local model, ${timedTasks.length} new tasks a path (ms)\n`);
  console.log(
    [
      '| path | p50 | p95 |',
      '|---|---|---|',
      row('build_task_context over MCP stdio (task in, <memory> out)', result.mcpStdioMs),
      row('buildTaskContext in process, no cache (model included)', result.inProcessMs),
      row('the local model embedding the task alone', result.embedTaskMs),
    ].join('\n'),
  );
  const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(resultsDir, { recursive: true });
  await writeFile(
    join(resultsDir, `${values.out ?? 'first-call'}.json`),
    JSON.stringify({ date: new Date().toISOString(), ...result }, null, 2) + '\n',
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
