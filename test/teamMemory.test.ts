/**
 * Team memory in git (docs/team.md): entries as files in the repository, with real git — a bare
 * repository made in the test and two clones of it, A and B — and real stores. The MCP side spawns
 * `memcore mcp` and drives it with the SDK client; its embedder is a real HTTP server speaking the
 * OpenAI API (test/openaiServer.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { openMemory, type MemoryEngine } from '../src/index.js';
import { EXIT, main } from '../src/cli/main.js';
import { fileNameOf, parseEntryFile } from '../src/team/entryFile.js';
import { cliWithFakeEmbedder, inProcessFakeEmbedder, nodeArgs } from './cliProcess.js';
import { EXAMPLE_FILE, tempDir, wordHashEmbedder } from './helpers.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** A bare repository with a `memory/` folder and an ignored `.memcore/`, and `clones` clones of it. */
async function teamRepo(clones: string[]): Promise<{ bare: string; clone: Record<string, string> }> {
  const root = await tempDir('memcore-team-');
  const bare = join(root, 'origin.git');
  git(root, 'init', '--bare', '-b', 'main', bare);
  const seed = join(root, 'seed');
  git(root, 'clone', bare, seed);
  await writeFile(join(seed, '.gitignore'), '.memcore/\n');
  await mkdir(join(seed, 'memory', 'payments'), { recursive: true });
  await writeFile(join(seed, 'memory', 'README.md'), 'Team memory: one file per entry.\n');
  await writeFile(
    join(seed, 'memory', 'payments', 'retry-webhooks.md'),
    '---\nmemcore: 1\nid: retry-webhooks\ntitle: Retry webhooks with backoff\ntype: lesson\ntags: [webhooks]\n---\n\nPayment webhooks are retried with exponential backoff up to 24 hours.\n',
  );
  await writeFile(
    join(seed, 'memory', 'payments', 'idempotency-keys.md'),
    '---\nmemcore: 1\nid: idempotency-keys\ntitle: Idempotency keys on charges\ntype: convention\n---\n\nEvery charge request carries an idempotency key derived from the order id.\n',
  );
  git(seed, 'add', '-A');
  git(seed, 'commit', '-m', 'memory: first entries');
  git(seed, 'push', 'origin', 'main');
  const clone: Record<string, string> = {};
  for (const name of clones) {
    clone[name] = join(root, name);
    git(root, 'clone', bare, clone[name]);
  }
  return { bare, clone };
}

const engines: MemoryEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});
async function open(repo: string): Promise<MemoryEngine> {
  const engine = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {}, cache: { ttlMs: 0 } });
  engines.push(engine);
  return engine;
}
const ids = (bundle: { entries: { entry: { id: string } }[] }) => bundle.entries.map((e) => e.entry.id);

describe('entry files', () => {
  it('round-trips ids that are not file names, and names the line of a bad field', () => {
    for (const id of ['a/b:c', '.hidden', 'naïve 100%', 'x'.repeat(256), 'ü'.repeat(200)]) {
      const name = fileNameOf(id);
      expect(name).not.toMatch(/[/\\:]|^\./);
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
      const text = `---\nmemcore: 1\nid: ${JSON.stringify(id)}\ntitle: T\n---\n\nBody\n`;
      expect(parseEntryFile('f.md', text, { kind: 'entry', core: 'c', name }).id).toBe(id);
    }
    expect(fileNameOf('a')).not.toBe(fileNameOf('A%'));
    const bad = '---\nmemcore: 1\nid: x\ntitle: T\nimportance: 11\n---\n\nBody\n';
    expect(() => parseEntryFile('m/c/x.md', bad, { kind: 'entry', core: 'c', name: 'x' })).toThrow(/^m\/c\/x\.md:5: .*importance/);
    const wrongName = '---\nmemcore: 1\nid: y\ntitle: T\n---\n\nBody\n';
    expect(() => parseEntryFile('m/c/x.md', wrongName, { kind: 'entry', core: 'c', name: 'x' })).toThrow(/:3: .*named "y\.md"/);
  });
});

describe('team memory with a library engine', () => {
  it('indexes the folder on open, writes remember and forget as files, and follows hand edits', async () => {
    const { clone } = await teamRepo(['a']);
    const a = clone.a!;
    const memory = await open(a);
    expect((await memory.memoryFolder())?.dir).toBe(join(a, 'memory'));
    expect(ids(await memory.buildTaskContext('how are payment webhooks retried'))).toContain('retry-webhooks');

    const r = await memory.remember({
      title: 'Charge in cents',
      content: 'Amounts are integers in cents.',
      core: 'payments',
      type: 'lesson',
      related: ['idempotency-keys'],
    });
    const file = join(a, 'memory', 'payments', `${r.id}.md`);
    expect(await readFile(file, 'utf8')).toMatch(
      /^---\nmemcore: 1\nid: e_[0-9a-f]{16}\ntitle: Charge in cents\ntype: lesson\n[\s\S]*links:\n {2}- type: RELATED\n {4}to: idempotency-keys\n---\n\nAmounts are integers in cents\.\n$/,
    );
    expect(git(a, 'status', '--porcelain')).toContain(`?? memory/payments/${r.id}.md`);
    expect(r.links).toContainEqual(expect.objectContaining({ type: 'RELATED', to: 'idempotency-keys' }));

    // link goes to the file too
    await memory.link([{ type: 'DEPENDS_ON', from: r.id, to: 'retry-webhooks' }]);
    expect(await readFile(file, 'utf8')).toMatch(/- type: DEPENDS_ON\n {4}to: retry-webhooks/);

    // forget supersedes with a retraction file; delete removes the file
    const f = await memory.forget('retry-webhooks', { reason: "We moved to the provider's own retries." });
    const retraction = await readFile(join(a, 'memory', 'payments', `${f.retractionId}.md`), 'utf8');
    expect(retraction).toMatch(/type: retraction[\s\S]*- type: SUPERSEDES\n {4}to: retry-webhooks/);
    await memory.forget(r.id, { mode: 'delete' });
    expect(existsSync(file)).toBe(false);
    expect(await memory.getEntries([r.id])).toEqual([]);

    // A hand edit in place (no directory change): the file watch notices it.
    const path = join(a, 'memory', 'payments', 'idempotency-keys.md');
    await writeFile(path, (await readFile(path, 'utf8')).replace('order id', 'cart token'));
    await expect.poll(async () => (await memory.getEntries(['idempotency-keys']))[0]?.content, { timeout: 5000 }).toMatch(/cart token/);
  });

  it('keeps secrets out of every tracked file and out of git status (scenario 5)', async () => {
    const { clone } = await teamRepo(['a']);
    const a = clone.a!;
    const memory = await open(a);
    const secret = 'the staging key is sk_live_TOPSECRET_42';
    const r = await memory.remember({ title: 'Staging key', content: secret, core: 'payments', sensitivity: 'secret' });
    expect(git(a, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(git(a, 'diff')).not.toContain('TOPSECRET');
    expect(() => git(a, 'grep', '-q', 'TOPSECRET')).toThrow();
    expect(existsSync(join(a, 'memory.local', 'payments', `${r.id}.md`))).toBe(true);
    expect(await readdir(join(a, 'memory', 'payments'))).not.toContain(`${r.id}.md`);
    expect((await memory.getEntries([r.id], { sensitivity: ['secret'] }))[0]?.content).toBe(secret);
    // A secret written into the tracked folder by hand is refused, and named.
    await writeFile(
      join(a, 'memory', 'payments', 'leak.md'),
      `---\nmemcore: 1\nid: leak\ntitle: Leak\nsensitivity: secret\n---\n\n${secret}\n`,
    );
    const status = await memory.memoryFolder();
    expect(status!.problems).toEqual([
      expect.objectContaining({ file: 'memory/payments/leak.md', message: expect.stringMatching(/secret entry in the tracked folder/) }),
    ]);
    expect(await memory.getEntries(['leak'], { sensitivity: ['secret'] })).toEqual([]);
  });

  it('re-embeds nothing when switching branches back and forth (scenario 6)', async () => {
    const { clone } = await teamRepo(['a']);
    const a = clone.a!;
    git(a, 'checkout', '-b', 'feature');
    const path = join(a, 'memory', 'payments', 'retry-webhooks.md');
    await writeFile(path, (await readFile(path, 'utf8')).replace('24 hours', '72 hours, then alert on-call'));
    await mkdir(join(a, 'memory', 'search'), { recursive: true });
    await writeFile(
      join(a, 'memory', 'search', 'bm25.md'),
      '---\nmemcore: 1\nid: bm25\ntitle: Keyword ranking\n---\n\nBM25 with k1 1.2.\n',
    );
    git(a, 'add', '-A');
    git(a, 'commit', '-m', 'memory: feature');
    git(a, 'checkout', 'main');
    const memory = await open(a);
    const sync = async () => (await memory.memoryFolder())!.lastSync!;
    expect((await sync()).files.total).toBe(2);

    git(a, 'checkout', 'feature');
    const first = await sync();
    expect(first.files.total).toBe(3);
    expect(first.embedded).toBe(2);
    expect((await memory.getEntries(['retry-webhooks']))[0]!.content).toMatch(/72 hours/);
    git(a, 'checkout', 'main');
    const back = await sync();
    expect(back.files.removed).toBe(1);
    expect(back.embedded).toBe(0);
    expect(await memory.getEntries(['bm25'])).toEqual([]);
    expect((await memory.getEntries(['retry-webhooks']))[0]!.content).toMatch(/24 hours\.$/);
    git(a, 'checkout', 'feature');
    const again = await sync();
    expect(again.embedded).toBe(0);
    expect(again.fromCache).toBe(2);
    expect((await memory.getEntries(['bm25'])).length).toBe(1);
    // A branch that only rewrites a file (no directory changes): git's index says so, on the next call.
    git(a, 'checkout', '-q', '-b', 'wording', 'main');
    await writeFile(path, (await readFile(path, 'utf8')).replace('24 hours', 'one day'));
    git(a, 'commit', '-qam', 'memory: wording');
    git(a, 'checkout', '-q', 'feature');
    expect((await memory.getEntries(['retry-webhooks']))[0]!.content).toMatch(/72 hours/);
    git(a, 'checkout', '-q', 'wording');
    expect((await memory.getEntries(['retry-webhooks']))[0]!.content).toMatch(/one day\.$/);
  });

  it('starts from an empty .memcore in another clone and finds nothing changed on the next call', async () => {
    const { clone } = await teamRepo(['a']);
    const memory = await open(clone.a!);
    const before = (await memory.memoryFolder())!.lastSync;
    await memory.buildTaskContext('idempotency of charges');
    expect((await memory.memoryFolder())!.lastSync).toBe(before);
    await memory.close();
    await rm(join(clone.a!, '.memcore'), { recursive: true });
    const again = await open(clone.a!);
    expect((await again.memoryFolder())!.lastSync!.entries.added).toBe(2);
  });
});

describe('team memory with MCP servers in two clones', () => {
  // Processes left after a test are killed once its clients have closed (hooks run in reverse).
  const { memcore, env } = cliWithFakeEmbedder();
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  async function server(repo: string): Promise<Client> {
    const client = new Client({ name: 'memcore-team-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(['mcp', '--db', join(repo, '.memcore')]),
      env: env(),
      stderr: 'pipe',
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }
  type ToolResult = { isError?: boolean; content: { text: string }[]; structuredContent?: Record<string, unknown> };
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  const context = async (client: Client, task: string) => {
    const r = await call(client, 'build_task_context', { task });
    expect(r.isError).toBeFalsy();
    return r.structuredContent as { entries: { entry: { id: string; content: string } }[]; notes?: string[] };
  };

  it('remember in A, push; B pulls, edits, deletes, conflicts: B answers from its files (scenarios 1 to 4)', async () => {
    const { clone } = await teamRepo(['a', 'b']);
    const [a, b] = [clone.a!, clone.b!];
    const serverA = await server(a);
    const serverB = await server(b);
    expect(ids(await context(serverB, 'payment webhooks retried'))).toContain('retry-webhooks');

    // 1. An agent remembers in A: the file is there to commit.
    const r = await call(serverA, 'remember', {
      title: 'Refunds go through the ledger',
      content: 'Refunds are ledger entries, never direct balance updates.',
      core: 'payments',
      type: 'decision',
    });
    expect(r.isError).toBeFalsy();
    const id = (r.structuredContent as { id: string }).id;
    expect(git(a, 'status', '--porcelain')).toBe(`?? memory/payments/${id}.md\n`);
    git(a, 'add', '-A');
    git(a, 'commit', '-m', 'memory: refunds');
    git(a, 'push', 'origin', 'main');

    // 2. B pulls; its running server answers with the new entry, no command run by hand.
    git(b, 'pull', '--ff-only');
    expect(ids(await context(serverB, 'how are refunds recorded in the ledger'))).toContain(id);

    // 3. B edits the entry by hand and deletes another.
    const file = join(b, 'memory', 'payments', `${id}.md`);
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace('never direct balance updates', 'reversed by a compensating ledger entry'),
    );
    await rm(join(b, 'memory', 'payments', 'idempotency-keys.md'));
    const edited = await context(serverB, 'refunds ledger idempotency key charge');
    expect(edited.entries.find((e) => e.entry.id === id)?.entry.content).toMatch(/compensating ledger entry/);
    expect(ids(edited)).not.toContain('idempotency-keys');
    git(b, 'commit', '-am', 'memory: refunds compensate; drop idempotency');

    // 4. A and B change the same entry: the merge conflicts; B names the file, skips it, answers from the rest.
    const retryA = join(a, 'memory', 'payments', 'retry-webhooks.md');
    await writeFile(retryA, (await readFile(retryA, 'utf8')).replace('24 hours', '48 hours'));
    git(a, 'commit', '-am', 'memory: 48 hours');
    git(a, 'push', 'origin', 'main');
    const retryB = join(b, 'memory', 'payments', 'retry-webhooks.md');
    await writeFile(retryB, (await readFile(retryB, 'utf8')).replace('24 hours', '12 hours'));
    git(b, 'commit', '-am', 'memory: 12 hours');
    expect(() => git(b, 'pull', '--no-rebase')).toThrow();
    expect(await readFile(retryB, 'utf8')).toMatch(/^<<<<<<< /m);
    const conflicted = await context(serverB, 'payment webhooks retried refunds ledger');
    expect(conflicted.notes?.join('\n')).toMatch(/memory file memory\/payments\/retry-webhooks\.md:\d+ skipped \(merge conflict markers/);
    expect(conflicted.notes?.join('\n')).toMatch(/last good version still answers/);
    expect(ids(conflicted)).toContain(id);
    const check = await memcore(['check', '--db', join(b, '.memcore'), '--repo', b]);
    expect(check.code).toBe(EXIT.stale);
    expect(check.stdout).toMatch(/memory\/payments\/retry-webhooks\.md:\d+: merge conflict markers/);
  }, 240_000); // two servers and a CLI process on a shared 2-core machine

  it('a secret remembered through MCP or the CLI lands in memory.local/, never under memory/ (scenario 5)', async () => {
    const { clone } = await teamRepo(['a']);
    const a = clone.a!;
    const serverA = await server(a);
    const secret = 'the sandbox webhook secret is whsec_MCPSECRET_7';
    const bad = await call(serverA, 'remember', { title: 'Webhook secret', content: secret, core_id: 'payments', sensitivity: 'private' });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toMatch(/sensitivity/);
    const r = await call(serverA, 'remember', { title: 'Webhook secret', content: secret, core_id: 'payments', sensitivity: 'secret' });
    expect(r.isError).toBeFalsy();
    const id = (r.structuredContent as { id: string }).id;
    expect(r.content[0]!.text).not.toContain('MCPSECRET');
    const viaCli = await memcore([
      'remember',
      '--title',
      'Card vault password',
      '--content',
      'the card vault password is CLISECRET_9',
      '--core',
      'payments',
      '--sensitivity',
      'secret',
      '--json',
      '--db',
      join(a, '.memcore'),
    ]);
    expect(viaCli.code).toBe(EXIT.ok);
    const cliFile = (JSON.parse(viaCli.stdout) as { file: string }).file;
    expect(cliFile).toMatch(/^memory\.local\/payments\/.+\.md$/);

    // Nothing for git to see: not in status (untracked files listed one by one), not in a diff, not in any tracked file.
    expect(git(a, 'status', '--porcelain', '--untracked-files=all', '--ignored=no')).toBe('');
    git(a, 'add', '-A');
    expect(git(a, 'diff', '--cached')).toBe('');
    for (const text of ['MCPSECRET', 'CLISECRET']) expect(() => git(a, 'grep', '-q', '--untracked', text)).toThrow();
    expect(await readFile(join(a, 'memory.local', 'payments', `${id}.md`), 'utf8')).toMatch(/^sensitivity: secret$/m);
    expect(existsSync(join(a, cliFile))).toBe(true);
    expect(await readdir(join(a, 'memory', 'payments'))).toEqual(['idempotency-keys.md', 'retry-webhooks.md']);
    // The entry answers only when secrets are asked for, as any secret does.
    const hidden = await call(serverA, 'get_entries', { ids: [id] });
    expect((hidden.structuredContent as { missing: string[] }).missing).toEqual([id]);
  }, 240_000);
});

describe('team memory from the CLI', () => {
  const fake = inProcessFakeEmbedder();
  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('remember, forget, diff, check and doctor work on the files', async () => {
    const { clone } = await teamRepo(['a']);
    const a = clone.a!;
    const db = join(a, '.memcore');
    expect((await cli('remember', '--title', 'x', '--db', db)).code).toBe(EXIT.usage);
    expect((await cli('remember', '--title', 'x', '--content', 'y', '--link', 'OWNS:z', '--db', db)).code).toBe(EXIT.usage);
    expect((await cli('remember', '--title', 'x', '--content', 'y', '--link', 'DEPENDS_ON:nowhere', '--db', db)).code).toBe(EXIT.invalid);
    expect(git(a, 'status', '--porcelain')).toBe('');

    const r = await cli(
      'remember',
      '--title',
      'Webhook signatures',
      '--content',
      'Verify the signature header before parsing the body.',
      '--core',
      'payments',
      '--type',
      'convention',
      '--link',
      'DEPENDS_ON:retry-webhooks',
      '--json',
      '--db',
      db,
    );
    expect(r.code).toBe(EXIT.ok);
    const { id, file } = JSON.parse(r.out) as { id: string; file: string };
    expect(file).toBe(`memory/payments/${id}.md`);
    expect(await readFile(join(a, file), 'utf8')).toMatch(/- type: DEPENDS_ON\n {4}to: retry-webhooks/);
    const forgot = await cli('forget', 'idempotency-keys', '--reason', 'The provider deduplicates now.', '--db', db);
    expect(forgot.code).toBe(EXIT.ok);

    const diff = await cli('diff', '--db', db);
    expect(diff.code).toBe(EXIT.ok);
    expect(diff.out).toMatch(/^memory HEAD\.\.working tree: 2 added, 0 changed, 1 superseded, 0 removed$/m);
    expect(diff.out).toContain(`+ payments/${id}  Webhook signatures`);
    expect(diff.out).toMatch(/\^ payments\/idempotency-keys {2}Idempotency keys on charges {2}\(superseded by e_[0-9a-f]{16}\)/);
    git(a, 'add', '-A');
    git(a, 'commit', '-m', 'memory: signatures');
    await rm(join(a, 'memory', 'payments', 'retry-webhooks.md'));
    git(a, 'commit', '-am', 'memory: drop retries');
    const range = JSON.parse((await cli('diff', 'HEAD~2..HEAD', '--json', '--db', db)).out) as {
      added: unknown[];
      removed: { id: string }[];
    };
    expect(range.added).toHaveLength(2);
    expect(range.removed.map((x) => x.id)).toEqual(['retry-webhooks']);
    expect((await cli('diff', 'nosuchbranch..HEAD', '--db', db)).code).toBe(EXIT.invalid);

    // The signature entry now links to an entry no file defines: check names the file and line.
    const check = await cli('check', '--db', db, '--repo', a);
    expect(check.code).toBe(EXIT.stale);
    expect(check.out).toMatch(new RegExp(`memory/payments/${id}\\.md:\\d+: links to "retry-webhooks", which no memory file defines`));
    await writeFile(join(a, 'memory', 'payments', 'broken.md'), '---\nmemcore: 1\nid: broken\ntitle: [unclosed\n---\n\nBody\n');
    const doctor = await cli('doctor', '--db', db);
    expect(doctor.code).toBe(EXIT.store);
    expect(doctor.out).toMatch(/BAD {3}memory files: memory\/payments\/broken\.md:\d+: front matter is not valid YAML/);
  });

  it('export --to-files writes a folder that a team repository answers from as the store did', async () => {
    const plain = join(await tempDir(), 'store');
    expect((await cli('ingest', EXAMPLE_FILE, '--db', plain)).code).toBe(EXIT.ok);
    const { clone } = await teamRepo(['a']);
    const a = clone.a!;
    const exported = await cli('export', '--to-files', join(a, 'memory'), '--json', '--db', plain);
    expect(exported.code).toBe(EXIT.ok);
    const counts = JSON.parse(exported.out) as { entries: number; goldenPaths: number };
    expect(counts.entries).toBeGreaterThan(10);
    const before = await openMemory({
      path: plain,
      env: {},
      embedder: { provider: 'openai', baseURL: fake().baseURL, model: 'fake', dimensions: 8 },
    });
    engines.push(before);
    const after = await openMemory({
      path: join(a, '.memcore'),
      env: {},
      embedder: { provider: 'openai', baseURL: fake().baseURL, model: 'fake', dimensions: 8 },
    });
    engines.push(after);
    expect((await after.memoryFolder())!.problems).toEqual([]);
    const all = async (m: MemoryEngine) =>
      (await m.exportMemory({ sensitivity: ['public', 'internal', 'secret'] })).entries!.map((e) => [e.id, e.title, e.content]).sort();
    expect(await all(after)).toEqual(expect.arrayContaining(await all(before)));
    expect((await after.stats()).goldenPaths).toBe(counts.goldenPaths);
  });
});
