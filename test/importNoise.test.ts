/**
 * `memcore import .` on a real-shaped repository: templates, test fixtures, vendored and build
 * folders and changelogs are left out and reported, `--exclude` / `import.exclude` leave out more,
 * HTML comments are not titles, files that are not text are refused, and titles stay unique.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { openMemory } from '../src/index.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

async function write(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

async function run(cwd: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false }, { cwd });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A monorepo as teams have them: docs and decisions worth importing, and the noise beside them. */
const MONOREPO: Record<string, string> = {
  'README.md': '# Shop\n\n## Install <!-- omit in toc -->\n\nRun `pnpm install` at the root.\n',
  'docs/architecture.md': '# Architecture\n\nThree services behind one gateway.\n',
  'docs/adr/0001-use-pnpm.md': '# Use pnpm workspaces\n\n* Status: accepted\n* Date: 2021-05-04\n\nOne lockfile for every package.\n',
  'docs/adr/template.md': '# {title}\n\n* Status: {proposed | accepted}\n',
  'docs/old/notes.md': '# Old notes\n\nKept for the record.\n',
  '.github/PULL_REQUEST_TEMPLATE.md': '# What changed\n\n- [ ] tests\n',
  '.github/ISSUE_TEMPLATE/bug.md': '# Bug\n\nSteps to reproduce.\n',
  'CHANGELOG.md': '# Changelog\n\n## 1.2.0\n\nAdded carts.\n',
  'packages/cart/README.md': '# Cart\n\nKeeps carts for 30 days.\n',
  'packages/cart/CHANGELOG.md': '# Changelog\n\n## 0.3.0\n\nFixed totals.\n',
  'packages/cart/integration-tests/project/docs/adr/0001-fixture.md': '# A fixture decision\n\n* Status: accepted\n',
  'packages/cart/src/__snapshots__/cart.md': '# Snapshot\n\ncart total 3\n',
  'packages/cart/dist/README.md': '# Cart (built copy)\n\nKeeps carts for 30 days.\n',
  'vendor/lib/README.md': '# Vendored lib\n\nNot ours.\n',
};

describe('memcore import on a whole repository', () => {
  it('leaves out templates, fixtures, snapshots, vendored and build folders and changelogs, and says why', async () => {
    const root = join(await tempDir(), 'shop');
    await write(root, MONOREPO);
    const m = await openMemory({ path: join(root, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      const report = await m.importMarkdown([root]);
      const left = Object.fromEntries(report.skipped.map((s) => [s.file.slice(root.length + 1), s.reason]));
      expect(left).toEqual({
        '.github/ISSUE_TEMPLATE/bug.md': 'a template',
        '.github/PULL_REQUEST_TEMPLATE.md': 'a template',
        'CHANGELOG.md': 'a changelog (--changelogs imports them)',
        'docs/adr/template.md': 'a template',
        'packages/cart/CHANGELOG.md': 'a changelog (--changelogs imports them)',
        'packages/cart/dist/README.md': 'in a build or generated folder',
        'packages/cart/integration-tests/project/docs/adr/0001-fixture.md': 'in a test or fixtures folder',
        'packages/cart/src/__snapshots__/cart.md': 'in a test or fixtures folder',
        'vendor/lib/README.md': 'in a vendored folder',
      });
      expect(report.failed).toEqual([]);
      const titles = (await m.listEntries()).map((e) => e.title).sort();
      // The HTML comment is not part of the title (nor of the anchor).
      expect(titles).toEqual(['Architecture', 'Cart', 'Install', 'Old notes', 'Use pnpm workspaces']);
      expect((await m.listEntries()).find((e) => e.title === 'Install')!.source).toBe('README.md#install');

      // Asked for, changelogs come in; an exclude glob leaves a folder out, and what it wrote goes.
      const again = await m.importMarkdown([root], { changelogs: true, exclude: ['docs/old/'] });
      expect(again.skipped.find((s) => s.file.endsWith('docs/old/notes.md'))?.reason).toBe('excluded by "docs/old/"');
      expect(again.skipped.some((s) => s.file.endsWith('CHANGELOG.md'))).toBe(false);
      const now = (await m.listEntries()).map((e) => e.title);
      expect(now).not.toContain('Old notes');
      expect(now).toEqual(expect.arrayContaining(['1.2.0', '0.3.0']));
      await expect(m.importMarkdown([root], { exclude: ['!docs/'] })).rejects.toThrow(/"!docs\/": a glob leaves files out/);
      await expect(m.importMarkdown([root], { exclude: [''] })).rejects.toThrow(/exclude must be a list of non-empty globs/);
      // A file named directly is read whatever its name.
      const named = await m.importMarkdown([join(root, 'docs/adr/template.md')]);
      expect(named).toMatchObject({ skipped: [], files: { imported: 1 } });
    } finally {
      await m.close();
    }
  });

  it('memcore import: --exclude and import.exclude, a summary line of what was left out, --json with each', async () => {
    const root = join(await tempDir(), 'shop');
    await write(root, { ...MONOREPO, 'memcore.config.json': JSON.stringify({ import: { exclude: ['vendor/'] } }) });
    const text = await run(root, 'import', '.', '--exclude', 'docs/old/**', '--exclude', 'packages/cart/README.md');
    expect(text.code).toBe(EXIT.ok);
    expect(text.out).toMatch(/^3 documents: 3 entries added/);
    expect(text.out).toMatch(
      /\nleft out 11 documents: 3 a template; 2 a changelog \(--changelogs imports them\); 2 in a test or fixtures folder; 1 excluded by "docs\/old\/\*\*"; 1 excluded by "packages\/cart\/README\.md"; 1 excluded by "vendor\/"; 1 in a build or generated folder \(e\.g\. \.github\/ISSUE_TEMPLATE\/bug\.md; --json lists each\)$/,
    );
    const json = await run(root, 'import', '.', '--json', '--changelogs');
    expect(json.code).toBe(EXIT.ok);
    const report = JSON.parse(json.out) as { skipped: { file: string; reason: string }[]; files: { imported: number } };
    expect(report.files.imported).toBe(7);
    expect(report.skipped.map((s) => s.reason)).toContain('excluded by "vendor/"');
    expect(report.skipped.some((s) => s.file.endsWith('CHANGELOG.md'))).toBe(false);
    expect((await run(root, 'import', '.', '--exclude')).code).toBe(EXIT.usage);
  });

  it('refuses files that are not text (NUL bytes, invalid UTF-8) with the reason, and imports the rest', async () => {
    const root = join(await tempDir(), 'docs');
    // A PNG named .md, and Latin-1 text: neither is read lossily.
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]);
    await write(root, {
      'diagram.md': png,
      'latin1.md': Buffer.from('# Caf\u00e9 rules\n\nNo d\u00e9cor.\n', 'latin1'),
      'ok.md': '# Fine\n\nPlain text.\n',
    });
    const m = await openMemory({ path: join(root, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      const report = await m.importMarkdown([root]);
      const reasons = Object.fromEntries(report.failed.map((f) => [f.file.slice(root.length + 1), f.error]));
      expect(reasons['diagram.md']).toMatch(/diagram\.md: not a text file \(a NUL byte at offset 8\); skipped/);
      expect(reasons['latin1.md']).toMatch(/latin1\.md: not UTF-8 text/);
      expect((await m.listEntries()).map((e) => e.title)).toEqual(['Fine']);
      expect(JSON.stringify(await m.exportMemory())).not.toContain('\ufffd');
    } finally {
      await m.close();
    }
    const cli = await run(root, 'import', '.', '--db', join(root, '.memcore-cli'));
    expect(cli.code).toBe(EXIT.invalid);
    expect(cli.err).toMatch(/skipped .*diagram\.md: not a text file/);
  });

  it('gives every section a title of its own, even 3,000 alike headings in one file', async () => {
    const root = join(await tempDir(), 'docs');
    const long = 'Configuration option '.repeat(12); // over 200 characters: cut, so alike
    const text = Array.from({ length: 3_000 }, (_, i) => `## ${long}${i}\n\nvalue ${i}\n`).join('\n');
    await write(root, { 'big.md': `# Options\n\n${text}`, 'other.md': '# Options\n\n## Note\n\na\n\n## Note\n\nb\n' });
    const m = await openMemory({ path: join(root, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      const report = await m.importMarkdown([root]);
      expect(report.failed).toEqual([]);
      const all = (await m.listEntries({ limit: 10_000 })).map((e) => e.title);
      expect(all.length).toBe(3_002);
      expect(new Set(all).size).toBe(3_002);
      expect(all).toContain('other.md › Options › Note');
      expect(all).toContain('other.md › Options › Note (2)');
      expect(all.filter((t) => t.startsWith('big.md › Options › Configuration option')).length).toBe(3_000);
    } finally {
      await m.close();
    }
  }, 600_000);
});
