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
  'src/payments/capture.ts': `import { ledgerPost } from './ledger.js';

/** Captures an authorised card payment and posts it to the ledger once. */
export function capturePayment(authorisation: string, cents: number): string {
  return ledgerPost(authorisation, cents);
}
`,
  'src/payments/ledger.ts': `/** Appends a double-entry posting to the ledger. */
export function ledgerPost(account: string, cents: number): string {
  return account + ':' + cents;
}
`,
  'src/web/csrf.ts': `import { ledgerPost } from '../payments/ledger.js';
export function csrfToken(session: string) {
  return { token: session.split('').reverse().join(''), audit: ledgerPost(session, 0) };
}
`,
  'jobs/webhook_retry.py': `"""Redelivers webhooks that failed."""


def next_delivery_delay(attempt):
    """Doubles the delay after each failed webhook delivery."""
    return 2 ** attempt
`,
  'jobs/clock.py': `def pause_seconds(seconds):
    """Pauses the worker before the next delivery."""
    return seconds
`,
  'cmd/worker/main.go': `package main

// RunWorker polls the queue and delivers pending webhooks.
func RunWorker(queue string) error {
\treturn nil
}
`,
};

const QUERIES = [
  'capture the card payment',
  'webhook delivery delay after failure',
  'csrf token for a session',
  'post to the ledger',
  'pause the worker before delivery',
  'poll the queue worker',
  'give up redelivery after too many attempts',
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

/** A repository of FILES and the path of a database for it. */
async function setup(): Promise<{ repo: string; db: string }> {
  const dir = await tempDir();
  const repo = join(dir, 'repo');
  await writeTree(repo, FILES);
  return { repo, db: join(dir, 'db.memcore') };
}

/** `check` run on the folder opened as by a process that never held its index. */
async function reopened(db: string, check: (m: MemoryEngine) => Promise<void>): Promise<void> {
  await readAnew(db);
  const m = await open(db);
  try {
    await check(m);
  } finally {
    await m.close();
  }
}

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
  next['jobs/webhook_retry.py'] = `${files['jobs/webhook_retry.py']}

def give_up_after(attempts):
    """Stops redelivery after too many attempts."""
    return attempts > 8
`;
  delete next['jobs/clock.py'];
  next['src/web/tokens.ts'] = next['src/web/csrf.ts']!;
  delete next['src/web/csrf.ts'];
  return next;
}

describe('code search log: one changed file is appended, not the whole index rewritten', () => {
  it('a re-import with an edited, a deleted and a renamed file appends to the log and answers as a fresh import', async () => {
    const { repo, db } = await setup();
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
      const hits = await m.findCode('give up redelivery after too many attempts');
      expect(hits[0]!.code.filePath).toBe('jobs/webhook_retry.py');
      expect(hits[0]!.symbols).toContain('give_up_after');
      expect(hits.map((h) => h.code.filePath)).not.toContain('src/web/csrf.ts');
      expect(hits.map((h) => h.code.filePath)).not.toContain('jobs/clock.py');
    } finally {
      await m.close();
    }
    // a process that never held the index reads base and log
    await reopened(db, async (again) => expect(await answers(again)).toEqual(await freshAnswers(repo)));
  });

  it('a process holding the index applies what another appended; a half-written line is skipped and ended', async () => {
    const { repo, db } = await setup();
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
      await writeFile(join(repo, 'jobs/clock.py'), FILES['jobs/clock.py']!);
      await m.importCode(repo, { codebase: 'api' });
      const log = await readFile(join(db, CODE_SEARCH_LOG), 'utf8');
      expect(log).toContain('"pa\n{"file"');
      expect((await m.findCode('pause the worker before delivery'))[0]!.code.filePath).toBe('jobs/clock.py');
    } finally {
      await m.close();
    }
    await reopened(db, async () => {
      const index = await openCodeSearch(db);
      expect(index.file('api', 'jobs/clock.py')).toBeDefined();
      expect(index.file('api', 'lib/ledger.rb')).toBeDefined();
    });
  });

  it('opens a store whose code-search.json is the old single file, and moves it to base and log on the next change', async () => {
    const { repo, db } = await setup();
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
      await writeFile(join(repo, 'src/payments/ledger.ts'), `${FILES['src/payments/ledger.ts']}\nexport const LEDGER_CURRENCY = 'EUR';\n`);
      await m.importCode(repo, { codebase: 'api' });
      expect((await readFile(join(db, CODE_SEARCH_LOG), 'utf8')).split('\n')[1]).toContain('"path":"src/payments/ledger.ts"');
      expect(await answers(m)).toEqual(await freshAnswers(repo));
    } finally {
      await m.close();
    }
  });

  it('folds the log into a new base once it outgrows its share; a log left by a fold that stopped half way is ignored', async () => {
    const { repo, db } = await setup();
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
      big['src/payments/ledger.ts'] = `${FILES['src/payments/ledger.ts']}\n// reconciled\n`;
      await writeFile(join(repo, 'src/payments/ledger.ts'), big['src/payments/ledger.ts']);
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
    await reopened(db, async (again) => {
      const index = await openCodeSearch(db);
      expect(index.size).toBe(36);
      expect(index.file('api', 'gen/table0.ts')!.text).toContain('omega0_0');
      expect(index.file('api', 'src/payments/ledger.ts')!.text).toContain('// reconciled');
      expect(await answers(again)).toEqual(await freshAnswers(repo));
    });
  }, 180_000);
});
