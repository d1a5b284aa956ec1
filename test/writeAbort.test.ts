/**
 * A folder made read-only while its owner has it open (#50 item 12): a failed write to Kuzu's
 * write-ahead log was seen to end in SIGABRT (timing-dependent; not reproduced this way). The
 * owner here is `memcore serve` (a real process that opened the folder while it was writable);
 * the folder is then made immutable (root ignores permission bits; the immutable flag holds for
 * root too) and a CLI write goes through the owner. It must end in a STORE error (exit 6), the
 * owner must live on, and the journal must replay the write once the folder is writable again.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { tempDir, tryRun } from './helpers.js';
import { cliWithFakeEmbedder } from './cliProcess.js';

const { memcore, serve } = cliWithFakeEmbedder();

async function memoryFile(dir: string, name: string, prefix: string, entries: number): Promise<string> {
  const file = join(dir, name);
  const records = Array.from({ length: entries }, (_, i) => ({
    id: `${prefix}${i}`,
    title: `${prefix} entry ${i}`,
    content: `${prefix} ${i} text`,
  }));
  await writeFile(file, JSON.stringify({ core_id: 'c', entries: records }));
  return file;
}

describe('a folder made read-only under its owner', () => {
  // kill -9 stops the owner without closing its graph; SIGTERM closes it normally, after which Kuzu
  // keeps what the failed transaction left (its rows, or their primary keys), and the replay must
  // still write every record exactly once.
  it.for(['SIGKILL', 'SIGTERM'] as const)(
    'ends the write in a STORE error, keeps the owner alive, and replays the write after %s',
    { timeout: 240_000 },
    async (signal, ctx) => {
      const dir = await tempDir();
      const db = join(dir, 'db');
      expect((await memcore(['ingest', await memoryFile(dir, 'a.json', 'a', 20), '--db', db])).code).toBe(EXIT.ok);
      const { child } = await serve(db, ['--no-http']);
      // Immutable: nothing can be created in the folder, and the write-ahead log Kuzu holds open
      // takes no more bytes (write(2) fails with EPERM), as on a volume gone read-only.
      const why = tryRun('chattr', ['+i', db]) ?? tryRun('chattr', ['+i', join(db, 'graph.kuzu.wal')]);
      if (why) ctx.skip(`cannot make the folder immutable: ${why}`);
      let failed;
      try {
        failed = await memcore(['ingest', await memoryFile(dir, 'b.json', 'b', 50), '--db', db]);
        expect(child.signalCode).toBeNull();
        expect(child.exitCode).toBeNull();
      } finally {
        tryRun('chattr', ['-i', db]);
        tryRun('chattr', ['-i', join(db, 'graph.kuzu.wal')]);
      }
      expect(failed).toMatchObject({ code: EXIT.store });
      expect(failed.stderr).toMatch(/graph\.kuzu.*Operation not permitted/);
      expect(failed.stderr).not.toMatch(/\.(cpp|h|rs):\d+/);
      child.kill(signal);
      await new Promise((r) => child.once('exit', r));
      const stats = await memcore(['stats', '--db', db, '--json']);
      expect(stats.code, stats.stderr).toBe(EXIT.ok);
      expect((JSON.parse(stats.stdout) as { entries: number }).entries).toBe(70);
    },
  );
});
