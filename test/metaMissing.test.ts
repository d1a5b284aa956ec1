/**
 * A folder whose meta.json alone is gone (#50 item 11), on real processes: reads and writes are
 * refused with a STORE error naming meta.json and `memcore doctor --repair`, never answered as an
 * empty memory nor written over with a fresh meta; the repair rebuilds it from the stores.
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { EXAMPLE_FILE, tempDir } from './helpers.js';
import { cliWithFakeEmbedder } from './cliProcess.js';

const { memcore } = cliWithFakeEmbedder();

describe('a folder without its meta.json', () => {
  it('refuses reads and writes naming meta.json and the repair, which rebuilds it from the stores', async () => {
    const db = join(await tempDir(), 'store');
    expect((await memcore(['ingest', EXAMPLE_FILE, '--db', db])).code).toBe(EXIT.ok);
    const before = JSON.parse(await readFile(join(db, 'meta.json'), 'utf8')) as { embedder: unknown; smallDimensions: number };
    await rm(join(db, 'meta.json'));

    for (const args of [['stats'], ['search', 'access tokens'], ['ingest', EXAMPLE_FILE]]) {
      const run = await memcore([...args, '--db', db]);
      expect(run.code, `${args[0]}: ${run.stderr}`).toBe(EXIT.store);
      expect(run.stderr, args[0]).toContain(join(db, 'meta.json'));
      expect(run.stderr, args[0]).toContain('memcore doctor --repair');
      // nothing written in its place
      expect(existsSync(join(db, 'meta.json')), args[0]).toBe(false);
    }

    const check = await memcore(['doctor', '--db', db, '--json']);
    expect(check.code).toBe(EXIT.store);
    expect(JSON.parse(check.stdout)).toMatchObject({ findings: [{ check: 'meta', ok: false, repair: expect.any(String) }] });

    const repair = await memcore(['doctor', '--repair', '--db', db, '--json']);
    expect(repair.code, repair.stdout + repair.stderr).toBe(EXIT.ok);
    const rebuilt = JSON.parse(await readFile(join(db, 'meta.json'), 'utf8')) as { embedder: unknown; smallDimensions: number };
    expect(rebuilt.embedder).toEqual(before.embedder);
    expect(rebuilt.smallDimensions).toBe(before.smallDimensions);
    const stats = await memcore(['stats', '--db', db, '--json']);
    expect(stats.code, stats.stderr).toBe(EXIT.ok);
    expect(JSON.parse(stats.stdout)).toMatchObject({ entries: 44 });
  }, 240_000);
});
