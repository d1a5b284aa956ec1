/**
 * What is "in effect": every read that claims it (list, core memory, searches, bundles) leaves out
 * the entries a newer one supersedes, honours validity and `asOf` the same way, and never offers
 * the retraction record `forget` leaves. Through the library and the CLI (MCP: mcpServer.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { openMemory, type MemoryEngine } from '../src/index.js';
import { EXAMPLE_FILE, tempDir } from './helpers.js';

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The library on the embedder the CLI uses (the local model), so that both read one store. */
async function withEngine<T>(db: string, fn: (m: MemoryEngine) => Promise<T>): Promise<T> {
  const m = await openMemory({ path: db, env: {} });
  try {
    return await fn(m);
  } finally {
    await m.close();
  }
}

const SUPERSEDED = 'auth-refresh-long-lived';
const SUCCESSOR = 'auth-refresh-rotation';

describe('in effect', () => {
  it('list and core memory leave out superseded entries, and show them as of a time before the successor', async () => {
    const db = await tempDir();
    await withEngine(db, async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const listed = (await m.listEntries({ cores: ['auth-jwt'] })).map((e) => e.id);
      expect(listed).toContain(SUCCESSOR);
      expect(listed).not.toContain(SUPERSEDED);
      const core = await m.coreMemory('auth-jwt');
      expect(core.entries.map((e) => e.id)).not.toContain(SUPERSEDED);
      expect(core.text).not.toContain('Refresh tokens are long-lived and reusable');
      // Before the successor was written (2025-03-02), the older decision was the one in effect.
      const then = (await m.listEntries({ cores: ['auth-jwt'], asOf: new Date('2025-01-01') })).map((e) => e.id);
      expect(then).toContain(SUPERSEDED);
      expect(then).not.toContain(SUCCESSOR);
      // History is still there by id.
      expect((await m.getEntries([SUPERSEDED])).map((e) => e.id)).toEqual([SUPERSEDED]);
    });
    const list = await run('list', '--core', 'auth-jwt', '--json', '--db', db);
    expect(list.code).toBe(EXIT.ok);
    const ids = (JSON.parse(list.out) as { id: string }[]).map((e) => e.id);
    expect(ids).toContain(SUCCESSOR);
    expect(ids).not.toContain(SUPERSEDED);
    const asOf = await run('list', '--core', 'auth-jwt', '--as-of', '2025-01-01', '--json', '--db', db);
    expect((JSON.parse(asOf.out) as { id: string }[]).map((e) => e.id)).toContain(SUPERSEDED);
    const core = await run('core-memory', 'auth-jwt', '--db', db);
    expect(core.code).toBe(EXIT.ok);
    expect(core.out).toContain('Rotate refresh tokens on every use');
    expect(core.out).not.toContain('Refresh tokens are long-lived and reusable');
  });

  it('a retraction left by forget is never a search hit, a bundle entry, or listed as in effect', async () => {
    const db = await tempDir();
    let retraction = '';
    await withEngine(db, async (m) => {
      await m.ingest(EXAMPLE_FILE);
      const forgotten = await m.forget('auth-access-ttl', { reason: 'Access token lifetime is configured per client now.' });
      retraction = forgotten.retractionId!;
      // Words of the retired title and of the reason: the retraction matches both, and is still not offered.
      for (const task of ['Access tokens expire after 15 minutes', 'access token lifetime configured per client']) {
        for (const recipe of ['keyword', 'semantic', 'hybrid', 'find'] as const) {
          const ids = (await m.search(task, { recipe })).map((h) => h.entry.id);
          expect(ids, `${recipe}: ${task}`).not.toContain(retraction);
          expect(ids, `${recipe}: ${task}`).not.toContain('auth-access-ttl');
        }
        const bundle = await m.buildTaskContext(task);
        expect(bundle.entries.map((e) => e.entry.title).filter((t) => t.startsWith('Retired:'))).toEqual([]);
      }
      const related = await m.findRelatedToCode('src/auth/jwks.ts', 'access token lifetime');
      expect(related.map((h) => h.entry.id)).not.toContain(retraction);
      expect((await m.listEntries({ cores: ['auth-jwt'] })).map((e) => e.id)).not.toContain(retraction);
      // Asked for by type, the retractions are listed: the history of what was forgotten and why.
      expect((await m.listEntries({ entryTypes: ['retraction'] })).map((e) => e.title)).toEqual([
        'Retired: Access tokens expire after 15 minutes',
      ]);
      expect((await m.getEntries([retraction]))[0]!.content).toBe('Access token lifetime is configured per client now.');
    });
    const search = await run('search', 'access token lifetime configured per client', '--json', '--db', db);
    expect(search.code).toBe(EXIT.ok);
    expect(search.out).not.toContain(retraction);
    const context = await run('context', 'Access tokens expire after 15 minutes', '--db', db);
    expect(context.out).not.toContain('Retired:');
    const history = await run('list', '--type', 'retraction', '--json', '--db', db);
    expect((JSON.parse(history.out) as { id: string }[]).map((e) => e.id)).toEqual([retraction]);
  });
});
