/**
 * The agent's side of bench/served.ts, in a process of its own as an agent is: connects over
 * streamable HTTP or through a `memcore mcp` stdio relay, calls build_task_context once per task,
 * and prints each call's milliseconds as JSON on stdout.
 *   node --import tsx bench/servedClient.ts <tasks.json> http <url> <token>
 *   node --import tsx bench/servedClient.ts <tasks.json> stdio <built cli> <db>
 */
import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [tasksFile, mode, a, b] = process.argv.slice(2);
const { tasks, args } = JSON.parse(await readFile(tasksFile!, 'utf8')) as { tasks: string[]; args: Record<string, unknown> };
const client = new Client({ name: 'bench', version: '1' });
await client.connect(
  mode === 'http'
    ? new StreamableHTTPClientTransport(new URL(a!), { requestInit: { headers: { authorization: `Bearer ${b}` } } })
    : new StdioClientTransport({ command: process.execPath, args: [a!, 'mcp', '--db', b!], env: {}, stderr: 'ignore' }),
);
await client.callTool({ name: 'build_task_context', arguments: { task: tasks[0]!, ...args } }); // the connection warms up
const ms: number[] = [];
for (const task of tasks) {
  const t = performance.now();
  const r = await client.callTool({ name: 'build_task_context', arguments: { task, ...args } });
  ms.push(performance.now() - t);
  if (r.isError) throw new Error(JSON.stringify(r.content));
}
await client.close();
process.stdout.write(JSON.stringify(ms));
