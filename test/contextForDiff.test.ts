import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { openMemory, parseDiff, type MemoryDocumentRecord } from '../src/index.js';
import { capturedIo, gitIn, shopRepo, wordHashEmbedder } from './helpers.js';

const memory: MemoryDocumentRecord = {
  core_id: 'shop',
  entries: [
    { id: 'create', title: 'Orders are created with their total', content: 'Compute the total once, at creation.', entry_type: 'lesson' },
    { id: 'cancel', title: 'Cancelling is soft', content: 'Mark the order cancelled; never delete it.', entry_type: 'convention' },
    { id: 'legacy', title: 'The old path stays until v3', content: 'v1 clients still call it.', entry_type: 'decision' },
    {
      id: 'orders-file',
      title: 'The orders module owns order state',
      content: 'Nothing else writes order rows.',
      entry_type: 'convention',
    },
    { id: 'refunds', title: 'Refunds go through refundOrder', content: 'refundOrder checks the payment first.', entry_type: 'lesson' },
    { id: 'noise-1', title: 'Deploys happen on Tuesdays', content: 'Release train leaves at noon.' },
    { id: 'noise-2', title: 'Logs are JSON', content: 'One object per line.' },
  ],
  code_locations: [{ id: 'orders-module', codebase_id: 'shop', file_path: 'src/orders.ts' }],
  relations: [
    { type: 'REFERENCES_CODE', from: 'create', to: 'shop:src/orders.ts#createOrder' },
    { type: 'REFERENCES_CODE', from: 'cancel', to: 'shop:src/orders.ts#cancelOrder' },
    { type: 'REFERENCES_CODE', from: 'legacy', to: 'shop:src/legacy.ts#oldPath' },
    { type: 'REFERENCES_CODE', from: 'orders-file', to: 'orders-module' },
  ],
};

async function setup() {
  const repo = await shopRepo();
  const m = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {} });
  await m.importCode(repo, { codebase: 'shop', autoLink: false });
  await m.ingestDocument(memory);
  return { repo, m };
}

const whyCode = (bundle: { entries: { entry: { id: string }; why: { kind: string }[] }[] }) =>
  bundle.entries.map((e) => [e.entry.id, (e.why.find((r) => r.kind === 'code') as { code?: string } | undefined)?.code ?? null]);

describe('contextForDiff: the memory for a change', () => {
  it('puts the entries on the touched symbol first, then the file, for a working-tree edit', async () => {
    const { repo, m } = await setup();
    try {
      const orders = join(repo, 'src', 'orders.ts');
      await writeFile(orders, (await readFile(orders, 'utf8')).replace('cancelled: true', 'cancelled: true, reason'));
      const bundle = await m.contextForDiff({ repo });
      expect(bundle.changes).toEqual([{ path: 'src/orders.ts', oldPath: null, change: 'modified', symbols: ['cancelOrder'] }]);
      expect(whyCode(bundle).slice(0, 2)).toEqual([
        ['cancel', 'src/orders.ts#cancelOrder'],
        ['orders-file', 'src/orders.ts'],
      ]);
      // other code in the file counts, behind what the change touches
      expect(whyCode(bundle)).toContainEqual(['create', 'src/orders.ts#createOrder']);
      // entries the change does not reach by its code come after every one it does
      const ranks = bundle.entries.map((e) => e.why.some((r) => r.kind === 'code'));
      expect(ranks.indexOf(false) === -1 || ranks.lastIndexOf(true) < ranks.indexOf(false)).toBe(true);
      expect(bundle.task).toMatch(/^Change: modified src\/orders\.ts \(cancelOrder\)\.\n.*cancelled: true, reason/);
    } finally {
      await m.close();
    }
  });

  it('reads added, deleted and renamed files from a range or the index', async () => {
    const { repo, m } = await setup();
    try {
      await writeFile(join(repo, 'src', 'refunds.ts'), 'export function refundOrder(id: string) {\n  return id;\n}\n');
      gitIn(repo, 'add', 'src/refunds.ts');
      const staged = await m.contextForDiff({ repo, staged: true });
      expect(staged.changes).toEqual([{ path: 'src/refunds.ts', oldPath: null, change: 'added', symbols: ['refundOrder'] }]);
      expect(staged.entries[0]!.entry.id).toBe('refunds'); // its words are in the added text
      gitIn(repo, 'commit', '-q', '-m', 'refunds');

      gitIn(repo, 'rm', '-q', 'src/legacy.ts');
      gitIn(repo, 'commit', '-q', '-m', 'drop legacy');
      const deleted = await m.contextForDiff({ repo, range: 'HEAD~1..HEAD' });
      expect(deleted.changes).toEqual([{ path: 'src/legacy.ts', oldPath: null, change: 'deleted', symbols: ['oldPath'] }]);
      expect(whyCode(deleted)[0]).toEqual(['legacy', 'src/legacy.ts#oldPath (deleted)']);
      // its code is gone (orphaned), yet the change is why: it is not demoted as possibly stale
      expect(deleted.codeRefs.find((c) => c.code.id === 'shop:src/legacy.ts#oldPath')?.freshness).toBe('orphaned');
      expect(deleted.entries[0]!.possiblyStale).toBeUndefined();

      gitIn(repo, 'mv', 'src/orders.ts', 'src/order-service.ts');
      gitIn(repo, 'commit', '-q', '-m', 'rename');
      const renamed = await m.contextForDiff({ repo, range: 'HEAD~1' });
      expect(renamed.changes).toEqual([{ path: 'src/order-service.ts', oldPath: 'src/orders.ts', change: 'renamed', symbols: [] }]);
      expect(whyCode(renamed)[0]).toEqual(['orders-file', 'src/order-service.ts (renamed)']);
      expect(whyCode(renamed).map(([id]) => id)).toEqual(expect.arrayContaining(['create', 'cancel']));
    } finally {
      await m.close();
    }
  });

  it('refuses what is not a repository, a revision, or a safe range, with a clear error', async () => {
    const { repo, m } = await setup();
    try {
      await expect(m.contextForDiff({ repo: join(repo, 'src') + '/../..' })).rejects.toThrow(/not a git repository/);
      await expect(m.contextForDiff({ repo, range: 'no-such-rev..HEAD' })).rejects.toThrow(/no-such-rev/);
      await expect(m.contextForDiff({ repo, range: '--output=/tmp/x' })).rejects.toThrow(/is not a revision or range/);
      await expect(m.contextForDiff({ repo, range: 'HEAD', staged: true })).rejects.toThrow(/not both/);
      await expect(m.contextForDiff({ repo })).rejects.toThrow(/the diff is empty/);
      await expect(m.contextForDiff({ repo, branch: 'x' } as never)).rejects.toThrow(/unknown option "branch"/);
    } finally {
      await m.close();
    }
  });

  it('memcore context --diff prints the changes and the bundle; without a task or --diff it is a usage error', async () => {
    const repo = await shopRepo();
    const { io, out } = capturedIo();
    const db = join(repo, '.memcore');
    const file = join(repo, 'memory.json');
    await writeFile(file, JSON.stringify(memory));
    expect(await main(['import-code', repo, '--codebase', 'shop', '--db', db], io)).toBe(EXIT.ok);
    expect(await main(['ingest', file, '--db', db], io)).toBe(EXIT.ok);
    await rm(join(repo, 'src', 'legacy.ts'));
    out.length = 0;
    expect(await main(['context', '--diff', '--repo', repo, '--db', db], io)).toBe(EXIT.ok);
    expect(out[0]).toBe('Changed: deleted src/legacy.ts (oldPath)');
    expect(out.join('\n')).toMatch(/The old path stays until v3[\s\S]*why: references changed code src\/legacy\.ts#oldPath \(deleted\)/);
    expect(await main(['context', '--db', db], io)).toBe(EXIT.usage);
    expect(await main(['context', 'a task', '--repo', repo, '--db', db], io)).toBe(EXIT.usage);
  });
});

describe('parseDiff', () => {
  it('skips binary files and unsafe paths, caps added text, and keeps quoted names', () => {
    const huge = Array.from({ length: 5000 }, (_, i) => `+line ${i}`).join('\n');
    const diff = [
      'commit message text before any file',
      'diff --git a/img.png b/img.png',
      'index 1..2 100644',
      'Binary files a/img.png and b/img.png differ',
      'diff --git a/../etc/passwd b/../etc/passwd',
      '--- a/../etc/passwd',
      '+++ b/../etc/passwd',
      '@@ -1 +1 @@',
      '-x',
      '+y',
      'diff --git "a/we\\nird" "b/we\\nird"',
      '--- "a/we\\nird"',
      '+++ "b/we\\nird"',
      '@@ -0,0 +1 @@',
      '+z',
      'diff --git "a/sp\\303\\244ce.ts" "b/sp\\303\\244ce.ts"',
      '--- "a/sp\\303\\244ce.ts"',
      '+++ "b/sp\\303\\244ce.ts"',
      '@@ -3,2 +3,0 @@',
      '-gone',
      '-gone too',
      'diff --git a/big.ts b/big.ts',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/big.ts',
      '@@ -0,0 +1,5000 @@',
      huge,
    ].join('\n');
    const parsed = parseDiff(diff);
    expect(parsed.skipped).toEqual([
      { path: 'img.png', reason: 'a binary file' },
      { path: '../etc/passwd', reason: 'a path that leaves the repository (..)' },
      { path: 'we\nird', reason: 'a path with control characters' },
    ]);
    expect(parsed.files.map((f) => [f.path, f.change, f.ranges, f.added.length])).toEqual([
      ['späce.ts', 'modified', [{ start: 3, end: 3 }], 0],
      ['big.ts', 'added', [{ start: 1, end: 5000 }], 400],
    ]);
  });
});
