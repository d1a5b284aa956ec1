import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { openMemory } from '../src/index.js';
import { capturedIo, gitIn, tempDir, wordHashEmbedder } from './helpers.js';

/**
 * One repository per language: three functions (keep, edit, gone), imported and committed; then
 * `keep` moves down, `edit` changes and `gone` is removed. check must tell moved, drifted and
 * orphaned apart and re-anchor with fix; context --diff must name the changed symbols, and the
 * old side's for a deleted file.
 */
interface Case {
  language: string;
  path: string;
  head: string;
  fn: (name: string, value: number) => string;
  tail?: string;
  comment: string;
  /** The symbol of a function as the language qualifies it. */
  symbol: (name: string) => string;
}

const plain = (name: string) => name;
const CASES: Case[] = [
  {
    language: 'python',
    path: 'app/main.py',
    head: '',
    fn: (n, v) => `def ${n}():\n    return ${v}\n\n\n`,
    comment: '# moved',
    symbol: plain,
  },
  {
    language: 'go',
    path: 'main.go',
    head: 'package main\n\n',
    fn: (n, v) => `func ${n}() int {\n\treturn ${v}\n}\n\n`,
    comment: '// moved',
    symbol: plain,
  },
  {
    language: 'rust',
    path: 'src/lib.rs',
    head: '',
    fn: (n, v) => `pub fn ${n}() -> i32 {\n    ${v}\n}\n\n`,
    comment: '// moved',
    symbol: plain,
  },
  {
    language: 'java',
    path: 'src/Main.java',
    head: 'class Main {\n',
    fn: (n, v) => `  int ${n}() {\n    return ${v};\n  }\n\n`,
    tail: '}\n',
    comment: '  // moved',
    symbol: (n) => `Main.${n}`,
  },
  {
    language: 'csharp',
    path: 'src/Main.cs',
    head: 'class Main\n{\n',
    fn: (n, v) => `    int ${n}()\n    {\n        return ${v};\n    }\n\n`,
    tail: '}\n',
    comment: '    // moved',
    symbol: (n) => `Main.${n}`,
  },
  {
    language: 'c',
    path: 'src/main.c',
    head: '#include "main.h"\n\n',
    fn: (n, v) => `int ${n}(void) {\n  return ${v};\n}\n\n`,
    comment: '/* moved */',
    symbol: plain,
  },
  {
    language: 'cpp',
    path: 'src/main.cpp',
    head: 'namespace app {\n\n',
    fn: (n, v) => `int ${n}() {\n  return ${v};\n}\n\n`,
    tail: '}  // namespace app\n',
    comment: '// moved',
    symbol: (n) => `app::${n}`,
  },
  { language: 'ruby', path: 'lib/main.rb', head: '', fn: (n, v) => `def ${n}\n  ${v}\nend\n\n`, comment: '# moved', symbol: plain },
  {
    language: 'php',
    path: 'src/main.php',
    head: '<?php\n\n',
    fn: (n, v) => `function ${n}() {\n  return ${v};\n}\n\n`,
    comment: '// moved',
    symbol: plain,
  },
  {
    language: 'bash',
    path: 'bin/main.sh',
    head: '#!/usr/bin/env bash\n\n',
    fn: (n, v) => `${n}() {\n  echo ${v}\n}\n\n`,
    comment: '# moved',
    symbol: plain,
  },
];

const before = (c: Case) => c.head + c.fn('keep', 1) + c.fn('edit', 2) + c.fn('gone', 3) + (c.tail ?? '');
const after = (c: Case) => c.head + `${c.comment}\n\n` + c.fn('keep', 1) + c.fn('edit', 20) + (c.tail ?? '');

describe.each(CASES)('check and context --diff on a $language repository', (c) => {
  it('tells moved, drifted and orphaned apart, re-anchors with fix, and maps diffs to symbols', async () => {
    const repo = join(await tempDir(), 'repo');
    await mkdir(dirname(join(repo, c.path)), { recursive: true });
    await writeFile(join(repo, c.path), before(c));
    gitIn(repo, 'init', '-q', '-b', 'main');
    gitIn(repo, 'add', '.');
    gitIn(repo, 'commit', '-q', '-m', 'first');
    const id = (name: string) => `app:${c.path}#${c.symbol(name)}`;
    const m = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      const imported = await m.importCode(repo, { codebase: 'app', autoLink: false });
      expect(imported.languages).toEqual({ [c.language]: 1 });
      expect(imported.skipped).toEqual([]);
      const names = ['keep', 'edit', 'gone'];
      await m.ingestDocument({
        core_id: 'app',
        entries: names.map((n) => ({ id: `on-${n}`, title: `About ${n}`, content: `What to know about ${n}.` })),
        relations: names.map((n) => ({ type: 'REFERENCES_CODE' as const, from: `on-${n}`, to: id(n) })),
      });
      const first = await m.checkCode({ repo });
      expect(first.counts).toEqual({ fresh: first.locations, moved: 0, drifted: 0, orphaned: 0 });

      await writeFile(join(repo, c.path), after(c));
      const report = await m.checkCode({ repo, fix: true });
      // (a class or namespace around the functions drifts too: its text changed)
      const status = Object.fromEntries(
        report.problems.filter((p) => p.code.kind !== 'class' && p.code.kind !== 'namespace').map((p) => [p.code.id, p.status]),
      );
      expect(status).toEqual({ [id('keep')]: 'moved', [id('edit')]: 'drifted', [id('gone')]: 'orphaned' });
      expect(report.problems.find((p) => p.code.id === id('edit'))!.detail).toMatch(/changed: .*; \+1 −1 lines since [0-9a-f]{7}$/);
      expect(report.fixed).toBe(1);
      expect((await m.checkCode({ repo })).counts).toMatchObject({ moved: 0, orphaned: 1 });

      gitIn(repo, 'commit', '-qam', 'second');
      const diff = await m.contextForDiff({ repo, range: 'HEAD~1..HEAD' }, { maxEntries: 5 });
      expect(diff.changes).toEqual([
        { path: c.path, oldPath: null, change: 'modified', symbols: expect.arrayContaining([c.symbol('edit')]) },
      ]);
      expect(diff.changes[0]!.symbols).not.toContain(c.symbol('keep'));
      expect(diff.entries.map((e) => e.entry.id)).toContain('on-edit');

      // a deleted file: the symbols come from the old side
      gitIn(repo, 'rm', '-q', c.path);
      gitIn(repo, 'commit', '-qm', 'third');
      const deleted = await m.contextForDiff({ repo, range: 'HEAD~1..HEAD' }, { maxEntries: 5 });
      expect(deleted.changes[0]).toMatchObject({ path: c.path, change: 'deleted' });
      expect(deleted.changes[0]!.symbols).toEqual(expect.arrayContaining([c.symbol('keep'), c.symbol('edit')]));
    } finally {
      await m.close();
    }
  });
});

describe('import-code: what cannot be read is skipped or kept, never fatal', () => {
  it('skips a Latin-1 file, a file nested 10,000 deep, odd names and a 5 MB file with reasons; imports the rest (exit 0)', async () => {
    const repo = join(await tempDir(), 'repo');
    await mkdir(join(repo, 'src'), { recursive: true });
    await writeFile(join(repo, 'src', 'plain.ts'), 'export function plain() {\n  return 1;\n}\n');
    await writeFile(join(repo, 'src', 'latin1.ts'), Buffer.from('export const caf\xe9Latin1 = 1;\n', 'latin1'));
    await writeFile(join(repo, 'src', 'deep.ts'), `export const deep = ${'['.repeat(10_000)}${']'.repeat(10_000)};\n`);
    await writeFile(join(repo, 'src', 'cafe\u0301.ts'), 'export function nfd() {}\n');
    await writeFile(join(repo, 'src', 'new\nline.ts'), 'export function newline() {}\n');
    await writeFile(join(repo, 'src', 'tab\tname.py'), 'def tab():\n    pass\n');
    await writeFile(join(repo, 'src', 'generated.py'), `# generated\n${'X = 1\n'.repeat(900_000)}`);
    await writeFile(join(repo, 'src', 'broken.py'), 'def good():\n    return 1\n\ndef bad(:\n    pass\n');
    await writeFile(join(repo, 'src', 'App.kt'), 'fun main() {}\n');

    const cli = capturedIo();
    const code = await main(['import-code', repo, '--codebase', 'app', '--db', join(repo, '.memcore'), '--json'], cli.io);
    expect(code).toBe(EXIT.ok);
    const r = JSON.parse(cli.out.join('\n')) as {
      skipped: { file: string; reason: string }[];
      partial: { file: string }[];
      fileOnly: Record<string, number>;
      languages: Record<string, number>;
    };
    const reasons = Object.fromEntries(r.skipped.map((s) => [s.file, s.reason]));
    expect(reasons['src/latin1.ts']).toMatch(/not valid UTF-8/);
    expect(reasons['src/deep.ts']).toMatch(/nested too deep/);
    expect(reasons['src/generated.py']).toMatch(/MiB; files over 2 MiB are taken for generated code/);
    expect(reasons[JSON.stringify('src/cafe\u0301.ts')]).toMatch(/not in Unicode NFC/);
    expect(reasons[JSON.stringify('src/new\nline.ts')]).toMatch(/U\+000A/);
    expect(reasons[JSON.stringify('src/tab\tname.py')]).toMatch(/U\+0009/);
    expect(r.partial.map((p) => p.file)).toEqual(['src/broken.py']);
    expect(r.fileOnly).toEqual({ kotlin: 1 });
    expect(r.languages).toEqual({ typescript: 1, python: 1, kotlin: 1 });

    // the CLI's store, opened with the CLI's (local) embedder
    const m = await openMemory({ path: join(repo, '.memcore'), env: {} });
    try {
      const ids = (await m.exportMemory()).code_locations!.map((c) => c.id).sort();
      expect(ids).toEqual([
        'app:src/App.kt',
        'app:src/broken.py',
        'app:src/broken.py#bad',
        'app:src/broken.py#good',
        'app:src/plain.ts',
        'app:src/plain.ts#plain',
      ]);
      // nothing read lossily: no symbol cut at the first byte that is not UTF-8
      expect(ids.some((i) => i!.includes('caf'))).toBe(false);
    } finally {
      await m.close();
    }
  });

  it('links a file to the files it imports, and drops the link when the import goes', async () => {
    const repo = join(await tempDir(), 'repo');
    await mkdir(join(repo, 'pkg'), { recursive: true });
    await writeFile(join(repo, 'pkg', '__init__.py'), '');
    await writeFile(join(repo, 'pkg', 'base.py'), 'class Base:\n    pass\n');
    await writeFile(join(repo, 'pkg', 'main.py'), 'from .base import Base\n\n\nclass Main(Base):\n    pass\n');
    const m = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await m.importCode(repo, { codebase: 'py' })).imports).toBe(1);
      const imports = async () => (await m.exportMemory()).relations!.filter((r) => r.type === 'IMPORTS');
      expect(await imports()).toEqual([{ type: 'IMPORTS', from: 'py:pkg/main.py', to: 'py:pkg/base.py' }]);
      await writeFile(join(repo, 'pkg', 'main.py'), 'class Main:\n    pass\n');
      await m.importCode(repo, { codebase: 'py' });
      expect(await imports()).toEqual([]);
      expect(await readFile(join(repo, 'pkg', 'base.py'), 'utf8')).toContain('class Base');
    } finally {
      await m.close();
    }
  });
});
