/**
 * The MCP server as agents run it: `memcore mcp` and `memcore serve` spawned as real processes and
 * driven by the MCP SDK's own Client, over stdio and streamable HTTP, with real stores behind them.
 * The embedder is a real HTTP server speaking the OpenAI API (test/openaiServer.ts), so that a
 * child process starts in a second rather than loading the local model.
 */
import { cp, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { startFakeOpenAI, type FakeOpenAI } from './openaiServer.js';
import { EXAMPLE_FILE, tempDir, tempDirForFile } from './helpers.js';
import { cliProcesses, fakeEmbedderEnv, nodeArgs } from './cliProcess.js';

const { memcore, serve, killAll } = cliProcesses(() => env);
const node = nodeArgs;

let embeddings: FakeOpenAI;
let env: Record<string, string>;
beforeAll(async () => {
  embeddings = await startFakeOpenAI(8);
  env = fakeEmbedderEnv(embeddings.baseURL);
});
afterAll(async () => embeddings.close());

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  killAll();
});

/** An MCP client on a `memcore mcp` process of its own (what an agent config starts). */
async function stdioClient(db: string): Promise<Client> {
  const client = new Client({ name: 'memcore-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: node(['mcp', '--db', db]), env, stderr: 'pipe' }));
  clients.push(client);
  return client;
}

type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}
const text = (r: ToolResult) => r.content.map((c) => c.text).join('\n');

/** The example memory, ingested by one `memcore ingest` process for the file; each test gets a copy of that folder. */
let exampleIngested: Promise<string> | undefined;
async function exampleStore(): Promise<string> {
  exampleIngested ??= (async () => {
    const db = join(await tempDirForFile(), 'store');
    expect((await memcore(['ingest', EXAMPLE_FILE, '--db', db])).code).toBe(EXIT.ok);
    return db;
  })();
  const db = join(await tempDir(), 'store');
  await cp(await exampleIngested, db, { recursive: true });
  return db;
}

describe('memcore mcp (stdio)', () => {
  it('find_code answers with the imported code for a task, each location with why', async () => {
    const db = await exampleStore();
    const repo = join(await tempDir(), 'repo');
    await mkdir(join(repo, 'src'), { recursive: true });
    await writeFile(
      join(repo, 'src', 'tokens.ts'),
      '/** Rotates refresh tokens. */\nexport function rotateRefreshToken(t: string) {\n  return t;\n}\n',
    );
    await writeFile(join(repo, 'src', 'orders.py'), 'def cancel_order(order_id):\n    return order_id\n');
    expect((await memcore(['import-code', repo, '--codebase', 'api', '--db', db])).code).toBe(EXIT.ok);
    const client = await stdioClient(db);
    const found = await call(client, 'find_code', { task: 'cancel an order', limit: 1 });
    expect(found.isError).toBeFalsy();
    const hits = (found.structuredContent as { hits: { code: { filePath: string }; why: string[] }[] }).hits;
    expect(hits.map((h) => h.code.filePath)).toEqual(['src/orders.py']);
    expect(hits[0]!.why).toContain('code-search');
    expect(text(await call(client, 'find_code', { task: 'rotate the refresh token' }))).toMatch(
      /^1\. src\/tokens\.ts:2-4 \(rotateRefreshToken\) \(api\) ← .*code-search/,
    );
    expect((await call(client, 'find_code', { task: 'cancel an order', codebases: ['web'] })).structuredContent).toEqual({ hits: [] });
  });

  it('lists every tool with a JSON Schema and honest annotations, and serves each one', async () => {
    const db = await exampleStore();
    const client = await stdioClient(db);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual([
      'build_task_context',
      'context_for_diff',
      'find_code',
      'find_code_references',
      'find_golden_paths',
      'forget',
      'get_entries',
      'get_golden_path',
      'link',
      'memory_status',
      'rate_memory',
      'related_to_code',
      'remember',
      'search_memory',
    ]);
    for (const t of tools) expect(t.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(byName.get('search_memory')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('remember')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(byName.get('forget')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('build_task_context')!.description).toMatch(/start of every task/);

    const context = await call(client, 'build_task_context', { task: 'rotate refresh tokens on every use', max_entries: 4 });
    expect(context.isError).toBeFalsy();
    expect(text(context)).toMatch(/^<memory bundle="b_[0-9a-f]{16}">/);
    expect(text(context)).toContain('Rotate refresh tokens on every use');
    const bundle = context.structuredContent as { entries: { entry: { id: string } }[]; codeRefs: unknown[] };
    expect(bundle.entries.length).toBeLessThanOrEqual(4);
    expect(bundle.entries.map((e) => e.entry.id)).toContain('auth-refresh-rotation');

    const rated = await call(client, 'rate_memory', {
      entry_id: 'auth-refresh-rotation',
      useful: false,
      bundle_id: (context.structuredContent as { bundleId: string }).bundleId,
    });
    expect(rated.structuredContent).toMatchObject({ entryId: 'auth-refresh-rotation', recorded: true, signals: 1 });
    expect((rated.structuredContent as { effectiveness: number }).effectiveness).toBeCloseTo(0.35, 6);
    expect((await call(client, 'rate_memory', { entry_id: 'no-such-entry', useful: true })).isError).toBe(true);

    const diff = [
      'diff --git a/src/auth/jwks.ts b/src/auth/jwks.ts',
      '--- a/src/auth/jwks.ts',
      '+++ b/src/auth/jwks.ts',
      '@@ -10,0 +11 @@',
      '+  // cache the key set for a minute',
    ].join('\n');
    const forDiff = await call(client, 'context_for_diff', { diff, max_entries: 4 });
    expect(forDiff.isError).toBeFalsy();
    expect((forDiff.structuredContent as { entries: { entry: { id: string } }[] }).entries[0]!.entry.id).toBe('auth-es256');
    expect((forDiff.structuredContent as { changes: unknown[] }).changes).toEqual([
      { path: 'src/auth/jwks.ts', oldPath: null, change: 'modified', symbols: [] },
    ]);
    expect((await call(client, 'context_for_diff', { diff, range: 'HEAD' })).isError).toBe(true);

    for (const mode of ['hybrid', 'keyword', 'semantic', 'matryoshka']) {
      const found = await call(client, 'search_memory', { query: 'refresh token rotation', mode, limit: 3, cores: ['auth-jwt'] });
      const hits = (found.structuredContent as { hits: { score: number; entry: { coreId: string } }[] }).hits;
      expect(hits.length, mode).toBeGreaterThan(0);
      expect(hits.every((h) => h.entry.coreId === 'auth-jwt')).toBe(true);
      // Ordered by the score reported.
      expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
    }

    const entries = await call(client, 'get_entries', { ids: ['auth-refresh-rotation', 'no-such-entry'] });
    expect(entries.structuredContent).toMatchObject({ entries: [{ id: 'auth-refresh-rotation' }], missing: ['no-such-entry'] });

    const refs = await call(client, 'find_code_references', { symbol: 'rotateRefreshToken' });
    expect((refs.structuredContent as { hits: { entry: { id: string } }[] }).hits.map((h) => h.entry.id)).toContain(
      'auth-refresh-rotation',
    );
    const related = await call(client, 'related_to_code', { file: 'tokenService', query: 'rotation' });
    expect((related.structuredContent as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
    const path = await call(client, 'get_golden_path', { id: 'gp-refresh-flow' });
    expect(path.structuredContent).toMatchObject({ id: 'gp-refresh-flow' });
    expect((path.structuredContent as { steps: unknown[] }).steps.length).toBeGreaterThan(1);
    const paths = await call(client, 'find_golden_paths', { concepts: ['refresh token rotation'] });
    expect((paths.structuredContent as { paths: { id: string }[] }).paths.map((p) => p.id)).toContain('gp-refresh-flow');

    const remembered = await call(client, 'remember', {
      title: 'Refresh tests need a Redis container',
      content: 'The rotateRefreshToken tests start Redis in a container; run them with docker up.',
      core: 'auth-jwt',
      type: 'lesson',
      depends_on: ['auth-revocation-store'],
      code: [{ file: 'test/auth/refresh.test.ts', symbol: 'refreshSuite' }],
    });
    expect(remembered.isError).toBeFalsy();
    const result = remembered.structuredContent as { id: string; created: boolean; links: { type: string; from: string; to: string }[] };
    expect(result.created).toBe(true);
    expect(result.links).toEqual(
      expect.arrayContaining([
        { type: 'DEPENDS_ON', from: result.id, to: 'auth-revocation-store' },
        { type: 'REFERENCES_CODE', from: result.id, to: 'default:test/auth/refresh.test.ts#refreshSuite' },
        // Auto-linked: the content names the symbol of a stored code location.
        { type: 'REFERENCES_CODE', from: result.id, to: 'code-token-service' },
      ]),
    );
    const linked = await call(client, 'link', { from: result.id, to: 'auth-refresh-rotation', type: 'RELATED', weight: 0.7 });
    expect(linked.isError).toBeFalsy();
    const entry = JSON.parse(
      ((await client.readResource({ uri: `memcore://entry/${result.id}` })).contents[0] as { text: string }).text,
    ) as { links: { to: string }[] };
    expect(entry.links.map((l) => l.to)).toContain('auth-refresh-rotation');

    const forgotten = await call(client, 'forget', { id: result.id, reason: 'The tests use an in-memory fake since v2.' });
    const retraction = (forgotten.structuredContent as { retractionId: string }).retractionId;
    const after = await call(client, 'search_memory', { query: 'Redis container refresh tests', mode: 'keyword' });
    const afterIds = (after.structuredContent as { hits: { entry: { id: string } }[] }).hits.map((h) => h.entry.id);
    expect(afterIds).not.toContain(result.id);
    // The retraction is a record of the forget, not knowledge: never a search hit or a bundle entry.
    expect(afterIds).not.toContain(retraction);
    const afterBundle = await call(client, 'build_task_context', { task: 'Redis container refresh tests' });
    expect(text(afterBundle)).not.toContain('Retired:');
    // History stays: the retired entry is still readable by id.
    expect((await call(client, 'get_entries', { ids: [result.id] })).structuredContent).toMatchObject({ missing: [] });

    const status = await call(client, 'memory_status', {});
    expect(status.structuredContent).toMatchObject({ entries: 46, embedder: { id: 'openai:fake' }, server: { path: db } });
  });

  it('answers bad input with a tool error that names the field, and keeps serving', async () => {
    const db = await exampleStore();
    const client = await stdioClient(db);
    const bad: [tool: string, args: Record<string, unknown>, message: RegExp][] = [
      ['build_task_context', {}, /task: is required/],
      ['build_task_context', { task: 'x', max_entries: 'many' }, /max_entries: must be integer/],
      ['build_task_context', { task: 'x', maxEntries: 3 }, /maxEntries: is not a known field/],
      ['build_task_context', { task: 'x', as_of: 'last tuesday' }, /as_of: must match format/],
      ['search_memory', { query: 42 }, /query: must be string/],
      ['search_memory', { query: 'x', mode: 'fuzzy' }, /mode: must be one of "hybrid"/],
      ['search_memory', { query: 'x', limit: 0 }, /limit: must be >= 1/],
      ['get_entries', { ids: 'auth-refresh-rotation' }, /ids: must be array/],
      ['get_entries', { ids: ['bad\u0000id'] }, /holds U\+0000/],
      ['remember', { title: 'no content' }, /content: is required/],
      ['remember', { title: 't', content: 'c', related: ['ghost-entry'] }, /unknown entry id "ghost-entry"/],
      ['remember', { title: 't', content: 'c', importance: 11 }, /importance: must be <= 10/],
      ['link', { from: 'auth-refresh-rotation', to: 'ghost-entry', type: 'RELATED' }, /unknown entry id "ghost-entry"/],
      ['link', { from: 'auth-refresh-rotation', to: 'auth-access-ttl', type: 'LIKES' }, /type: must be one of/],
      [
        'link',
        { from: 'auth-refresh-rotation', to: 'auth-access-ttl', type: 'DEPENDS_ON', weight: 0.5 },
        /only a RELATED link has a weight/,
      ],
      ['forget', { id: 'ghost-entry', reason: 'gone' }, /NOT_FOUND: no entry with id "ghost-entry"/],
      ['forget', { id: 'auth-refresh-rotation' }, /a reason is required/],
      ['find_code_references', {}, /give at least one field/],
      ['find_code', {}, /task: is required/],
      ['find_code', { task: 'x', limit: 0 }, /limit: must be >= 1/],
      ['related_to_code', { file: 'x' }, /query: is required/],
      ['get_golden_path', { id: 'ghost-path' }, /NOT_FOUND: no golden path/],
      ['find_golden_paths', { concepts: [] }, /concepts: must NOT have fewer than 1 items/],
      ['memory_status', { verbose: true }, /verbose: is not a known field/],
    ];
    for (const [tool, args, message] of bad) {
      const r = await call(client, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(text(r), tool).toMatch(message);
    }
    // Hostile strings are data, not code: searched, stored and read back exactly.
    const hostile = "x' OR '1'='1 \\\\ MATCH (n) DETACH DELETE n; 日本語 🔑";
    for (const mode of ['hybrid', 'keyword']) expect((await call(client, 'search_memory', { query: hostile, mode })).isError).toBeFalsy();
    const stored = await call(client, 'remember', { title: hostile, content: hostile, core: "o'brien\\core" });
    const id = (stored.structuredContent as { id: string }).id;
    expect((await call(client, 'get_entries', { ids: [id] })).structuredContent).toMatchObject({
      entries: [{ title: hostile, content: hostile, coreId: "o'brien\\core" }],
    });
    // The store is whole and the server still answers.
    expect((await call(client, 'memory_status', {})).structuredContent).toMatchObject({ entries: 45 });
    await expect(client.readResource({ uri: 'memcore://entry/ghost-entry' })).rejects.toThrow(/no such entry/);
  });

  it('loads what queries hold when it starts, before any call: entries read from memory from the first answer', async () => {
    const db = await exampleStore();
    await stdioClient(db);
    // No tool is called: the server warms itself. A CLI call while it serves runs in it, so its stats are the server's.
    type Stats = { resident: Record<string, { loadedFrom: string }>; search: { entries: string } };
    let stats: Stats | undefined;
    // a timer, not a speed: polled for up to 20 s
    for (let i = 0; i < 100; i++) {
      const run = await memcore(['stats', '--json', '--db', db]);
      expect(run.code, run.stderr).toBe(EXIT.ok);
      stats = JSON.parse(run.stdout) as Stats;
      if (Object.keys(stats.resident).length === 5) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(Object.keys(stats!.resident).sort()).toEqual(['adjacency', 'code-links', 'columns', 'keywords', 'names']);
    expect(stats!.search.entries).toBe('memory');
  });

  it('serves core memory and entries as resources, and start_task as a prompt', async () => {
    const db = await exampleStore();
    const client = await stdioClient(db);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('memcore://core-memory/auth-jwt');
    const core = (await client.readResource({ uri: 'memcore://core-memory/auth-jwt' })).contents[0] as { text: string };
    expect(core.text).toMatch(/^<memory>/);
    // In effect only: the decision that "Rotate refresh tokens on every use" superseded is not shown.
    expect(core.text).not.toContain('Refresh tokens are long-lived and reusable');
    // Most important first: importance 9 before the rest.
    expect(core.text.indexOf('Rotate refresh tokens on every use')).toBeLessThan(
      core.text.indexOf('Access tokens expire after 15 minutes'),
    );
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['memcore://core-memory/{core}', 'memcore://entry/{id}']);
    const prompt = await client.getPrompt({ name: 'start_task', arguments: { task: 'rotate refresh tokens' } });
    const message = prompt.messages[0]!.content as { text: string };
    expect(message.text).toMatch(/<memory>[\s\S]*Task: rotate refresh tokens$/);
  });
});

describe('one owner per folder', () => {
  it('lets two agents share one memory: a write by one is in the next answer to the other', async () => {
    const db = await exampleStore();
    const owner = await stdioClient(db);
    const other = await stdioClient(db);
    const ownerPid = ((await call(owner, 'memory_status', {})).structuredContent as { server: { pid: number } }).server.pid;
    // The second process relays to the first rather than failing on Kuzu's lock.
    expect(((await call(other, 'memory_status', {})).structuredContent as { server: { pid: number } }).server.pid).toBe(ownerPid);

    const task = 'which package manager installs the monorepo';
    const before = await call(other, 'build_task_context', { task });
    expect(text(before)).not.toContain('pnpm');
    await call(owner, 'remember', {
      title: 'Install the monorepo with pnpm',
      content: 'The package manager is pnpm; npm install breaks the workspace links.',
      core: 'tooling',
      type: 'convention',
    });
    const after = await call(other, 'build_task_context', { task });
    expect((after.structuredContent as { cacheHit: boolean }).cacheHit).toBe(false);
    expect(text(after)).toContain('Install the monorepo with pnpm');

    // A CLI call while the folder is served runs through the server, with the usual output and exit codes.
    const listed = await memcore(['list', '--core', 'tooling', '--json', '--db', db]);
    expect(listed.code).toBe(EXIT.ok);
    expect((JSON.parse(listed.stdout) as { title: string }[]).map((e) => e.title)).toEqual(['Install the monorepo with pnpm']);
    const missing = await memcore(['show', 'no-such-entry', '--db', db]);
    expect(missing.code).toBe(EXIT.notFound);
    expect(missing.stderr).toMatch(/no entry with id "no-such-entry"/);
    const search = await memcore(['search', 'pnpm workspace', '--json', '--db', db]);
    expect(JSON.parse(search.stdout)[0]).toMatchObject({ entry: { title: 'Install the monorepo with pnpm' }, score: expect.any(Number) });
    // A backup through the server: writes wait, the server goes on; a restore over its folder is refused.
    const backup = await memcore(['backup', join(db, '..', 'bk'), '--db', db]);
    expect(backup.code).toBe(EXIT.ok);
    expect(backup.stdout).toMatch(/^backed up 45 entries/);
    const restore = await memcore(['restore', join(db, '..', 'bk'), '--force', '--db', db]);
    expect(restore.code).toBe(EXIT.store);
    expect(restore.stderr).toContain(`served by pid ${ownerPid}; stop that server before restoring`);
    // doctor while served: the server checks its open stores and what it holds in memory.
    const doctor = await memcore(['doctor', '--db', db]);
    expect(doctor.code, doctor.stdout).toBe(EXIT.ok);
    expect(doctor.stdout).toMatch(/ok +resident: what is held in memory matches the table \(45 entries\)/);
    expect((await memcore(['doctor', '--repair', '--db', db])).stderr).toMatch(/stop it to repair the folder/);
    // A second server on the same folder is refused, naming the one that runs.
    const second = await memcore(['serve', '--db', db, '--no-http']);
    expect(second.code).toBe(EXIT.store);
    expect(second.stderr).toContain(`already served by pid ${ownerPid}`);
  });

  it('survives kill -9 of the owner: the next client takes over and nothing committed is lost', async () => {
    const db = await exampleStore();
    const { child, ready } = await serve(db, ['--no-http']);
    const agent = await stdioClient(db);
    expect(((await call(agent, 'memory_status', {})).structuredContent as { server: { pid: number } }).server.pid).toBe(ready.pid);
    const kept = await call(agent, 'remember', {
      title: 'Feature flags live in LaunchDarkly',
      content: 'Flags are read at startup from LaunchDarkly.',
      core: 'ops',
    });
    const keptId = (kept.structuredContent as { id: string }).id;

    expect(ready.pid).toBe(child.pid);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    // The agent's own memcore mcp process takes the folder over and answers the same session.
    const found = await call(agent, 'search_memory', { query: 'LaunchDarkly feature flags', mode: 'keyword' });
    expect((found.structuredContent as { hits: { entry: { id: string } }[] }).hits.map((h) => h.entry.id)).toContain(keptId);
    const status = (await call(agent, 'memory_status', {})).structuredContent as { server: { pid: number }; entries: number };
    expect(status.server.pid).not.toBe(ready.pid);
    expect(status.entries).toBe(45);
    // And the CLI reaches the new owner.
    const cliStats = await memcore(['stats', '--json', '--db', db]);
    expect(cliStats.code).toBe(EXIT.ok);
    expect(JSON.parse(cliStats.stdout)).toMatchObject({ entries: 45 });
  });
});

describe('reembed through a running server', () => {
  it('moves the served folder to another model while the agent keeps asking', async () => {
    const db = await exampleStore();
    const wider = await startFakeOpenAI(16);
    try {
      await serve(db, ['--no-http']);
      const agent = await stdioClient(db);
      const asking = (async () => {
        for (let i = 0; i < 5; i++)
          expect((await call(agent, 'search_memory', { query: 'refresh token', mode: 'keyword' })).isError).toBeFalsy();
      })();
      const r = await memcore([
        'reembed',
        '--embedder',
        'openai:wide',
        '--dimensions',
        '16',
        '--base-url',
        wider.baseURL,
        '--json',
        '--db',
        db,
      ]);
      await asking;
      expect(r.code, r.stderr).toBe(EXIT.ok);
      expect(JSON.parse(r.stdout)).toMatchObject({ from: 'openai:fake', to: 'openai:wide', entries: 44 });
      const status = (await call(agent, 'memory_status', {})).structuredContent as {
        embedder: { id: string; dimensions: number };
        entries: number;
      };
      expect(status).toMatchObject({ embedder: { id: 'openai:wide', dimensions: 16 }, entries: 44 });
      const found = await call(agent, 'search_memory', { query: 'Rotate refresh tokens on every use', mode: 'semantic', limit: 3 });
      expect(found.isError).toBeFalsy();
      expect(wider.requests.length).toBeGreaterThan(0);
    } finally {
      await wider.close();
    }
  });
});

describe('memcore serve (streamable HTTP)', () => {
  it('refuses a request without the token and serves one with it', async () => {
    const db = await exampleStore();
    const { ready } = await serve(db, ['--port', '0']);
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const tokenFile = ready.tokenFile!;
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    const token = (await readFile(tokenFile, 'utf8')).trim();

    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(ready.url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(initialize),
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer not-the-token-at-all' })).status).toBe(401);

    const client = new Client({ name: 'http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(ready.url!), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    clients.push(client);
    const context = await call(client, 'build_task_context', { task: 'how long do access tokens live' });
    expect(text(context)).toContain('Access tokens expire after 15 minutes');
    // The CLI and HTTP clients share the one process.
    const cli = await memcore(['context', 'how long do access tokens live', '--format', 'prompt', '--db', db]);
    expect(cli.code).toBe(EXIT.ok);
    expect(cli.stdout).toContain('Access tokens expire after 15 minutes');
  });

  it('binds beyond the loopback only when asked to', async () => {
    const db = await exampleStore();
    const r = await memcore(['serve', '--db', db, '--host', '0.0.0.0', '--port', '0']);
    expect(r.code).toBe(EXIT.invalid);
    expect(r.stderr).toMatch(/--allow-remote/);
  });
});
