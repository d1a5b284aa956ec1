/**
 * Symlinks in a repository that lead out of it (#50 item 2), in real git repositories: import,
 * import-code, check and context --diff treat such a link as a link, never read what it points
 * at, and say so in their reports. Links inside the repository are unaffected.
 */
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMemory, type MemoryEngine } from '../src/index.js';
import { gitIn, shopRepo, tempDir, wordHashEmbedder } from './helpers.js';

const SECRET_TS = 'export function stolenSecret() {\n  return "outside";\n}\n';
const SECRET_MD = '# Stolen heading\n\nText from outside the repository.\n';

async function withRepo(fn: (m: MemoryEngine, repo: string, outside: string) => Promise<void>): Promise<void> {
  const repo = await shopRepo();
  const outside = join(await tempDir(), 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.ts'), SECRET_TS);
  await writeFile(join(outside, 'secret.md'), SECRET_MD);
  const m = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {} });
  try {
    await fn(m, repo, outside);
  } finally {
    await m.close();
  }
}

describe('symlinks that leave the repository', () => {
  it('import and import-code list them as skipped links and read nothing behind them', async () => {
    await withRepo(async (m, repo, outside) => {
      await mkdir(join(repo, 'docs'));
      await writeFile(join(repo, 'docs', 'own.md'), '# Own heading\n\nText of the repository.\n');
      await symlink(join(outside, 'secret.md'), join(repo, 'docs', 'linked.md'));
      await symlink(outside, join(repo, 'docs', 'linked-folder'));
      await symlink(join(outside, 'secret.ts'), join(repo, 'src', 'linked.ts'));
      // a link inside the repository is not one that leaves it
      await symlink(join(repo, 'src', 'orders.ts'), join(repo, 'src', 'inside.ts'));

      const imported = await m.importMarkdown([join(repo, 'docs')]);
      expect(imported.failed).toEqual([]);
      expect(imported.skipped.map((f) => f.file).sort()).toEqual([join(repo, 'docs', 'linked-folder'), join(repo, 'docs', 'linked.md')]);
      for (const f of imported.skipped) expect(f.reason).toMatch(/a symlink to .*outside the repository.*not read/);
      const named = await m.importMarkdown([join(repo, 'docs', 'linked.md')]);
      expect(named.skipped).toMatchObject([{ file: join(repo, 'docs', 'linked.md') }]);
      const titles = (await m.listEntries({})).map((e) => e.title);
      expect(titles).toContain('Own heading');
      expect(titles).not.toContain('Stolen heading');

      const code = await m.importCode(repo, { codebase: 'shop', autoLink: false });
      expect(code.skipped).toContainEqual({
        file: 'src/linked.ts',
        reason: expect.stringMatching(/symlink to .*secret\.ts, outside the repository/),
      });
      expect(code.skipped.map((s) => s.file)).not.toContain('src/inside.ts');
      expect(await m.findByCodeReference({ symbol: 'stolenSecret' })).toEqual([]);
    });
  });

  it('check calls a location behind such a link neither fresh nor read, and context --diff takes no symbol from it', async () => {
    await withRepo(async (m, repo, outside) => {
      // helper.ts is a file of the repository when imported, and a link out of it afterwards, with the same text.
      await writeFile(join(repo, 'src', 'helper.ts'), SECRET_TS);
      await writeFile(join(repo, 'src', 'notes.ts'), 'export function noteThing() {\n  return 1;\n}\n');
      await writeFile(join(outside, 'other.ts'), 'export function outsideOnly() {\n  return 2;\n}\n');
      gitIn(repo, 'add', '.');
      gitIn(repo, 'commit', '-q', '-m', 'helper');
      await m.importCode(repo, { codebase: 'shop', autoLink: false });
      await m.ingestDocument({
        core_id: 'shop',
        entries: [{ id: 'secret-note', title: 'The helper returns outside', content: 'stolenSecret says outside.' }],
        relations: [{ type: 'REFERENCES_CODE', from: 'secret-note', to: 'shop:src/helper.ts#stolenSecret' }],
      });
      expect((await m.checkCode({ repo })).counts.fresh).toBeGreaterThan(0);
      await rm(join(repo, 'src', 'helper.ts'));
      await symlink(join(outside, 'secret.ts'), join(repo, 'src', 'helper.ts'));
      await rm(join(repo, 'src', 'notes.ts'));
      await symlink(join(outside, 'other.ts'), join(repo, 'src', 'notes.ts'));

      const report = await m.checkCode({ repo });
      const problem = report.problems.find((p) => p.code.id === 'shop:src/helper.ts#stolenSecret');
      expect(problem).toMatchObject({ status: 'orphaned', detail: expect.stringMatching(/is a symlink to .*outside .*not read/) });

      // The diff replaces notes.ts by a link out of the repository: the file it leads to is not read for symbols.
      const bundle = await m.contextForDiff({ repo });
      expect(bundle.changes.filter((c) => c.path === 'src/notes.ts').map((c) => c.change)).toContain('added');
      expect(bundle.changes.flatMap((c) => c.symbols)).not.toContain('outsideOnly');
      expect(bundle.notes.join('\n')).toMatch(/src\/notes\.ts is a symlink to .*other\.ts, outside the repository/);
    });
  });
});
