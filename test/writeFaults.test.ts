/**
 * Real write faults on a real `memcore` process: a disk that is full (a small tmpfs) and a folder
 * that stops being writable midway (the immutable flag). Both need root with CAP_SYS_ADMIN and
 * CAP_LINUX_IMMUTABLE, as CI here has; where the fault cannot be set up, the test says why and
 * skips.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { startFakeOpenAI, type FakeOpenAI } from './openaiServer.js';
import { tempDir, tryRun } from './helpers.js';
import { nodeArgs } from './cliProcess.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { graphFileName } from '../src/store/graph/drivers.js';

/** The graph file of a folder made with the default graph database. */
const GRAPH_FILE = graphFileName(DEFAULTS.store.graph);
const GRAPH_FILE_PATTERN = GRAPH_FILE.replace('.', '\\.');

let server: FakeOpenAI | undefined;
afterAll(async () => server?.close());

/** Runs the CLI as its own process; resolves with its exit code, signal and output. */
async function memcore(args: string[]): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  server ??= await startFakeOpenAI(8);
  const env = {
    ...process.env,
    MEMCORE_EMBEDDER: 'openai',
    MEMCORE_EMBED_BASE_URL: server.baseURL,
    MEMCORE_EMBED_MODEL: 'fake',
    MEMCORE_EMBED_DIMENSIONS: '8',
  };
  return new Promise((resolve) => {
    execFile(process.execPath, nodeArgs(args), { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const e = error as (Error & { code?: number; signal?: string }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, signal: e?.signal ?? null, stdout, stderr });
    });
  });
}

async function memoryFile(dir: string, name: string, entries: number, contentChars: number, prefix: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    JSON.stringify({
      core_id: 'c',
      entries: Array.from({ length: entries }, (_, i) => ({
        id: `${prefix}${i}`,
        title: `${prefix} entry ${i}`,
        content: `${prefix} ${i} ${'x'.repeat(contentChars)}`,
      })),
    }),
  );
  return file;
}

describe('write faults end in a STORE error and exit code 6, never a signal, and lose nothing', () => {
  it('a full disk: the write is refused before anything is written', async (ctx) => {
    const dir = await tempDir();
    const mount = join(dir, 'disk');
    await mkdir(mount);
    const why = tryRun('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mount]);
    if (why) ctx.skip(`cannot make a small disk: ${why}`);
    try {
      const db = join(mount, 'db');
      const small = await memoryFile(dir, 'small.json', 20, 100, 'a');
      expect(await memcore(['ingest', small, '--db', db])).toMatchObject({ code: EXIT.ok });
      const big = await memoryFile(dir, 'big.json', 2_000, 5_000, 'b');
      const failed = await memcore(['ingest', big, '--db', db]);
      expect(failed).toMatchObject({ code: EXIT.store, signal: null });
      expect(failed.stderr).toMatch(/the disk has [\d.]+ MB free; this write needs about [\d.]+ MB\. Nothing was written/);
      const stats = JSON.parse((await memcore(['stats', '--db', db, '--json'])).stdout) as { entries: number };
      expect(stats.entries).toBe(20);
    } finally {
      tryRun('umount', [mount]);
    }
  }, 120_000);

  it('a folder that stops being writable midway: STORE error, then the next open replays the write', async (ctx) => {
    const dir = await tempDir();
    const db = join(dir, 'db');
    const first = await memoryFile(dir, 'first.json', 20, 100, 'a');
    expect(await memcore(['ingest', first, '--db', db])).toMatchObject({ code: EXIT.ok });
    // Immutable: no file can be created in the table's versions folder, as on a volume gone
    // read-only. The stores open and the intent is journaled; the table's commit then fails.
    const versions = join(db, 'lance', 'entries.lance', '_versions');
    const why = tryRun('chattr', ['+i', versions]);
    if (why) ctx.skip(`cannot make the folder immutable: ${why}`);
    let failed;
    try {
      failed = await memcore(['ingest', await memoryFile(dir, 'second.json', 50, 100, 'b'), '--db', db]);
    } finally {
      tryRun('chattr', ['-i', versions]);
    }
    expect(failed.stderr).toMatch(/^memcore: .*lance: the entries table could not be read or written .*Operation not permitted/);
    expect(failed).toMatchObject({ code: EXIT.store, signal: null });
    // A folder that cannot be opened for writing at all is refused at open with the same code.
    tryRun('chattr', ['+i', db]);
    try {
      const refused = await memcore(['ingest', first, '--db', db]);
      expect(refused).toMatchObject({ code: EXIT.store, signal: null });
      expect(refused.stderr).toMatch(new RegExp(`${GRAPH_FILE_PATTERN}.*Operation not permitted`));
    } finally {
      tryRun('chattr', ['-i', db]);
    }
    expect(failed.stderr).not.toMatch(/\.(cpp|h|rs):\d+/);
    // Writable again: the open replays the journaled write, and both stores agree (stats checks).
    const stats = await memcore(['stats', '--db', db, '--json']);
    expect(stats.code).toBe(EXIT.ok);
    expect((JSON.parse(stats.stdout) as { entries: number }).entries).toBe(70);
  }, 120_000);
});
