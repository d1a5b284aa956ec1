import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { formatContext, openMemory, type MemoryDocumentRecord } from '../src/index.js';
import { STALE_CODE_FACTOR } from '../src/retrieve/score.js';
import { CodeIndex } from '../src/code/codeIndex.js';
import { capturedIo, gitIn, shopRepo, wordHashEmbedder } from './helpers.js';

const memoryOf: MemoryDocumentRecord = {
  core_id: 'shop',
  entries: [
    { id: 'create', title: 'Orders are created with their total', content: 'createOrder computes the total once.' },
    { id: 'cancel', title: 'Cancelling is soft', content: 'cancelOrder marks the order; it never deletes.' },
    { id: 'legacy', title: 'The old path stays until v3', content: 'oldPath serves v1 clients.' },
    { id: 'helper', title: 'The helper answers 42', content: 'helperThing is the answer.' },
  ],
  relations: [
    { type: 'REFERENCES_CODE', from: 'create', to: 'shop:src/orders.ts#createOrder' },
    { type: 'REFERENCES_CODE', from: 'cancel', to: 'shop:src/orders.ts#cancelOrder' },
    { type: 'REFERENCES_CODE', from: 'legacy', to: 'shop:src/legacy.ts#oldPath' },
    { type: 'REFERENCES_CODE', from: 'helper', to: 'shop:src/orders.ts#helperThing' },
  ],
};

describe('check: code references against the repository', () => {
  it('finds moved, drifted and orphaned code, names the entries, and re-anchors moved code with fix', async () => {
    const repo = await shopRepo();
    const m = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.importCode(repo, { codebase: 'shop', autoLink: false });
      await m.ingestDocument(memoryOf);
      expect((await m.checkCode({ repo })).counts).toEqual({ fresh: 6, moved: 0, drifted: 0, orphaned: 0 });

      const orders = join(repo, 'src', 'orders.ts');
      const text = (await readFile(orders, 'utf8'))
        .replace('export function createOrder', '// orders\n\nexport function createOrder') // moved two lines down
        .replace('cancelled: true', 'cancelled: true, at: Date.now()') // drifted
        .replace('helperThing()', 'helperThingRenamed()'); // renamed: orphaned
      await writeFile(orders, text);
      await rm(join(repo, 'src', 'legacy.ts')); // orphaned

      const report = await m.checkCode({ repo, codebase: 'shop' });
      expect(report.counts).toEqual({ fresh: 1, moved: 1, drifted: 1, orphaned: 3 });
      const byId = new Map(report.problems.map((p) => [p.code.id, p]));
      expect(byId.get('shop:src/orders.ts#createOrder')).toMatchObject({
        status: 'moved',
        now: { filePath: 'src/orders.ts', symbol: 'createOrder', startLine: 3, endLine: 5 },
        entries: [{ id: 'create', title: 'Orders are created with their total' }],
      });
      // import-code took the fingerprint at HEAD (the file was committed): the detail says what changed since
      const head = gitIn(repo, 'rev-parse', 'HEAD').trim();
      expect(byId.get('shop:src/orders.ts#cancelOrder')).toMatchObject({
        status: 'drifted',
        detail: `cancelOrder changed: lines 5-7 then, lines 7-9 now; +1 −1 lines since ${head.slice(0, 7)}`,
        entries: [{ id: 'cancel' }],
      });
      expect(byId.get('shop:src/orders.ts#cancelOrder')!.code.revision).toBe(head);
      expect(byId.get('shop:src/orders.ts#helperThing')).toMatchObject({
        status: 'orphaned',
        detail: 'helperThing is no longer in src/orders.ts',
        entries: [{ id: 'helper' }],
      });
      expect(byId.get('shop:src/legacy.ts#oldPath')).toMatchObject({ status: 'orphaned', entries: [{ id: 'legacy' }] });
      expect(byId.get('shop:src/legacy.ts')).toMatchObject({ status: 'orphaned', detail: 'src/legacy.ts is gone', entries: [] });
      expect(report.problems.map((p) => p.status)).toEqual(['orphaned', 'orphaned', 'orphaned', 'drifted', 'moved']);

      const fixed = await m.checkCode({ repo, fix: true });
      expect(fixed.fixed).toBe(1);
      const create = (await m.findByCodeReference({ symbol: 'createOrder' }))[0]!;
      expect(create).toMatchObject({ entry: { id: 'create' }, code: { id: 'shop:src/orders.ts#createOrder', startLine: 3, endLine: 5 } });
      expect((await m.checkCode({ repo })).counts).toMatchObject({ moved: 0, drifted: 1, orphaned: 3 });
    } finally {
      await m.close();
    }
  });

  it('finds a symbol moved to another file by its text, and a hand-written line range by its text', async () => {
    const repo = await shopRepo();
    const m = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.importCode(repo, { codebase: 'shop', autoLink: false });
      const legacy = join(repo, 'src', 'legacy.ts');
      await mkdir(join(repo, 'src', 'v1'));
      await writeFile(join(repo, 'src', 'v1', 'paths.ts'), `// moved here\n${await readFile(legacy, 'utf8')}`);
      await rm(legacy);
      const report = await m.checkCode({ repo });
      expect(report.problems.find((p) => p.code.id === 'shop:src/legacy.ts#oldPath')).toMatchObject({
        status: 'moved',
        now: { filePath: 'src/v1/paths.ts', symbol: 'oldPath', startLine: 2, endLine: 4 },
        detail: 'the same text is now src/v1/paths.ts#oldPath',
      });
      const head = gitIn(repo, 'rev-parse', 'HEAD').trim();
      // written by hand, fingerprinted at ingest from the repository: lines by their text, a symbol given its lines
      await m.ingestDocument(
        {
          code_locations: [
            { id: 'hand-lines', codebase_id: 'shop', file_path: 'src/orders.ts', start_line: 5, end_line: 7 },
            { id: 'hand-symbol', codebase_id: 'shop', file_path: 'src/orders.ts', symbol: 'helperThing' },
          ],
        },
        { repo },
      );
      const stored = (await m.exportMemory()).code_locations!.filter((c) => c.id!.startsWith('hand-'));
      expect(stored.map((c) => [c.id, c.start_line, c.end_line, c.fingerprint?.length, c.revision])).toEqual([
        ['hand-lines', 5, 7, 32, head],
        ['hand-symbol', 9, 11, 32, head],
      ]);
      const orders = join(repo, 'src', 'orders.ts');
      await writeFile(orders, `// two\n// more\n${await readFile(orders, 'utf8')}`);
      const shifted = new Map((await m.checkCode({ repo })).problems.map((p) => [p.code.id, p]));
      expect(shifted.get('hand-lines')).toMatchObject({
        status: 'moved',
        now: { startLine: 7, endLine: 9 },
        detail: 'the same text moved from lines 5-7 to lines 7-9',
      });
      expect(shifted.get('hand-symbol')).toMatchObject({ status: 'moved', now: { startLine: 11, endLine: 13 } });
      await writeFile(orders, (await readFile(orders, 'utf8')).replace('cancelled: true', 'cancelled: false'));
      expect((await m.checkCode({ repo })).problems.find((p) => p.code.id === 'hand-lines')).toMatchObject({
        status: 'drifted',
        detail: 'lines 5-7 hold other text now',
      });

      // a location outside the repository is orphaned, not read
      await m.ingestDocument({
        code_locations: [{ id: 'outside', codebase_id: 'shop', file_path: '../../etc/passwd', start_line: 1, end_line: 1 }],
      });
      expect((await m.checkCode({ repo })).problems.find((p) => p.code.id === 'outside')).toMatchObject({
        status: 'orphaned',
        detail: expect.stringMatching(/not a path inside/),
      });
      await expect(m.checkCode({ repo: join(repo, 'missing') })).rejects.toThrow(/is not a folder/);
      await expect(m.checkCode({ repo, fix: 'yes' } as never)).rejects.toThrow(/fix must be true or false/);
    } finally {
      await m.close();
    }
  });

  it('marks code references in bundles when the engine knows its repo, and ranks entries on gone code lower', async () => {
    const repo = await shopRepo();
    const m = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {}, repo });
    try {
      await m.importCode(repo, { codebase: 'shop', autoLink: false });
      await m.ingestDocument(memoryOf);
      const task = 'the old path oldPath for v1 clients, and helperThing';
      const before = await m.buildTaskContext(task, { maxEntries: 4 });
      expect(before.codeRefs.map((c) => c.freshness)).toEqual(before.codeRefs.map(() => 'fresh'));
      expect((await m.entryDetails('legacy'))!.code.map((c) => c.freshness)).toEqual(['fresh']);
      const legacyBefore = before.entries.find((e) => e.entry.id === 'legacy')!;
      expect(legacyBefore.possiblyStale).toBeUndefined();

      await rm(join(repo, 'src', 'legacy.ts'));
      const after = await m.buildTaskContext(task, { maxEntries: 4 });
      expect(after.cacheHit).toBe(true); // the store did not change; the files did
      expect(after.codeRefs.find((c) => c.code.id === 'shop:src/legacy.ts#oldPath')?.freshness).toBe('orphaned');
      // The entry page shows the same: its code is gone.
      expect((await m.entryDetails('legacy'))!.code.map((c) => c.freshness)).toEqual(['orphaned']);
      const legacyAfter = after.entries.find((e) => e.entry.id === 'legacy')!;
      expect(legacyAfter).toMatchObject({ possiblyStale: true, score: legacyBefore.score * STALE_CODE_FACTOR });
      expect(after.entries.map((e) => e.score)).toEqual([...after.entries.map((e) => e.score)].sort((a, b) => b - a));
      expect(after.notes).toContain('possibly stale, every code reference orphaned: legacy');
      const prompt = formatContext(after);
      expect(prompt).toContain('src/legacy.ts:1-3 (oldPath) (orphaned)');
      expect(prompt).toContain('possibly stale: the code it references is gone');
    } finally {
      await m.close();
    }
    const plain = await openMemory({ path: join(repo, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      expect((await plain.buildTaskContext('the old path for v1 clients')).codeRefs.every((c) => c.freshness === undefined)).toBe(true);
      expect((await plain.entryDetails('legacy'))!.code.every((c) => c.freshness === undefined)).toBe(true);
    } finally {
      await plain.close();
    }
  });

  it("shares one repository-wide symbol index between bundles' checks, and builds its own for a check", async () => {
    const repo = await shopRepo();
    const shared = [new CodeIndex(repo, [], { shareEverywhere: true }), new CodeIndex(repo, [], { shareEverywhere: true })];
    const [first, second] = await Promise.all(shared.map((index) => index.everywhere()));
    // A bundle with a gone file would otherwise walk the whole repository on every call.
    expect(second).toBe(first);
    expect(first!.bySymbol.get('oldPath')?.map((h) => h.filePath)).toEqual(['src/legacy.ts']);
    // A check reads the repository as it is now: a symbol moved since is found where it went.
    await rm(join(repo, 'src', 'legacy.ts'));
    await writeFile(join(repo, 'src', 'old.ts'), 'export function oldPath() {\n  return "old";\n}\n');
    const own = await new CodeIndex(repo).everywhere();
    expect(own).not.toBe(first);
    expect(own.bySymbol.get('oldPath')?.map((h) => h.filePath)).toEqual(['src/old.ts']);
  });

  it('memcore check: a table, --json, and exit 7 with --fail-on when code is stale', async () => {
    const repo = await shopRepo();
    const db = join(repo, '.memcore');
    const { io, out } = capturedIo();
    expect(await main(['import-code', repo, '--codebase', 'shop', '--db', db], io)).toBe(EXIT.ok);
    await rm(join(repo, 'src', 'legacy.ts'));
    out.length = 0;
    expect(await main(['check', '--repo', repo, '--db', db], io)).toBe(EXIT.ok);
    expect(out[0]).toBe(`6 code locations against ${repo}: 4 fresh, 0 moved, 0 drifted, 2 orphaned`);
    expect(out[1]).toBe('orphaned src/legacy.ts:1-3  src/legacy.ts is gone');
    expect(await main(['check', '--repo', repo, '--db', db, '--fail-on', 'orphaned'], io)).toBe(EXIT.stale);
    expect(await main(['check', '--repo', repo, '--db', db, '--fail-on', 'stale'], io)).toBe(EXIT.usage);
    out.length = 0;
    expect(await main(['check', '--repo', repo, '--db', db, '--json', '--codebase', 'shop'], io)).toBe(EXIT.ok);
    expect(JSON.parse(out.join('\n'))).toMatchObject({ locations: 6, counts: { orphaned: 2 } });
  });
});
