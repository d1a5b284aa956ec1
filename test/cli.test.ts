import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { EXAMPLE_FILE, tempDir } from './helpers.js';
import { nodeArgs } from './cliProcess.js';

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('memcore CLI', () => {
  it('ingests, answers context/search/code-refs/golden-path/stats as text and JSON', async () => {
    const db = await tempDir();
    const ingest = await run('ingest', EXAMPLE_FILE, '--db', db);
    expect(ingest).toMatchObject({ code: EXIT.ok, err: '' });
    expect(ingest.out).toMatch(/44 added, 0 updated, 0 unchanged; 44 embedded/);
    expect((await run('ingest', EXAMPLE_FILE, '--db', db)).out).toMatch(/\(nothing changed\)$/);

    const ctx = await run(
      'context',
      'rotate refresh tokens on every use',
      '--db',
      db,
      '--json',
      '--max-entries',
      '3',
      '--core',
      'auth-jwt',
    );
    expect(ctx.code).toBe(EXIT.ok);
    const bundle = JSON.parse(ctx.out) as { entries: { entry: { id: string; coreId: string } }[]; codeRefs: unknown[] };
    expect(bundle.entries).toHaveLength(3);
    expect(bundle.entries[0]!.entry.id).toBe('auth-refresh-rotation');
    expect(bundle.entries.every((e) => e.entry.coreId === 'auth-jwt')).toBe(true);

    const text = await run('context', 'zero downtime NOT NULL column', '--db', db);
    expect(text.out).toMatch(/^Task: zero downtime NOT NULL column/);
    expect(text.out).toMatch(/why: vector #1/);
    expect(text.out).toMatch(/Golden paths/);

    const search = await run('search', 'problem json errors', '--db', db, '--limit', '2', '--json');
    expect((JSON.parse(search.out) as unknown[]).length).toBe(2);

    const refs = await run('code-refs', '--file', 'src/auth/jwks.ts', '--db', db);
    expect(refs.out).toBe(
      'src/auth/jwks.ts:5-40 (jwksHandler)  relevance 0.90  ← [decision] Sign tokens with ES256 and rotate keys through JWKS (auth-es256)',
    );

    const gp = await run('golden-path', 'gp-error-path', '--db', db, '--json');
    expect((JSON.parse(gp.out) as { steps: { order: number }[] }).steps.map((s) => s.order)).toEqual([1, 2, 3]);

    for (const mode of ['semantic', 'matryoshka', 'keyword', 'hybrid', 'find', 'context']) {
      const hits = JSON.parse(
        (await run('search', 'refresh token rotation', '--db', db, '--mode', mode, '--json', '--limit', '3')).out,
      ) as unknown;
      const list = (mode === 'matryoshka' ? (hits as { hits: { entry: { id: string } }[] }).hits : hits) as { entry: { id: string } }[];
      expect(list.map((h) => h.entry.id)).toContain('auth-refresh-rotation');
    }
    expect((await run('search', 'x', '--db', db, '--mode', 'fuzzy')).code).toBe(EXIT.usage);
    const misplaced = await run('search', 'x', '--db', db, '--mode', 'semantic', '--candidates', '50');
    expect([misplaced.code, misplaced.err]).toEqual([
      EXIT.usage,
      expect.stringContaining('--candidates does not apply to --mode semantic'),
    ]);

    const trav = JSON.parse(
      (
        await run(
          'traverse',
          'auth-refresh-rotation',
          '--depth',
          '1',
          '--direction',
          'outgoing',
          '--relations',
          'DEPENDS_ON',
          '--db',
          db,
          '--json',
        )
      ).out,
    ) as { entry: { id: string } }[];
    expect(trav.map((h) => h.entry.id)).toEqual(['auth-revocation-store']);
    expect((await run('traverse', 'nope', '--db', db)).code).toBe(EXIT.notFound);

    expect((await run('golden-paths', 'redis', '--db', db)).out).toMatch(
      /^Refresh-token rotation, request to response \[gp-refresh-flow\]/,
    );
    const related = JSON.parse(
      (await run('related-to-code', 'src/auth/tokenService.ts', 'token reuse', '--db', db, '--json')).out,
    ) as unknown[];
    expect(related).toHaveLength(2);
    const found = JSON.parse((await run('find', 'logout revokes the family', '--db', db, '--json', '--max-entries', '2')).out) as {
      entry: { id: string };
    }[];
    // PageRank lifts the rotation decision that most seeds link to; proximity keeps the best direct hit first.
    expect(found.map((f) => f.entry.id).sort()).toEqual(['auth-logout-everywhere', 'auth-refresh-rotation']);
    const nearest = JSON.parse(
      (await run('find', 'logout revokes the family', '--db', db, '--json', '--max-entries', '2', '--graph-ranking', 'proximity')).out,
    ) as { entry: { id: string } }[];
    expect(nearest[0]!.entry.id).toBe('auth-logout-everywhere');
    const index = JSON.parse((await run('index', '--db', db, '--json')).out) as { ann: boolean; rows: number };
    expect(index).toMatchObject({ ann: false, rows: 44 });

    const stats = JSON.parse((await run('stats', '--db', db, '--json')).out) as { entries: number; goldenPaths: number };
    expect(stats).toMatchObject({ entries: 44, goldenPaths: 3 });

    // The time and importance filters reach the engine; a bundle with nothing in it prints no block.
    const important = JSON.parse(
      (await run('search', 'refresh token', '--db', db, '--mode', 'keyword', '--min-importance', '9', '--json')).out,
    ) as { entry: { importance: number } }[];
    expect(important.length).toBeGreaterThan(0);
    expect(important.every((h) => h.entry.importance >= 9)).toBe(true);
    const none = await run('search', 'refresh token', '--db', db, '--mode', 'keyword', '--created-before', '2000-01-01', '--json');
    expect(JSON.parse(none.out)).toEqual([]);
    const empty = await run('context', 'refresh token', '--db', db, '--format', 'prompt', '--created-before', '2000-01-01', '--no-code');
    expect(empty).toMatchObject({ code: EXIT.ok, out: '', err: 'no relevant memory for this task (the prompt block is empty)' });
    expect((await run('search', 'x', '--db', db, '--created-after', 'yesterday')).code).toBe(EXIT.usage);
  });

  it('exits with stable codes and one line on stderr', async () => {
    const db = await tempDir();
    const bad = join(db, 'bad.yaml');
    await writeFile(bad, 'entries:\n  - { id: x, core_id: c, title: t, content: c, confidence: sure }\n');
    const invalid = await run('ingest', bad, '--db', join(db, 'store'));
    expect(invalid.code).toBe(EXIT.invalid);
    expect(invalid.err).toBe(`memcore: ${bad}: entries[0] (id "x"): field "confidence": must be one of "low", "medium", "high"`);

    expect((await run('golden-path', 'nope', '--db', db)).code).toBe(EXIT.notFound);
    expect((await run('frobnicate')).code).toBe(EXIT.usage);
    expect((await run('context', '--db', db)).code).toBe(EXIT.usage);
    expect((await run('context', 'x', '--bogus')).code).toBe(EXIT.usage);
    expect((await run('search', 'x', '--limit', 'ten', '--db', db)).err).toBe('memcore: --limit must be a whole number, got "ten"');
    expect((await run('code-refs', '--db', db)).code).toBe(EXIT.usage);
    const missing = await run('stats', '--db', join(db, 'nowhere'));
    expect(missing.code).toBe(EXIT.notFound);
    expect(missing.err).toBe(`memcore: no memory at ${join(db, 'nowhere')}; create it with \`memcore ingest <file>\` (or pass --db)`);
    expect(existsSync(join(db, 'nowhere'))).toBe(false);
    const good = join(db, 'good.json');
    await writeFile(good, JSON.stringify({ core_id: 'c', entries: [{ id: 'a', title: 'alpha', content: 'beta' }] }));
    expect((await run('ingest', good, '--db', join(db, 'store'))).code).toBe(EXIT.ok);
    const json = await run('context', 'x', '--depth', '99', '--db', join(db, 'store'), '--json');
    expect(json.code).toBe(EXIT.invalid);
    expect(JSON.parse(json.out)).toEqual({ error: { code: 'INVALID_INPUT', message: 'depth must be an integer from 0 to 10, got 99' } });
    const help = await run('--help');
    expect(help.code).toBe(EXIT.ok);
    expect(help.out).toMatch(/Usage: memcore <command>/);
    const contextHelp = await run('context', '--help');
    expect(contextHelp.code).toBe(EXIT.ok);
    // A command's own help: its usage line and options, not every command's.
    expect(contextHelp.out).toMatch(/^Usage: memcore context \[options\]/);
    expect(contextHelp.out).toContain('--max-entries <n>');
    expect(contextHelp.out).toContain('--min-importance <1..10>');
    expect(contextHelp.out).not.toContain('--strategies');
    expect((await run('traverse', '--help')).out).toContain('--direction outgoing|incoming|both');
    expect((await run('ingest', '-h')).out).toContain('--auto-link');
  });

  it('leaves secrets out of every read unless --include-secret', async () => {
    const db = await tempDir();
    const file = join(db, 'm.json');
    await writeFile(
      file,
      JSON.stringify({
        core_id: 'ops',
        entries: [
          { id: 'deploy', title: 'Deploys read the vault token', content: 'At start.' },
          { id: 'root', title: 'Vault root token', content: 'zqsecret', sensitivity: 'secret' },
        ],
        relations: [{ type: 'DEPENDS_ON', from: 'deploy', to: 'root' }],
      }),
    );
    expect((await run('ingest', file, '--db', join(db, 's'))).code).toBe(EXIT.ok);
    const hidden = await run('show', 'root', '--db', join(db, 's'));
    expect(hidden).toMatchObject({ code: EXIT.notFound, err: 'memcore: no entry with id "root"' });
    expect((await run('show', 'root', '--include-secret', '--db', join(db, 's'))).out).toContain('zqsecret');
    expect((await run('show', 'deploy', '--db', join(db, 's'))).out).not.toContain('root');
    expect(JSON.parse((await run('list', '--json', '--db', join(db, 's'))).out).map((e: { id: string }) => e.id)).toEqual(['deploy']);
    expect(
      JSON.parse((await run('list', '--json', '--include-secret', '--db', join(db, 's'))).out).map((e: { id: string }) => e.id),
    ).toEqual(['deploy', 'root']);
    expect((await run('search', 'vault token', '--db', join(db, 's'))).out).not.toContain('Vault root token');

    // export writes what ingest reads back: the same entries and links in a new folder.
    expect(JSON.parse((await run('export', '--json', '--db', join(db, 's'))).out).entries.map((e: { id: string }) => e.id)).toEqual([
      'deploy',
    ]);
    const exported = await run('export', '--include-secret', '--format', 'jsonl', '--out', join(db, 'all.jsonl'), '--db', join(db, 's'));
    expect(exported).toMatchObject({
      code: EXIT.ok,
      err: `2 entries, 0 code locations, 0 golden paths, 1 relations → ${join(db, 'all.jsonl')}`,
    });
    expect((await run('ingest', join(db, 'all.jsonl'), '--db', join(db, 't'))).out).toMatch(/2 added.*1 relations/);
    expect((await run('show', 'deploy', '--include-secret', '--db', join(db, 't'))).out).toContain('deploy -DEPENDS_ON-> root');
  });

  it('runs as a real process and exits cleanly after writes', async () => {
    const db = await tempDir();
    const file = join(db, 'm.json');
    await writeFile(file, JSON.stringify({ core_id: 'c', entries: [{ id: 'a', title: 'alpha', content: 'beta' }] }));
    const { stdout } = await promisify(execFile)(process.execPath, nodeArgs(['ingest', file, '--db', join(db, 'store'), '--json']));
    expect(JSON.parse(stdout)).toMatchObject([{ entries: { added: 1 } }]);
  });
});
