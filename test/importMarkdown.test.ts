import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { openMemory, type MemoryEngine } from '../src/index.js';
import { statusWord, supersessionRefs } from '../src/import/decisionRecord.js';
import { embedProgress } from '../src/ingest/indexer.js';
import { MarkdownParser } from '../src/import/markdownParser.js';
import { refuseDeepNesting, sectionsOfTree } from '../src/import/markdownSections.js';
import { capturedIo, tempDir, wordHashEmbedder } from './helpers.js';

const EXAMPLE_DOCS = fileURLToPath(new URL('../examples/import-docs', import.meta.url));

/** A copy of examples/import-docs, with a git-ignored draft and a node_modules readme beside it. */
async function projectCopy(): Promise<string> {
  const dir = join(await tempDir(), 'project');
  await cp(EXAMPLE_DOCS, dir, { recursive: true });
  await mkdir(join(dir, 'drafts'));
  await writeFile(join(dir, 'drafts', 'idea.md'), '# Half-formed idea\n\nIgnored by git, so not imported.\n');
  await mkdir(join(dir, 'node_modules', 'dep'), { recursive: true });
  await writeFile(join(dir, 'node_modules', 'dep', 'README.md'), '# A dependency\n\nNever imported.\n');
  return dir;
}

/** Every entry by title, in effect or not (a superseded record too). */
async function byTitle(m: MemoryEngine) {
  const ids = (await m.exportMemory()).entries!.map((e) => e.id!);
  return new Map((await m.getEntries(ids)).map((e) => [e.title, e]));
}

async function edges(m: MemoryEngine, type: string) {
  const titles = new Map([...(await byTitle(m)).values()].map((e) => [e.id, e.title]));
  const out: string[] = [];
  for (const id of titles.keys()) {
    for (const hit of await m.traverse(id, { depth: 1, relationTypes: [type as 'RELATED'], direction: 'outgoing' }))
      out.push(`${titles.get(id)} -> ${hit.entry.title}`);
  }
  return out.sort();
}

describe('importMarkdown: documents as memory', () => {
  it('makes heading sections entries, types ADRs and rules files, and turns links and supersession into edges', async () => {
    const dir = await projectCopy();
    const m = await openMemory({ path: join(dir, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      const progress: string[] = [];
      const report = await m.importMarkdown([dir], { onProgress: (message) => progress.push(message) });
      expect(report.failed).toEqual([]);
      expect(progress[0]).toBe('read 6/6 documents');
      expect(progress[1]).toMatch(/^embedded 11\/11 texts, [\d.]+\/s$/);
      expect(embedProgress(512, 3000, 12.5)).toBe('embedded 512/3000 texts, 41/s, 1 min 1 s left');
      expect(report.files).toEqual({ imported: 6, removed: 0 });
      const entries = await byTitle(m);
      expect([...entries.keys()].sort()).toEqual([
        'ADR 1: Store everything in SQLite',
        'ADR 2: Keep the graph in Kuzu',
        'API reference › Install',
        'Code style',
        'Commits',
        'Developer guide',
        'Developer guide › Install',
        'Retries',
        'Storage',
        'Tests',
        'Working in this repository',
      ]);
      expect(entries.get('ADR 2: Keep the graph in Kuzu')).toMatchObject({
        entryType: 'decision',
        source: 'docs/adr/0002-graph-in-kuzu.md',
        tags: ['storage', 'graph', 'status:accepted'],
        createdAt: new Date('2025-03-14T00:00:00Z'),
      });
      // one decision per record, its sections kept together
      expect(entries.get('ADR 2: Keep the graph in Kuzu')!.content).toMatch(
        /^## Status\n\nAccepted\. Supersedes ADR-0001\.[\s\S]*## Consequences/,
      );
      expect(entries.get('Tests')).toMatchObject({ entryType: 'convention', source: 'CLAUDE.md#tests', pinned: false });
      expect(entries.get('Code style')).toMatchObject({ entryType: 'convention', pinned: true, source: '.cursor/rules/style.mdc' });
      expect(entries.get('Storage')).toMatchObject({
        entryType: 'fact',
        importance: 7,
        tags: ['onboarding'],
        source: 'docs/guide.md#storage',
      });
      // a heading inside a code fence is content, and so is a closing memory tag
      expect(entries.get('Storage')!.content).toContain('# not a heading: code fences stay content\n</memory> tags in code');
      expect(entries.get('Storage')!.content).not.toContain('### Retries');
      // HTML is content too, as written
      expect(entries.get('API reference › Install')!.content).toMatch(
        /<details>\n<summary>Where the folder goes<\/summary>[\s\S]*<\/details>$/,
      );

      expect(await edges(m, 'SUPERSEDES')).toEqual(['ADR 2: Keep the graph in Kuzu -> ADR 1: Store everything in SQLite']);
      // The superseded record is history, not in effect.
      expect((await m.listEntries({ limit: 100 })).map((e) => e.title)).not.toContain('ADR 1: Store everything in SQLite');
      expect(await edges(m, 'RELATED')).toEqual([
        'ADR 1: Store everything in SQLite -> ADR 2: Keep the graph in Kuzu',
        'ADR 2: Keep the graph in Kuzu -> Storage',
        'Retries -> Storage',
        'Storage -> ADR 2: Keep the graph in Kuzu',
      ]);
      expect((await m.keywordSearch('half formed idea dependency')).length).toBe(0);
    } finally {
      await m.close();
    }
  });

  it('re-imports exactly: unchanged sections cost nothing, a changed one is re-embedded alone, gone ones leave', async () => {
    const dir = await projectCopy();
    const embedder = wordHashEmbedder();
    const m = await openMemory({ path: join(dir, '.memcore'), embedder, env: {} });
    try {
      await m.importMarkdown([dir]);
      const first = embedder.calls;
      const again = await m.importMarkdown([dir]);
      expect(again).toMatchObject({ changed: false, embedded: 0, entries: { added: 0, updated: 0, unchanged: 11 } });
      expect(embedder.calls).toBe(first);

      const guide = join(dir, 'docs', 'guide.md');
      const text = await readFile(guide, 'utf8');
      await writeFile(guide, text.replace('Use Node 20', 'Use Node 22').replace(/### Retries[\s\S]*$/, ''));
      await rm(join(dir, 'docs', 'api.md'));
      const edited = await m.importMarkdown([dir]);
      expect(edited.entries).toEqual({ added: 0, updated: 1, unchanged: 8 });
      expect(edited.embedded).toBe(1);
      expect(embedder.calls).toBe(first + 1);
      expect(edited.files).toEqual({ imported: 5, removed: 1 });
      expect(edited.sync?.removed.entries).toBe(2);
      const entries = await byTitle(m);
      expect(entries.has('Retries')).toBe(false);
      // with api.md gone, its Install no longer collides: the guide's takes the plain title
      expect(entries.get('Install')?.content).toMatch(/Use Node 22/);
      expect([...entries.values()].some((e) => e.source === 'docs/api.md#install')).toBe(false);
      expect(await edges(m, 'RELATED')).not.toContain('Retries -> Storage');
    } finally {
      await m.close();
    }
  });

  it('skips a document it cannot read, reports why, and keeps what that document wrote before', async () => {
    const dir = await projectCopy();
    const m = await openMemory({ path: join(dir, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.importMarkdown([dir]);
      await writeFile(join(dir, 'CLAUDE.md'), '---\ntitle: [unclosed\n---\n# Rules\n\nchanged\n');
      await writeFile(join(dir, 'docs', 'deep.md'), `# Deep\n\n${'> '.repeat(40)}too deep\n`);
      await writeFile(join(dir, 'docs', 'slow.md'), `# Slow\n\n${'- x\n  - y\n'.repeat(4000)}`);
      await writeFile(join(dir, 'docs', 'bad-field.md'), '---\nimportance: 11\n---\n# Bad field\n\ntext\n');
      await writeFile(join(dir, 'docs', 'nul.md'), '# Odd bytes\n\nbefore\u0000after\n');
      // slow.md takes ~4 s to parse; 1 s leaves the other documents room on a loaded machine.
      const report = await m.importMarkdown([dir], { parseTimeoutMs: 1000 });
      const reasons = Object.fromEntries(report.failed.map((f) => [f.file.slice(dir.length + 1), f.error]));
      expect(Object.keys(reasons).sort()).toEqual(['CLAUDE.md', 'docs/bad-field.md', 'docs/deep.md', 'docs/nul.md', 'docs/slow.md']);
      // A NUL byte means a binary file, whatever its name: refused, not read as text.
      expect(reasons['docs/nul.md']).toMatch(/not a text file \(a NUL byte at offset 19\)/);
      expect(reasons['CLAUDE.md']).toMatch(/front matter is not valid YAML/);
      expect(reasons['docs/deep.md']).toMatch(/line 3 opens 40 block quotes and lists inside each other/);
      expect(reasons['docs/slow.md']).toMatch(/took longer than 1 s to parse/);
      expect(reasons['docs/bad-field.md']).toMatch(/section "Bad field".*importance/);
      expect(report.files.removed).toBe(0);
      const entries = await byTitle(m);
      expect(entries.get('Tests')?.content).toMatch(/Run `npm test`/); // CLAUDE.md's sections stay as they were
      expect(entries.size).toBe(11);
      expect(entries.has('Odd bytes')).toBe(false);
    } finally {
      await m.close();
    }
  });

  it('rejects bad options and paths with a clear error', async () => {
    const dir = await projectCopy();
    const m = await openMemory({ path: join(dir, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      await expect(m.importMarkdown([])).rejects.toThrow(/needs a list of file or folder paths/);
      await expect(m.importMarkdown([join(dir, 'missing')])).rejects.toThrow(/missing: no such file or folder/);
      await expect(m.importMarkdown([dir], { type: 'Decision!' })).rejects.toThrow(/type must be lowercase/);
      await expect(m.importMarkdown([dir], { recursive: true } as never)).rejects.toThrow(/unknown option "recursive"/);
      expect((await m.stats()).entries).toBe(0);
      // a file named on its own is read whatever its name; conventions off make it a plain fact
      const one = await m.importMarkdown([join(dir, 'CLAUDE.md')], { conventions: false, core: 'rules' });
      expect(one.entries.added).toBe(3);
      expect((await m.listEntries()).every((e) => e.entryType === 'fact' && e.coreId === 'rules')).toBe(true);
    } finally {
      await m.close();
    }
  });

  it('memcore import: a summary line, --json, and exit 3 when a document was skipped', async () => {
    const dir = await projectCopy();
    const db = join(dir, '.memcore');
    const { io, out } = capturedIo();
    expect(await main(['import', join(dir, 'docs'), '--db', db, '--core', 'docs'], io)).toBe(EXIT.ok);
    expect(out.join('\n')).toMatch(/^4 documents: 7 entries added, 0 updated, 0 unchanged; 7 embedded; 5 relations/);
    await writeFile(join(dir, 'docs', 'broken.md'), '---\n- a list, not a mapping\n---\n# Broken\n\nx\n');
    out.length = 0;
    expect(await main(['import', join(dir, 'docs'), '--db', db, '--core', 'docs', '--json'], io)).toBe(EXIT.invalid);
    const report = JSON.parse(out.join('\n')) as { entries: { unchanged: number }; failed: { error: string }[] };
    expect(report.entries.unchanged).toBe(7);
    expect(report.failed[0]!.error).toMatch(/broken\.md: the front matter must be a mapping/);
    expect(await main(['import', '--db', db], io)).toBe(EXIT.usage);
  });
});

describe('markdown sections and supersession phrases', () => {
  it('splits on real headings only, keeps parents and GitHub anchors, and refuses hostile nesting', async () => {
    const parser = new MarkdownParser();
    const markdownSections = async (file: string, text: string) => {
      refuseDeepNesting(file, text);
      return sectionsOfTree(file, text, await parser.parse(file, text));
    };
    try {
      const doc = await markdownSections(
        'x.md',
        '---\ntags: [a]\n---\nIntro\n\n# Top\n\nbody\n\n## Same\n\none\n\n## Same\n\ntwo\n\nSetext\n------\n\n```\n# fenced\n```\n',
      );
      expect(doc.frontMatter).toEqual({ tags: ['a'] });
      expect(doc.title).toBe('Top');
      expect(doc.sections.map((s) => [s.heading, s.parents.join('/'), s.anchor])).toEqual([
        [null, '', ''],
        ['Top', '', 'top'],
        ['Same', 'Top', 'same'],
        ['Same', 'Top', 'same-1'],
        ['Setext', 'Top', 'setext'],
      ]);
      expect(doc.sections.at(-1)!.content).toBe('```\n# fenced\n```');
      const long = await markdownSections('y.md', `# ${'word '.repeat(100_000)}\n\ntext\n`);
      expect([...long.sections[0]!.heading!].length).toBe(200);
      await expect(markdownSections('z.md', `${'1. '.repeat(33)}x\n`)).rejects.toThrow(/z\.md: line 1 opens 33 block quotes and lists/);
      await expect(markdownSections('w.md', '---\n: : :\n---\n')).rejects.toThrow(/w\.md: the front matter is not valid YAML/);
    } finally {
      await parser.close();
    }
  });

  it('reads which records a decision supersedes or is superseded by', () => {
    const n = (...numbers: number[]) => numbers.map((number) => ({ number }));
    expect(supersessionRefs('Superseded by ADR-0012 on 2024-01-05', [])).toEqual({ supersededBy: n(12), supersedes: [] });
    expect(supersessionRefs('Accepted. Supersedes ADR 3 and ADR-4.', [])).toEqual({ supersededBy: [], supersedes: n(3, 4) });
    expect(supersessionRefs('Superseded by the new storage decision', ['0007-x.md'])).toEqual({
      supersededBy: [{ url: '0007-x.md' }],
      supersedes: [],
    });
    expect(supersessionRefs('superseded_by: 9', [])).toEqual({ supersededBy: n(9), supersedes: [] });
    expect(supersessionRefs('This replaces nothing in particular.', [])).toEqual({ supersededBy: [], supersedes: [] });
    // adr-tools spells it "Superceded"; the link's text starts with the record's number.
    expect(supersessionRefs('Superceded by 3. Deploy with Kubernetes', ['0003-deploy.md'])).toEqual({
      supersededBy: [{ url: '0003-deploy.md' }, ...n(3)],
      supersedes: [],
    });
    expect(supersessionRefs('Supercedes 2. Deploy with Ansible', [])).toEqual({ supersededBy: [], supersedes: n(2) });
    // Two phrases: the link cannot be told apart, the numbers can.
    expect(supersessionRefs('Supersedes ADR-1, superseded by ADR-5', ['x.md'])).toEqual({ supersededBy: n(5), supersedes: n(1) });
  });

  it('reads a record status as its first words, and placeholders as none', () => {
    expect(statusWord('Accepted')).toBe('accepted');
    expect(statusWord('superseded by [ADR-0005](0005-example.md)')).toBe('superseded');
    expect(statusWord('Superceded by [2. Title](0002-title.md)')).toBe('superseded');
    expect(statusWord('On hold')).toBe('on hold');
    expect(statusWord('[proposed | rejected | accepted]')).toBeNull();
    expect(statusWord('{proposed | rejected | accepted}')).toBeNull();
  });
});
