/**
 * The MCP limits as documented, on real processes: `memcore mcp` driven over its stdin and stdout
 * line by line (as a client writes them, so that a request the SDK client would never send can be
 * sent), and `memcore serve` over HTTP. One request is at most MAX_MCP_REQUEST_BYTES (64 MiB) on
 * both; a larger one, a request with `params: null` or a `__proto__` argument is answered, and the
 * session keeps serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { MAX_MCP_REQUEST_BYTES } from '../src/server/requestGuard.js';
import { EXAMPLE_FILE, tempDir } from './helpers.js';
import { cliWithFakeEmbedder, nodeArgs } from './cliProcess.js';

const { memcore, serve, env } = cliWithFakeEmbedder();
const spawned: ChildProcess[] = [];
afterEach(() => {
  for (const c of spawned.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

type Reply = {
  id: number | string | null;
  result?: { isError?: boolean; content: { text: string }[] };
  error?: { code: number; message: string };
};

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits-test', version: '1' } },
};
const call = (id: number, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** A request of exactly `bytes` bytes: JSON white space fills it out (the id stays at the end, where the SDK client writes it). */
function paddedTo(bytes: number, id: number): string {
  const body = JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'memory_status', arguments: {} } });
  const end = `,"id":${id}}`;
  return body.slice(0, -1) + ' '.repeat(bytes - body.length + 1 - end.length) + end;
}

/** A diff within context_for_diff's schema that is ~11.5 MiB on the wire (control characters are escaped as \u0001). */
function bigDiff(): string {
  return `diff --git a/src/orders.ts b/src/orders.ts\n--- a/src/orders.ts\n+++ b/src/orders.ts\n@@ -1,1 +1,2 @@\n export const a = 1;\n+// ${'\u0001'.repeat(2_000_000)}\n`;
}

async function exampleStore(): Promise<string> {
  const db = join(await tempDir(), 'store');
  expect((await memcore(['ingest', EXAMPLE_FILE, '--db', db])).code).toBe(EXIT.ok);
  return db;
}

describe('memcore mcp over stdio', () => {
  it('answers every request up to 64 MiB, refuses one byte more with an error, answers bad params, and exits when stdin closes', async () => {
    const db = await exampleStore();
    const child = spawn(process.execPath, nodeArgs(['mcp', '--db', db]), { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    spawned.push(child);
    const replies = new Map<number | string | null, Reply>();
    const waiters: (() => void)[] = [];
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const reply = JSON.parse(out.slice(0, nl)) as Reply;
        out = out.slice(nl + 1);
        replies.set(reply.id, reply);
        for (const w of waiters.splice(0)) w();
      }
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const send = (line: string) => new Promise<void>((r) => (child.stdin!.write(line + '\n') ? r() : child.stdin!.once('drain', r)));
    const reply = async (id: number): Promise<Reply> => {
      while (!replies.has(id)) await new Promise<void>((r) => waiters.push(r));
      return replies.get(id)!;
    };

    await send(JSON.stringify(INITIALIZE));
    expect((await reply(1)).result).toBeDefined();
    await send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));

    await send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: null }));
    expect((await reply(2)).error).toMatchObject({ code: -32602, message: expect.stringMatching(/params must be an object, not null/) });

    for (const [id, name, args, field] of [
      [3, 'remember', JSON.parse('{"title":"t","content":"c","__proto__":{"core":"x"}}'), '__proto__'],
      [4, 'get_entries', JSON.parse('{"ids":["a"],"__proto__":1}'), '__proto__'],
      [5, 'remember', JSON.parse('{"title":"t","content":"c","code":[{"file":"a.ts","__proto__":{}}]}'), 'code.0.__proto__'],
    ] as const) {
      // JSON.stringify writes an own __proto__ key as any other
      await send(JSON.stringify(call(id, name, args)));
      const r = await reply(id);
      expect(r.result?.isError, name).toBe(true);
      expect(r.result?.content[0]!.text, name).toBe(`INVALID_INPUT: ${name}: ${field}: is not a known field`);
    }

    const diff = JSON.stringify(call(6, 'context_for_diff', { diff: bigDiff() }));
    expect(Buffer.byteLength(diff)).toBeGreaterThan(11 * 2 ** 20);
    await send(diff);
    expect((await reply(6)).result, JSON.stringify((await reply(6)).error)).toBeDefined();

    await send(paddedTo(MAX_MCP_REQUEST_BYTES, 7));
    expect((await reply(7)).result?.isError).toBeFalsy();
    await send(paddedTo(MAX_MCP_REQUEST_BYTES + 1, 8));
    expect((await reply(8)).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining(`${MAX_MCP_REQUEST_BYTES + 1} bytes, over`),
    });
    await send('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"memory_status","arguments":{}}}');
    expect((await reply(9)).result?.content[0]!.text).toMatch(/entries/);
    expect((await reply(9)).result?.isError).toBeFalsy();

    child.stdin!.end();
    expect(await exited).toBe(0);
  }, 300_000);
});

describe('memcore serve over HTTP', () => {
  it('takes a request of 64 MiB, answers one byte more with 413 and a JSON-RPC error, and params: null with invalid-params', async () => {
    const db = await exampleStore();
    const { ready } = await serve(db, ['--port', '0']);
    const token = (await readFile(ready.tokenFile!, 'utf8')).trim();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    };
    const post = (body: string) => fetch(ready.url!, { method: 'POST', headers, body });
    const init = await post(JSON.stringify(INITIALIZE));
    expect(init.status).toBe(200);
    headers['mcp-session-id'] = init.headers.get('mcp-session-id')!;
    expect((await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status).toBe(202);

    const five = await post(JSON.stringify(call(2, 'context_for_diff', { diff: bigDiff().slice(0, 900_000) })));
    expect(five.status).toBe(200);
    expect(((await five.json()) as Reply).result).toBeDefined();

    const atLimit = await post(paddedTo(MAX_MCP_REQUEST_BYTES, 3));
    expect(atLimit.status).toBe(200);
    expect(((await atLimit.json()) as Reply).result?.isError).toBeFalsy();

    const over = await post(paddedTo(MAX_MCP_REQUEST_BYTES + 1, 4));
    expect(over.status).toBe(413);
    expect((await over.json()) as Reply).toMatchObject({ id: 4, error: { code: -32600 } });

    const nullParams = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: null }));
    expect((await nullParams.json()) as Reply).toMatchObject({ id: 5, error: { code: -32602 } });

    const proto = await post(JSON.stringify(call(6, 'remember', JSON.parse('{"title":"t","content":"c","__proto__":{}}'))));
    expect(((await proto.json()) as Reply).result?.content[0]!.text).toBe('INVALID_INPUT: remember: __proto__: is not a known field');

    const after = await post(JSON.stringify(call(7, 'memory_status', {})));
    expect(((await after.json()) as Reply).result?.isError).toBeFalsy();
  }, 300_000);
});
