/**
 * What a newcomer meets first, as real processes (issue 46): the database folder keeps itself out
 * of git, a mistyped option is named with the one meant, a request without the bearer token is
 * told what it lacks, and `memcore ui` refuses a folder with no memory and says where MCP is.
 * The embedder is a real HTTP server speaking the OpenAI API (test/openaiServer.ts).
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXIT, main, USAGE } from '../src/cli/main.js';
import { FOLDER_GITIGNORE } from '../src/store/storeFiles.js';
import { cliProcesses, fakeEmbedderEnv } from './cliProcess.js';
import { capturedIo, EXAMPLE_FILE, gitIn, shopRepo, tempDir } from './helpers.js';
import { startFakeOpenAI, type FakeOpenAI } from './openaiServer.js';

let embeddings: FakeOpenAI;
let env: Record<string, string>;
const cli = cliProcesses(() => env);
const started: number[] = [];

beforeAll(async () => {
  embeddings = await startFakeOpenAI(8);
  env = fakeEmbedderEnv(embeddings.baseURL);
});
afterAll(async () => embeddings.close());
/** Whether a process is still there. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops the processes a test started and waits until they are gone, so that their folders can be removed. */
async function stopAll(): Promise<void> {
  const pids = [...started.splice(0), ...cli.children.map((c) => c.pid!).filter((pid) => pid !== undefined)];
  cli.killAll();
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGTERM');
  for (let waited = 0; waited < 30_000 && pids.some(alive); waited += 100) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
}
afterEach(stopAll);

/** `git status --porcelain` of the repository, untracked files listed one by one. */
const gitStatus = (repo: string) => gitIn(repo, 'status', '--porcelain', '--untracked-files=all').trim();

describe('the database folder and git', () => {
  it('after ingest, serve and ui in a repository, git offers nothing under .memcore/ (not server.token)', async () => {
    const repo = await shopRepo();
    const db = join(repo, '.memcore');
    expect((await cli.memcore(['ingest', EXAMPLE_FILE, '--db', db])).code).toBe(EXIT.ok);
    expect(await readFile(join(db, '.gitignore'), 'utf8')).toBe(FOLDER_GITIGNORE);
    expect(gitStatus(repo)).toBe('');

    const { ready } = await cli.serve(db, ['--port', '0']);
    expect(existsSync(ready.tokenFile!)).toBe(true);
    expect(gitStatus(repo)).toBe('');
    expect(gitIn(repo, 'add', '-A', '--dry-run').trim()).toBe('');
    await stopAll();

    const ui = await cli.memcore(['ui', '--db', db, '--port', '0', '--json']);
    expect(ui.code, ui.stderr).toBe(EXIT.ok);
    started.push((JSON.parse(ui.stdout) as { startedServer: number }).startedServer);
    expect(existsSync(join(db, 'server.log'))).toBe(true);
    expect(gitStatus(repo)).toBe('');
    // What memcore writes elsewhere in the repository is offered as usual: the rule is the folder's own.
    await writeFile(join(repo, 'notes.md'), 'mine\n');
    expect(gitStatus(repo)).toBe('?? notes.md');
  }, 240_000);

  it('a folder made before memcore wrote one gets its .gitignore when opened; one the user changed is kept', async () => {
    const repo = await shopRepo();
    const db = join(repo, '.memcore');
    expect((await cli.memcore(['ingest', EXAMPLE_FILE, '--db', db])).code).toBe(EXIT.ok);
    await rm(join(db, '.gitignore'));
    expect(gitStatus(repo)).toMatch(/\?\? \.memcore\/meta\.json/);
    expect((await cli.memcore(['stats', '--db', db])).code).toBe(EXIT.ok);
    expect(await readFile(join(db, '.gitignore'), 'utf8')).toBe(FOLDER_GITIGNORE);
    expect(gitStatus(repo)).toBe('');

    await writeFile(join(db, '.gitignore'), '*\n!notes.txt\n');
    expect((await cli.memcore(['stats', '--db', db])).code).toBe(EXIT.ok);
    expect(await readFile(join(db, '.gitignore'), 'utf8')).toBe('*\n!notes.txt\n');
  }, 180_000);
});

describe('a mistyped option', () => {
  const commands = USAGE.split('\n')
    .map((l) => /^ {2}([a-z][a-z-]*)\b/.exec(l)?.[1])
    .filter((c): c is string => c !== undefined);

  it('is named with the option meant, for every command, exit 2, before anything is opened', async () => {
    expect(commands.length).toBeGreaterThan(25);
    const db = join(await tempDir(), 'never-made');
    for (const command of commands) {
      const { io, err } = capturedIo();
      expect(await main([command, '--max-entrys', '3', '--db', db], io), command).toBe(EXIT.usage);
      expect(err.join('\n'), command).toMatch(/^memcore: unknown option --max-entrys; /);
      const { io: io2, err: err2 } = capturedIo();
      expect(await main([command, '--dbb', db], io2), command).toBe(EXIT.usage);
      expect(err2.join('\n'), command).toBe('memcore: unknown option --dbb; did you mean --db?');
    }
    expect(existsSync(db)).toBe(false);
    const far = capturedIo();
    expect(await main(['stats', '-z'], far.io)).toBe(EXIT.usage);
    expect(far.err).toEqual(['memcore: unknown option -z; memcore stats --help lists the options']);
    const json = capturedIo();
    expect(await main(['search', 'q', '--limt', '3', '--json'], json.io)).toBe(EXIT.usage);
    expect(JSON.parse(json.out[0]!)).toEqual({ error: { code: 'USAGE', message: 'unknown option --limt; did you mean --limit?' } });
    // A value that looks like an option is a value, not the unknown option.
    const negative = capturedIo();
    expect(await main(['search', 'q', '--threshold=-0.5', '--limt', '3'], negative.io)).toBe(EXIT.usage);
    expect(negative.err).toEqual(['memcore: unknown option --limt; did you mean --limit?']);
    const command = capturedIo();
    expect(await main(['contxt', 'x'], command.io)).toBe(EXIT.usage);
    expect(command.err[0]).toMatch(/unknown command "contxt"; did you mean context\?/);
  });

  it('says so from the command line as users run it', async () => {
    const r = await cli.memcore(['context', 'rotate tokens', '--max-entrys', '6']);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr.trim()).toBe('memcore: unknown option --max-entrys; did you mean --max-entries?');
    // The value form, and an option that takes no value, the same way.
    expect((await cli.memcore(['context', 'x', '--max-entrys=6'])).stderr).toMatch(/did you mean --max-entries\?/);
    expect((await cli.memcore(['search', 'x', '--no-keywords'])).stderr).toMatch(/unknown option --no-keywords; /);
  }, 180_000);
});

describe('HTTP without the bearer token', () => {
  it('is answered 401 with a JSON error saying a bearer token is needed and where it is', async () => {
    const db = join(await tempDir(), 'store');
    expect((await cli.memcore(['ingest', EXAMPLE_FILE, '--db', db])).code).toBe(EXIT.ok);
    const { ready } = await cli.serve(db, ['--port', '0']);
    const res = await fetch(ready.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    const body = (await res.json()) as { jsonrpc: string; error: { message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.message).toContain('bearer token');
    expect(body.error.message).toContain(ready.tokenFile!);

    // What the MCP SDK's client reports, rather than only "Error POSTing to endpoint".
    const client = new Client({ name: 'no-token', version: '1.0.0' });
    const failed = await client.connect(new StreamableHTTPClientTransport(new URL(ready.url!))).then(
      () => 'connected',
      (e: Error) => e.message,
    );
    expect(failed).toMatch(/needs a bearer token/);
    expect(failed).toContain(ready.tokenFile!);
    await client.close().catch(() => undefined);

    const api = await fetch(new URL('/api/status', ready.url!));
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining(ready.tokenFile!) as string,
    });
    // With the token, the same server answers.
    const token = (await readFile(ready.tokenFile!, 'utf8')).trim();
    expect((await fetch(new URL('/api/status', ready.url!), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  }, 180_000);
});

describe('memcore ui', () => {
  it('on a folder with no memory exits 4 and creates and starts nothing', async () => {
    const db = join(await tempDir(), 'nothing-here');
    const r = await cli.memcore(['ui', '--db', db]);
    expect(r.code).toBe(EXIT.notFound);
    expect(r.stderr).toMatch(/no memory at .*nothing-here; create it with `memcore ingest <file>`/);
    expect(existsSync(db)).toBe(false);
  });

  it('starts its server on the port serve takes (7077), on a free one when that is taken, and says where MCP is', async () => {
    const db = join(await tempDir(), 'store');
    expect((await cli.memcore(['ingest', EXAMPLE_FILE, '--db', db])).code).toBe(EXIT.ok);
    // Hold 7077: taken for this server. Another process holding it (a server of another test run
    // on the machine) could let it go before `ui` starts, so this waits for it, up to a minute,
    // and only then takes the other process's hold as the taken port.
    const hold = () =>
      new Promise<Server | undefined>((done) => {
        const server = createServer();
        server.once('error', () => done(undefined)).listen(7077, '127.0.0.1', () => done(server));
      });
    let holder = await hold();
    for (let waited = 0; !holder && waited < 60_000; waited += 250) {
      await new Promise((r) => setTimeout(r, 250));
      holder = await hold();
    }
    try {
      const r = await cli.memcore(['ui', '--db', db]);
      expect(r.code, r.stderr).toBe(EXIT.ok);
      const pid = Number(/stop it with kill (\d+)/.exec(r.stdout)?.[1]);
      started.push(pid);
      expect(r.stdout).toContain('port 7077 is taken');
      const mcp = /MCP over HTTP at (http:\/\/127\.0\.0\.1:(\d+)\/mcp) \(bearer token in (.*server\.token)\)/.exec(r.stdout);
      expect(mcp, r.stdout).not.toBeNull();
      expect(mcp![2]).not.toBe('7077');
      expect(mcp![3]).toBe(join(db, 'server.token'));
      // The address printed is the server's: MCP answers there with the token.
      const token = (await readFile(join(db, 'server.token'), 'utf8')).trim();
      const client = new Client({ name: 'ui-check', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcp![1]!), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('build_task_context');
      await client.close();
      // Asked again, the running server answers, with the same MCP address.
      const again = await cli.memcore(['ui', '--db', db, '--json']);
      expect(JSON.parse(again.stdout)).toMatchObject({ mcp: mcp![1], startedServer: null });
    } finally {
      holder?.close();
    }
  }, 180_000);
});
