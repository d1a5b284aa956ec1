/**
 * What a re-run of import-code trusts without reading: a manifest whose size and mtime match what
 * the file stamps recorded, and git's status of the files read only. Real LanceDB and Kuzu in temp
 * folders, a real git repository.
 */
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMemory } from '../src/index.js';
import { manifestPath } from '../src/store/sourceManifests.js';
import { gitIn, tempDir, wordHashEmbedder } from './helpers.js';

const FILES: Record<string, string> = {
  'billing/invoice.py': 'def total_invoice(lines):\n    """Sums the invoice lines."""\n    return sum(lines)\n',
  'billing/tax.py': 'def vat_rate(country):\n    return 0.2\n',
  'web/routes.ts': 'export function listInvoices() {\n  return [];\n}\n',
};

async function repository(): Promise<{ repo: string; db: string }> {
  const dir = await tempDir();
  const repo = join(dir, 'repo');
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(join(repo, path, '..'), { recursive: true });
    await writeFile(join(repo, path), text);
    await utimes(join(repo, path), hourAgo, hourAgo); // older than the racy window: stamps keep the mtime
  }
  gitIn(repo, 'init', '-q', '-b', 'main');
  gitIn(repo, 'add', '-A');
  gitIn(repo, '-c', 'user.email=t@example.com', '-c', 'user.name=T', 'commit', '-q', '-m', 'first');
  return { repo, db: join(dir, 'db.memcore') };
}

/** Every manifest's mtime set an hour back: as an import long ago left them (the stamps then trust them). */
async function ageManifests(db: string): Promise<void> {
  const hourAgo = Math.floor(Date.now() / 1000) - 3600; // whole seconds: set back exactly below
  for (const name of await readdir(join(db, 'sources'))) await utimes(join(db, 'sources', name), hourAgo, hourAgo);
}

describe('import-code re-run: manifests and git status it does not ask for', () => {
  it('trusts a manifest whose size and mtime match its stamp, and reads one that changed', async () => {
    const { repo, db } = await repository();
    const m = await openMemory({ path: db, embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await m.importCode(repo, { codebase: 'shop' })).files).toEqual({ read: 3, unchanged: 0, removed: 0 });
      await ageManifests(db);
      // manifests read (written just now, the stamps had no trusted stat of them), and their stats recorded
      expect((await m.importCode(repo, { codebase: 'shop' })).files).toEqual({ read: 0, unchanged: 3, removed: 0 });
      const stamps = JSON.parse(await readFile(join(db, 'code-stamps.json'), 'utf8')) as {
        codebases: Record<string, Record<string, { manifest?: [number, number] }>>;
      };
      const manifest = manifestPath(db, 'code:shop:billing/tax.py');
      const { size, mtimeMs } = await stat(manifest);
      expect(stamps.codebases.shop!['billing/tax.py']!.manifest).toEqual([size, mtimeMs]);

      // A manifest changed behind the stamps' back, size and mtime kept: not read (the documented assumption).
      const text = await readFile(manifest, 'utf8');
      const hash = (JSON.parse(text) as { hash: string }).hash;
      const other = hash.replace(/^./, (c) => (c === '0' ? '1' : '0'));
      await writeFile(manifest, text.replace(hash, other));
      await utimes(manifest, mtimeMs / 1000, mtimeMs / 1000);
      expect((await m.importCode(repo, { codebase: 'shop' })).files).toEqual({ read: 0, unchanged: 3, removed: 0 });

      // Its mtime changed (a restore copies files anew): read, its hash differs from the file's, the file is read again.
      await utimes(manifest, mtimeMs / 1000 + 1, mtimeMs / 1000 + 1);
      const again = await m.importCode(repo, { codebase: 'shop' });
      expect(again.files).toEqual({ read: 1, unchanged: 2, removed: 0 });
      expect(again.languages).toEqual({ python: 1 });
      expect((JSON.parse(await readFile(manifest, 'utf8')) as { hash: string }).hash).toBe(hash);

      // A file gone is found gone from a trusted manifest too.
      await ageManifests(db);
      await m.importCode(repo, { codebase: 'shop' });
      gitIn(repo, 'rm', '-q', 'web/routes.ts');
      expect((await m.importCode(repo, { codebase: 'shop' })).files).toEqual({ read: 0, unchanged: 2, removed: 1 });
      expect((await m.exportMemory()).code_locations!.filter((c) => c.file_path === 'web/routes.ts')).toEqual([]);
    } finally {
      await m.close();
    }
  });

  it('a file read gets the HEAD revision unless it differs from HEAD (git asked of the files read only)', async () => {
    const { repo, db } = await repository();
    const m = await openMemory({ path: db, embedder: wordHashEmbedder(), env: {} });
    try {
      await m.importCode(repo, { codebase: 'shop' });
      const head = gitIn(repo, 'rev-parse', 'HEAD').trim();
      const revisionOf = async (filePath: string) =>
        (await m.exportMemory()).code_locations!.find((c) => c.id === `shop:${filePath}`)!.revision;
      expect(await revisionOf('billing/tax.py')).toBe(head);

      // tax.py edited (it differs from HEAD), invoice.py only touched (not read: its hash is the same)
      await writeFile(join(repo, 'billing/tax.py'), `${FILES['billing/tax.py']}\ndef zero_rated(item):\n    return False\n`);
      await utimes(join(repo, 'billing/invoice.py'), new Date(), new Date());
      expect((await m.importCode(repo, { codebase: 'shop' })).files).toEqual({ read: 1, unchanged: 2, removed: 0 });
      expect(await revisionOf('billing/tax.py')).toBeFalsy();
      expect(await revisionOf('billing/invoice.py')).toBe(head);

      // both committed, then invoice.py changed and committed: the file read is as at the new HEAD
      const commit = (message: string) =>
        gitIn(repo, '-c', 'user.email=t@example.com', '-c', 'user.name=T', 'commit', '-q', '-am', message);
      commit('zero rated');
      await writeFile(
        join(repo, 'billing/invoice.py'),
        `${FILES['billing/invoice.py']}\ndef credit_note(lines):\n    return -sum(lines)\n`,
      );
      commit('credit notes');
      expect((await m.importCode(repo, { codebase: 'shop' })).files).toEqual({ read: 1, unchanged: 2, removed: 0 });
      const head2 = gitIn(repo, 'rev-parse', 'HEAD').trim();
      expect(head2).not.toBe(head);
      expect(await revisionOf('billing/invoice.py')).toBe(head2);
      expect(await revisionOf('billing/tax.py')).toBeFalsy(); // not read again: it keeps what its last read gave
    } finally {
      await m.close();
    }
  });
});
