/**
 * A folder made read-only while its owner has it open (#50 item 12): a failed write to Kuzu's
 * write-ahead log was seen to end in SIGABRT (timing-dependent; not reproduced this way). The
 * owner here is `memcore serve` (a real process that opened the folder while it was writable);
 * the folder is then made immutable (root ignores permission bits; the immutable flag holds for
 * root too) and a CLI write goes through the owner. It must end in a STORE error (exit 6), the
 * owner must live on, and the journal must replay the write once the folder is writable again.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { tempDir, tryRun } from './helpers.js';
import { cliProcesses, cliWithFakeEmbedder } from './cliProcess.js';

const kuzu = cliWithFakeEmbedder();
const ladybug = cliProcesses(() => ({ ...kuzu.env(), MEMCORE_GRAPH: 'ladybug' }));
afterEach(() => ladybug.killAll());
const GRAPHS = { kuzu: { cli: kuzu, file: 'graph.kuzu' }, ladybug: { cli: ladybug, file: 'graph.lbug' } } as const;

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
  // kill -9 stops the owner without closing its graph; SIGTERM closes it normally, which must not
  // keep what the failed transaction left (Kuzu kept the primary keys of its rows without the rows,
  // and the replay's insert of them failed; LadybugDB kept the rows, which the replay merges), so
  // that the replay writes every record exactly once.
  it.for([
    ['kuzu', 'SIGKILL'],
    ['kuzu', 'SIGTERM'],
    ['ladybug', 'SIGTERM'],
  ] as const)(
    'ends the write in a STORE error, keeps the owner alive, and replays the write (%s, %s)',
    { timeout: 240_000 },
    async ([graph, signal], ctx) => {
      const { memcore, serve } = GRAPHS[graph].cli;
      const wal = (db: string) => join(db, `${GRAPHS[graph].file}.wal`);
      const dir = await tempDir();
      const db = join(dir, 'db');
      expect((await memcore(['ingest', await memoryFile(dir, 'a.json', 'a', 20), '--db', db])).code).toBe(EXIT.ok);
      const { child } = await serve(db, ['--no-http']);
      // Immutable: nothing can be created in the folder, and the write-ahead log Kuzu holds open
      // takes no more bytes (write(2) fails with EPERM), as on a volume gone read-only.
      const why = tryRun('chattr', ['+i', db]) ?? (existsSync(wal(db)) ? tryRun('chattr', ['+i', wal(db)]) : undefined);
      if (why) ctx.skip(`cannot make the folder immutable: ${why}`);
      let failed;
      try {
        failed = await memcore(['ingest', await memoryFile(dir, 'b.json', 'b', 50), '--db', db]);
        expect(child.signalCode).toBeNull();
        expect(child.exitCode).toBeNull();
      } finally {
        tryRun('chattr', ['-i', db]);
        if (existsSync(wal(db))) tryRun('chattr', ['-i', wal(db)]);
      }
      expect(failed).toMatchObject({ code: EXIT.store });
      expect(failed.stderr).toMatch(new RegExp(`${GRAPHS[graph].file.replace('.', '\\.')}.*Operation not permitted`));
      expect(failed.stderr).not.toMatch(/\.(cpp|h|rs):\d+/);
      child.kill(signal);
      await new Promise((r) => child.once('exit', r));
      const stats = await memcore(['stats', '--db', db, '--json']);
      expect(stats.code, stats.stderr).toBe(EXIT.ok);
      expect((JSON.parse(stats.stdout) as { entries: number }).entries).toBe(70);
    },
  );
});
