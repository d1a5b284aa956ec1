/**
 * The code search index on disk as a base (code-search.json) and an append-only log
 * (code-search.log): a re-import appends what changed, a reader applies it, and findCode answers
 * as after a fresh import of the same tree. Real LanceDB and Kuzu in temp folders, real files.
 */
import { appendFile, mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMemory, type MemoryEngine } from '../src/index.js';
import { CODE_SEARCH_FILE, CODE_SEARCH_LOG, openCodeSearch } from '../src/store/codeSearchIndex.js';
import { tempDir, wordHashEmbedder } from './helpers.js';

const FILES: Record<string, string> = {
  'src/auth/refresh.ts': `import { signToken } from './sign.js';

/** Issues a new refresh token and revokes the one presented, so a stolen token works once. */
export function rotateRefreshToken(presented: string): string {
  return signToken(presented + ':next');
}
`,
  'src/auth/sign.ts': `/** Signs claims with the current key. */
export function signToken(claims: string): string {
  return claims;
}
`,
  'src/http/cors.ts': `import { signToken } from '../auth/sign.js';
export function corsHeaders(origin: string) {
  return { 'access-control-allow-origin': origin, token: signToken(origin) };
}
`,
  'tools/retry_policy.py': `"""Backoff for outgoing calls."""


def parse_retry_after(header_value):
    """Reads the Retry-After header of a rate limited response."""
    return int(header_value)
`,
  'tools/clock.py': `def sleep_for(seconds):
    """Waits before the next retry."""
    return seconds
`,
  'cmd/server/main.go': `package main

// StartServer listens for HTTP requests and serves the token refresh endpoint.
func StartServer(addr string) error {
	return nil
}
`,
};

const QUERIES = [
  'rotate the refresh token',
  'retry after rate limit header',
  'cors headers for an origin',
  'sign the token claims',
  'wait before retry sleep',
  'start the http server',
  'throttle outgoing calls with a budget',
];

async function writeTree(dir: string, files: Record<string, string>): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

/**
 * Makes this process read the index's files again, as one that never held it (the loaded index is
 * kept per folder and process, and read again when the base's modification time changes).
 */
async function readAnew(db: string): Promise<void> {
  const at = new Date(Date.now() + 60_000);
  await utimes(join(db, CODE_SEARCH_FILE), at, at);
}

const open = (db: string) => openMemory({ path: db, embedder: wordHashEmbedder(), env: {} });

/** findCode's answers to every query, as a fresh process would give them. */
async function answers(m: MemoryEngine): Promise<unknown[]> {
  return Promise.all(QUERIES.map((q) => m.findCode(q, { limit: 10 })));
}

async function freshAnswers(repo: string): Promise<unknown[]> {
  const m = await open(join(await tempDir(), 'fresh.memcore'));
  try {
    await m.importCode(repo, { codebase: 'api' });
    return await answers(m);
  } finally {
    await m.close();
  }
}

/** The tree after an edit, a deletion and a rename. */
function changed(files: Record<string, string>): Record<string, string> {
  const next = { ...files };
  next['tools/retry_policy.py'] = `${files['tools/retry_policy.py']}

def retry_budget(calls):
    """Throttles outgoing calls with a budget of retries."""
    return calls
`;
  delete next['tools/clock.py'];
  next['src/http/headers.ts'] = next['src/http/cors.ts']!;
  delete next['src/http/cors.ts'];
  return next;
}

describe('code search log: one changed file is appended, not the whole index rewritten', () => {
  it('a re-import with an edited, a deleted and a renamed file appends to the log and answers as a fresh import', async () => {
    const dir = await tempDir();
    const repo = join(dir, 'repo');
    const db = join(dir, 'db.memcore');
    await writeTree(repo, FILES);
    const m = await open(db);
    try {
      await m.importCode(repo, { codebase: 'api' });
      const base = await stat(join(db, CODE_SEARCH_FILE));
      const before = await answers(m); // this process now holds the index
      expect(before).toEqual(await freshAnswers(repo));

      await writeTree(repo, changed(FILES));
      const r = await m.importCode(repo, { codebase: 'api' });
      expect(r.files).toEqual({ read: 2, unchanged: 3, removed: 2 });
      // the base is as it was; the change went to the log
      expect((await stat(join(db, CODE_SEARCH_FILE))).mtimeMs).toBe(base.mtimeMs);
      const log = (await readFile(join(db, CODE_SEARCH_LOG), 'utf8')).trimEnd().split('\n');
      expect(log).toHaveLength(5); // the header, 2 files gone, 2 files read
      const after = await answers(m);
      expect(after).not.toEqual(before);
      expect(after).toEqual(await freshAnswers(repo));
      const hits = await m.findCode('throttle outgoing calls with a budget');
      expect(hits[0]!.code.filePath).toBe('tools/retry_policy.py');
      expect(hits[0]!.symbols).toContain('retry_budget');
      expect(hits.map((h) => h.code.filePath)).not.toContain('src/http/cors.ts');
      expect(hits.map((h) => h.code.filePath)).not.toContain('tools/clock.py');
    } finally {
      await m.close();
    }
    // a process that never held the index reads base and log
    await readAnew(db);
    const again = await open(db);
    try {
      expect(await answers(again)).toEqual(await freshAnswers(repo));
    } finally {
      await again.close();
    }
  });

  it('a process holding the index applies what another appended; a half-written line is skipped and ended', async () => {
    const dir = await tempDir();
    const repo = join(dir, 'repo');
    const db = join(dir, 'db.memcore');
    await writeTree(repo, FILES);
    const m = await open(db);
    try {
      await m.importCode(repo, { codebase: 'api' });
      await writeTree(repo, changed(FILES));
      await m.importCode(repo, { codebase: 'api' });
      const index = await openCodeSearch(db);
      const sizeBefore = index.size;
      // as another process appends: a file, then a record an interrupted append left unfinished
      const doc = {
        codebase: 'api',
        path: 'lib/ledger.rb',
        language: 'ruby',
        lines: 1,
        symbols: [],
        imports: [],
        text: 'def reconcile_ledger; end',
      };
      await appendFile(join(db, CODE_SEARCH_LOG), `${JSON.stringify({ file: doc })}\n{"file":{"codebase":"api","pa`);
      const same = await openCodeSearch(db);
      expect(same).toBe(index); // updated in place, not read again
      expect(same.size).toBe(sizeBefore + 1);
      expect(same.file('api', 'lib/ledger.rb')?.text).toBe('def reconcile_ledger; end');

      // the next append ends the broken line first: every record after it still reads
      await writeFile(join(repo, 'tools/clock.py'), FILES['tools/clock.py']!);
      await m.importCode(repo, { codebase: 'api' });
      const log = await readFile(join(db, CODE_SEARCH_LOG), 'utf8');
      expect(log).toContain('"pa\n{"file"');
      expect((await m.findCode('wait before retry sleep'))[0]!.code.filePath).toBe('tools/clock.py');
    } finally {
      await m.close();
    }
    await readAnew(db);
    const fresh = await open(db);
    try {
      const index = await openCodeSearch(db);
      expect(index.file('api', 'tools/clock.py')).toBeDefined();
      expect(index.file('api', 'lib/ledger.rb')).toBeDefined();
    } finally {
      await fresh.close();
    }
  });

  it('opens a store whose code-search.json is the old single file, and moves it to base and log on the next change', async () => {
    const dir = await tempDir();
    const repo = join(dir, 'repo');
    const db = join(dir, 'db.memcore');
    await writeTree(repo, FILES);
    let m = await open(db);
    await m.importCode(repo, { codebase: 'api' });
    await m.close();
    // what a store written before the log holds: {version, files}, no log id, no log
    const { files } = JSON.parse(await readFile(join(db, CODE_SEARCH_FILE), 'utf8')) as { files: unknown[] };
    await writeFile(join(db, CODE_SEARCH_FILE), JSON.stringify({ version: 1, files }));
    await rm(join(db, CODE_SEARCH_LOG), { force: true });

    m = await open(db);
    try {
      expect(await answers(m)).toEqual(await freshAnswers(repo));
      await writeTree(repo, changed(FILES));
      await m.importCode(repo, { codebase: 'api' });
      // the first change writes a base with a log id; the next appends
      expect(JSON.parse(await readFile(join(db, CODE_SEARCH_FILE), 'utf8'))).toMatchObject({ version: 1, logId: expect.any(String) });
      await writeFile(join(repo, 'src/auth/sign.ts'), `${FILES['src/auth/sign.ts']}\nexport const SIGNING_KEY_TTL = 60;\n`);
      await m.importCode(repo, { codebase: 'api' });
      expect((await readFile(join(db, CODE_SEARCH_LOG), 'utf8')).split('\n')[1]).toContain('"path":"src/auth/sign.ts"');
      expect(await answers(m)).toEqual(await freshAnswers(repo));
    } finally {
      await m.close();
    }
  });

  it('folds the log into a new base once it outgrows its share; a log left by a fold that stopped half way is ignored', async () => {
    const dir = await tempDir();
    const repo = join(dir, 'repo');
    const db = join(dir, 'db.memcore');
    // 30 files of ~150 KB (comments: no symbols to extract): a change of all of them is more than the log may hold (4 MiB)
    const big: Record<string, string> = { ...FILES };
    const body = (i: number, word: string) =>
      Array.from({ length: 3000 }, (_, j) => `// ledger entry ${word}${i}_${j} of the generated table ${word}\n`).join('');
    for (let i = 0; i < 30; i++) big[`gen/table${i}.ts`] = body(i, 'alpha');
    await writeTree(repo, big);
    const m = await open(db);
    try {
      await m.importCode(repo, { codebase: 'api' });
      const { logId } = JSON.parse(await readFile(join(db, CODE_SEARCH_FILE), 'utf8')) as { logId: string };
      big['src/auth/sign.ts'] = `${FILES['src/auth/sign.ts']}\n// rotated\n`;
      await writeFile(join(repo, 'src/auth/sign.ts'), big['src/auth/sign.ts']);
      await m.importCode(repo, { codebase: 'api' });
      const log = join(db, CODE_SEARCH_LOG);
      const staleLog = await readFile(log, 'utf8');
      expect(staleLog.startsWith(`{"base":"${logId}"}\n`)).toBe(true);

      for (let i = 0; i < 30; i++) big[`gen/table${i}.ts`] = body(i, 'omega');
      await writeTree(repo, big);
      await m.importCode(repo, { codebase: 'api' });
      await expect(stat(log)).rejects.toThrow(/ENOENT/);
      const folded = JSON.parse(await readFile(join(db, CODE_SEARCH_FILE), 'utf8')) as { logId: string; files: { path: string }[] };
      expect(folded.logId).not.toBe(logId);
      expect(folded.files).toHaveLength(36);

      // the old log back, as a crash between the new base's rename and the log's removal leaves it: it names the old base
      await writeFile(log, staleLog);
    } finally {
      await m.close();
    }
    await readAnew(db);
    const again = await open(db);
    try {
      const index = await openCodeSearch(db);
      expect(index.size).toBe(36);
      expect(index.file('api', 'gen/table0.ts')!.text).toContain('omega0_0');
      expect(index.file('api', 'src/auth/sign.ts')!.text).toContain('// rotated');
      expect(await answers(again)).toEqual(await freshAnswers(repo));
    } finally {
      await again.close();
    }
  }, 180_000);
});
