/**
 * Team memory (docs/team.md, "A pull's vectors"): a running engine's catch-up with a pull
 * does not hold the call for every vector. The embedder is a real HTTP server speaking the OpenAI
 * API (test/openaiServer.ts) that holds the requests holding the pull's texts until the test lets
 * them go: the window in which the new texts answer without their vectors is the test's, not a
 * clock's. Real git, real stores; the MCP server is spawned and driven by the SDK client, and
 * killed with SIGKILL while its vectors are still coming.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openMemory, type MemoryEngine } from '../src/index.js';
import { cosineSimilarity } from '../src/embed/embedder.js';
import { fakeEmbedderEnv, cliProcesses, nodeArgs } from './cliProcess.js';
import { embeddingsReply, startFakeOpenAI, vectorFor, type FakeOpenAI } from './openaiServer.js';
import { tempDir } from './helpers.js';

const DIMENSIONS = 8;
/** The word every text of the pull holds: requests of entry texts holding it wait while `holding` is on. */
const PULLED = 'quorum';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

const entryFile = (id: string, title: string, body: string) =>
  `---\nmemcore: 1\nid: ${id}\ntitle: ${title}\ntype: lesson\n---\n\n${body}\n`;
const noteTitle = (i: number) => `Ledger note ${i}`;
const notePath = (repo: string, i: number) => join(repo, 'memory', 'ledger', `note-${i}.md`);

/**
 * A repository whose `main` holds 30 notes, and a branch `pulled` that changes notes 0-19 (their
 * text now says PULLED), adds `fresh-0`..`fresh-4` (saying it too) and deletes note 29.
 */
async function repoWithPull(): Promise<string> {
  const repo = join(await tempDir('memcore-team-vectors-'), 'repo');
  await mkdir(join(repo, 'memory', 'ledger'), { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  await writeFile(join(repo, '.gitignore'), '.memcore/\n');
  for (let i = 0; i < 30; i++)
    await writeFile(notePath(repo, i), entryFile(`note-${i}`, noteTitle(i), `Balances settle nightly, batch ${i}.`));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'memory: notes');
  git(repo, 'checkout', '-qb', 'pulled');
  for (let i = 0; i < 20; i++) await writeFile(notePath(repo, i), entryFile(`note-${i}`, noteTitle(i), changedBody(i)));
  for (let i = 0; i < 5; i++)
    await writeFile(join(repo, 'memory', 'ledger', `fresh-${i}.md`), entryFile(`fresh-${i}`, `Fresh rule ${i}`, freshBody(i)));
  await rm(notePath(repo, 29));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'memory: a teammate');
  git(repo, 'checkout', '-q', 'main');
  return repo;
}
const changedBody = (i: number) => `Balances settle once a ${PULLED} of ledgers agrees, batch ${i}.`;
const freshBody = (i: number) => `A ${PULLED} of three ledgers signs every transfer, rule ${i}.`;

/** The fake server, holding the requests that carry a text of the pull while `holding` is on. */
function holdingServer(): { server: () => FakeOpenAI; held: ServerResponse[]; hold: (on: boolean) => void } {
  let fake: FakeOpenAI | undefined;
  const held: { res: ServerResponse; input: string[] }[] = [];
  const heldRes: ServerResponse[] = [];
  let holding = false;
  beforeAll(async () => {
    fake = await startFakeOpenAI(DIMENSIONS);
    fake.respond = (body, _n, res) => {
      const input = body.input as string[];
      // An entry's text starts with its title; a query's does not.
      if (holding && input.some((t) => t.includes(PULLED) && /^(Ledger note|Fresh rule) \d+\n/.test(t))) {
        held.push({ res, input });
        heldRes.push(res);
      } else embeddingsReply(res, input, DIMENSIONS);
    };
  });
  afterAll(async () => fake?.close());
  return {
    server: () => fake!,
    held: heldRes,
    hold(on) {
      holding = on;
      if (on) return;
      for (const { res, input } of held.splice(0)) if (!res.writableEnded) embeddingsReply(res, input, DIMENSIONS);
      heldRes.splice(0);
    },
  };
}

/** The vectors an entry has in the table (stores are a test's to read, not the API's). */
async function vectorOf(memory: MemoryEngine, id: string): Promise<Float32Array | undefined> {
  const [row] = await memory.unsafeExposeInternals().stores.table.read({ ids: [id] }, { withVectors: true });
  return row?.vector;
}
/** The entry's vector is the one its current text embeds to. */
async function vectorIsOfText(memory: MemoryEngine, id: string): Promise<boolean> {
  const [entry] = await memory.getEntries([id]);
  const vector = await vectorOf(memory, id);
  return !!entry && !!vector && cosineSimilarity(vector, vectorFor(`${entry.title}\n${entry.content}`, DIMENSIONS)) > 0.9999;
}
/** Calls `memoryFolder` (a catch-up) until no vector is pending; the background writes them on its own. */
async function untilVectorsIn(memory: MemoryEngine): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if ((await memory.memoryFolder())!.pendingVectors === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the vectors never came in');
}
const pendingNote = (notes: string[] | undefined) => (notes ?? []).find((n) => /still being embedded/.test(n));

describe('a pull answered before its vectors are in', () => {
  const { server, held, hold } = holdingServer();
  const engines: MemoryEngine[] = [];
  afterEach(async () => {
    hold(false);
    await Promise.all(engines.splice(0).map((e) => e.close()));
  });

  it('answers the new texts at once, never a deleted entry; the vectors arrive and the note goes', async () => {
    const repo = await repoWithPull();
    const memory = await openMemory({
      path: join(repo, '.memcore'),
      embedder: { provider: 'openai', baseURL: server().baseURL, model: 'fake', dimensions: DIMENSIONS },
      env: {},
      cache: { ttlMs: 0 },
    });
    engines.push(memory);
    expect((await memory.memoryFolder())!.pendingVectors).toBe(0);
    const oldVector = await vectorOf(memory, 'note-3');

    hold(true);
    git(repo, 'merge', '-q', '--ff-only', 'pulled');
    const task = `${PULLED} of ledgers agrees`;
    const bundle = await memory.buildTaskContext(task);
    // The call answered while the model still holds the pull's texts.
    expect(held.length).toBeGreaterThan(0);
    const status = (await memory.memoryFolder())!;
    expect(status.lastSync!.deferred).toBe(25);
    expect(status.pendingVectors).toBe(25);
    expect(pendingNote(bundle.notes)).toMatch(/^25 changed memory entries are still being embedded/);
    // The new texts answer through their words: every note of the pull in the bundle holds its new text.
    const pulled = bundle.entries.filter((e) => /^(note-([0-9]|1[0-9])|fresh-\d)$/.test(e.entry.id));
    expect(pulled.length).toBeGreaterThan(0);
    for (const e of pulled) expect(e.entry.content).toContain(PULLED);
    expect(bundle.entries.map((e) => e.entry.id)).not.toContain('note-29');
    expect(await memory.getEntries(['note-29'])).toEqual([]);
    // A changed entry keeps its old vector, a new one has none, until theirs are in.
    expect(await vectorOf(memory, 'note-3')).toEqual(oldVector);
    expect((await vectorOf(memory, 'fresh-1'))!.every((x) => x === 0)).toBe(true);
    expect((await memory.stats()).pendingVectors).toBe(25);
    const health = await memory.checkHealth();
    expect(health.findings).toContainEqual(expect.objectContaining({ check: 'memory vectors', ok: true }));
    expect(health.findings.find((f) => f.check === 'memory vectors')!.message).toMatch(/^25 changed entries still being embedded/);

    // A second pull while the first one's vectors are being computed: a note changed again, a new one deleted.
    await writeFile(notePath(repo, 4), entryFile('note-4', noteTitle(4), `Balances settle when a ${PULLED} of five ledgers agrees.`));
    await rm(join(repo, 'memory', 'ledger', 'fresh-2.md'));
    git(repo, 'commit', '-qam', 'memory: five ledgers');
    const second = await memory.buildTaskContext(`five ledgers ${PULLED}`);
    expect(second.entries.find((e) => e.entry.id === 'note-4')?.entry.content).toMatch(/five ledgers/);
    expect(second.entries.map((e) => e.entry.id)).not.toContain('fresh-2');
    expect(await memory.getEntries(['fresh-2'])).toEqual([]);
    expect((await memory.memoryFolder())!.pendingVectors).toBe(24);

    hold(false);
    await untilVectorsIn(memory);
    for (const id of ['note-0', 'note-4', 'note-19', 'fresh-0', 'fresh-4']) expect(await vectorIsOfText(memory, id)).toBe(true);
    expect(await memory.getEntries(['fresh-2', 'note-29'])).toEqual([]);
    const after = await memory.buildTaskContext(task);
    expect(pendingNote(after.notes)).toBeUndefined();
    expect((await memory.stats()).pendingVectors).toBe(0);
    // The vector channel now finds a new entry too (before, its zero vector was no hit). The fake
    // model's vectors of same-length texts nearly tie, so it is among the hits, not surely first.
    const [fresh3] = await memory.getEntries(['fresh-3']);
    const semantic = await memory.semanticSearch(`${fresh3!.title}\n${fresh3!.content}`, { limit: 10 });
    expect(semantic.map((h) => h.entry.id)).toContain('fresh-3');
  }, 120_000);

  it('close() writes the vectors still being computed: a process that exits has them all', async () => {
    const repo = await repoWithPull();
    const path = join(repo, '.memcore');
    const embedder = { provider: 'openai' as const, baseURL: server().baseURL, model: 'fake', dimensions: DIMENSIONS };
    const memory = await openMemory({ path, embedder, env: {} });
    hold(true);
    git(repo, 'merge', '-q', '--ff-only', 'pulled');
    expect((await memory.memoryFolder())!.pendingVectors).toBe(25);
    const closing = memory.close();
    hold(false);
    await closing;
    const again = await openMemory({ path, embedder, env: {} });
    engines.push(again);
    const status = (await again.memoryFolder())!;
    expect(status.pendingVectors).toBe(0);
    expect(status.lastSync!.files.read).toBe(0);
    for (const id of ['note-0', 'fresh-4']) expect(await vectorIsOfText(again, id)).toBe(true);
  }, 120_000);
});

describe('a server killed while its vectors are coming', () => {
  const { server, held, hold } = holdingServer();
  const cli = cliProcesses(() => fakeEmbedderEnv(server().baseURL, DIMENSIONS));
  const clients: Client[] = [];
  afterEach(async () => {
    hold(false);
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });

  it('leaves a store whose next open embeds what has no vector', async () => {
    const repo = await repoWithPull();
    const db = join(repo, '.memcore');
    const client = new Client({ name: 'memcore-team-vectors-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(['mcp', '--db', db]),
      env: fakeEmbedderEnv(server().baseURL, DIMENSIONS),
      stderr: 'pipe',
    });
    await client.connect(transport);
    clients.push(client);
    const context = async (task: string) => {
      const r = (await client.callTool({ name: 'build_task_context', arguments: { task } })) as {
        isError?: boolean;
        structuredContent?: { entries: { entry: { id: string; content: string } }[]; notes?: string[] };
      };
      expect(r.isError).toBeFalsy();
      return r.structuredContent!;
    };
    expect((await context('balances settle nightly')).entries.length).toBeGreaterThan(0);

    hold(true);
    git(repo, 'merge', '-q', '--ff-only', 'pulled');
    const bundle = await context(`${PULLED} of ledgers agrees`);
    expect(held.length).toBeGreaterThan(0);
    expect(pendingNote(bundle.notes)).toMatch(/^25 changed memory entries/);
    expect(bundle.entries.map((e) => e.entry.id)).not.toContain('note-29');

    // kill -9 while the model still holds the texts: no close, no background write.
    const pid = transport.pid!;
    const gone = new Promise<void>((resolve) => (transport.onclose = () => resolve()));
    process.kill(pid, 'SIGKILL');
    await gone;
    const state = JSON.parse(await readFile(join(db, 'memory-files.json'), 'utf8')) as { files: Record<string, { pending?: true }> };
    expect(Object.values(state.files).filter((f) => f.pending).length).toBe(25);
    const doctor = await cli.memcore(['doctor', '--db', db, '--json']);
    expect(doctor.code).toBe(0);
    expect(JSON.parse(doctor.stdout).findings).toContainEqual(
      expect.objectContaining({
        check: 'memory vectors',
        message: expect.stringMatching(/^25 entries indexed without their text's vector/),
      }),
    );

    hold(false);
    const memory = await openMemory({ path: db, env: fakeEmbedderEnv(server().baseURL, DIMENSIONS) });
    try {
      expect((await memory.memoryFolder())!.pendingVectors).toBe(0);
      for (const id of ['note-0', 'note-19', 'fresh-0']) expect(await vectorIsOfText(memory, id)).toBe(true);
      expect((await memory.getEntries(['note-7']))[0]!.content).toContain(PULLED);
      expect(await memory.getEntries(['note-29'])).toEqual([]);
    } finally {
      await memory.close();
    }
  }, 180_000);
});
