/**
 * A backup is input like any other: a manifest can name any path, and a backup folder can hold
 * symlinks. `memcore restore` (a real process) must write only inside its target and read only
 * inside the backup, with --force as without.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { MemcoreError, restoreMemory } from '../src/index.js';
import { EXAMPLE_FILE, tempDir, tempDirForFile } from './helpers.js';
import { cliWithFakeEmbedder } from './cliProcess.js';

const { memcore } = cliWithFakeEmbedder();

type Manifest = { files: { path: string; bytes: number; sha256: string }[] };
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

let pristine: Promise<string> | undefined;
/** A copy, in `<root>/backup`, of a real backup of the example memory (made once for this file). */
async function backupOf(root: string): Promise<string> {
  pristine ??= (async () => {
    const made = await tempDirForFile();
    expect((await memcore(['ingest', EXAMPLE_FILE, '--db', join(made, 'live')])).code).toBe(EXIT.ok);
    expect((await memcore(['backup', join(made, 'backup'), '--db', join(made, 'live')])).code).toBe(EXIT.ok);
    return join(made, 'backup');
  })();
  await cp(await pristine, join(root, 'backup'), { recursive: true });
  return join(root, 'backup');
}

async function addToManifest(backup: string, path: string, body: string): Promise<void> {
  const file = join(backup, 'memcore-backup.json');
  const manifest = JSON.parse(await readFile(file, 'utf8')) as Manifest;
  manifest.files.push({ path, bytes: Buffer.byteLength(body), sha256: sha256(body) });
  await writeFile(file, JSON.stringify(manifest, null, 2));
}

describe('restore of a hostile backup', () => {
  it('refuses a manifest path outside the folder layout, naming the entry, and writes nothing anywhere', async () => {
    const root = await tempDir();
    const backup = await backupOf(root);
    const body = 'written by a hostile manifest\n';
    // The file is really there, with the right size and checksum, so only the path can refuse it.
    await writeFile(join(root, 'escaped.txt'), body);
    await addToManifest(backup, '../escaped.txt', body);
    const target = join(root, 'site', 'target');
    await mkdir(join(root, 'site'));
    for (const force of [[], ['--force']]) {
      const run = await memcore(['restore', backup, '--db', target, ...force]);
      expect(run.code, run.stderr).toBe(EXIT.invalid);
      expect(run.stderr).toContain('"../escaped.txt"');
      expect(run.stderr).toMatch(/not a file a memcore folder holds/);
      expect(await readdir(join(root, 'site'))).toEqual([]);
    }
  }, 120_000);

  it('refuses absolute paths, backslashes and names outside the layout', async () => {
    const root = await tempDir();
    const backup = await backupOf(root);
    const file = join(backup, 'memcore-backup.json');
    const saved = await readFile(file, 'utf8');
    for (const path of ['/tmp/evil', 'lance/../../evil', 'lance\\..\\evil', 'server.sock', 'unknown/x.json', 'lance/./x', '']) {
      await addToManifest(backup, path, 'x');
      // In this process (a CLI run each would take seconds): the same function `memcore restore` calls.
      const error = (await restoreMemory(backup, { path: join(root, 'target'), force: true }).catch((e: unknown) => e)) as MemcoreError;
      expect(error, path).toBeInstanceOf(MemcoreError);
      expect(error.code, path).toBe('INVALID_INPUT');
      expect(error.message, path).toContain(JSON.stringify(path));
      expect(existsSync(join(root, 'target')), path).toBe(false);
      await writeFile(file, saved);
    }
  }, 120_000);

  it('does not read through a symlink in the backup that leaves it', async () => {
    const root = await tempDir();
    const backup = await backupOf(root);
    const secret = 'secret outside the backup\n';
    await mkdir(join(root, 'outside'));
    await writeFile(join(root, 'outside', 'a.json'), secret);
    // sources/ of the backup is a link to a folder outside it, holding a file the manifest lists.
    await symlink(join(root, 'outside'), join(backup, 'sources', 'linked'));
    await addToManifest(backup, 'sources/linked/a.json', secret);
    const run = await memcore(['restore', backup, '--db', join(root, 'target'), '--force']);
    expect(run.code, run.stderr).toBe(EXIT.invalid);
    expect(run.stderr).toContain('"sources/linked/a.json"');
    expect(run.stderr).toMatch(/symlink/);
    expect(existsSync(join(root, 'target'))).toBe(false);
  }, 120_000);

  it('still restores an ordinary backup', async () => {
    const root = await tempDir();
    const backup = await backupOf(root);
    const run = await memcore(['restore', backup, '--db', join(root, 'target'), '--json']);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const stats = await memcore(['stats', '--db', join(root, 'target'), '--json']);
    expect(JSON.parse(stats.stdout)).toMatchObject({ entries: 44 });
  }, 120_000);
});
