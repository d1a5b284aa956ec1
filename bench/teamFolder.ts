/**
 * npm run bench:team [-- --entries 10000 --changed 100]
 * A team memory folder (docs/team.md) of generated entry files in a real git repository, with the
 * offline model: the first open with an empty .memcore (embedding cache cold, then warm: the
 * index removed, the cache table kept); a pull that changes `--changed` files (a checkout of a
 * branch that changed them), then the next buildTaskContext (texts that take longer than
 * memory.embedWaitMs to embed are left to the background) and the time until every vector of the
 * pull is in; and with nothing changed, the per-call
 * check and a buildTaskContext; with the offline model, a cold CLI call (`memcore context`, a process)
 * through a running `memcore serve`. Prints a table and writes bench/results/team-<entries>.json.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemory, type MemoryEngine } from '../src/index.js';
import type { TeamSyncReport } from '../src/team/teamFolder.js';
import { benchOptions, wordHashEmbedder } from './synthetic.js';

const USAGE = `usage: npm run bench:team -- [--entries 10000] [--changed 100] [--embedder local|hash] [--out <name>]

  --entries <n>   entry files in the folder, 10 to 100000 (default 10000), in 20 cores
  --changed <n>   files the pull changes, 1 to --entries (default 100)
  --embedder <e>  local: the offline model (default); hash: word hashing, to time the folder's own
                  work (scan, parse, index) without the model
  --out <name>    bench/results/<name>.json (default team-<entries>)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;
const values = benchOptions(
  USAGE,
  {
    entries: { type: 'string', default: '10000' },
    changed: { type: 'string', default: '100' },
    embedder: { type: 'string', default: 'local' },
    out: { type: 'string' },
  },
  (v) =>
    (v.embedder === 'local' || v.embedder === 'hash') &&
    Number.isInteger(Number(v.entries)) &&
    Number(v.entries) >= 10 &&
    Number(v.entries) <= 100_000 &&
    Number.isInteger(Number(v.changed)) &&
    Number(v.changed) >= 1 &&
    Number(v.changed) <= Number(v.entries),
);
const entries = Number(values.entries);
const changed = Number(values.changed);
const WORDS =
  'token refresh rotation family revoke session cookie database migration column index lock retry payment idempotency key header version contract deprecation sunset error problem json logging trace queue worker cache eviction schema'.split(
    ' ',
  );
const words = (seed: number, n: number) =>
  Array.from({ length: n }, (_, j) => WORDS[(seed * 7 + j * 13 + (seed >> 3)) % WORDS.length]).join(' ');
const entryPath = (i: number) => join('memory', `core-${i % 20}`, `entry-${i}.md`);
const entryText = (i: number, edit = '') =>
  `---\nmemcore: 1\nid: entry-${i}\ntitle: ${words(i, 5)} ${i}\ntype: lesson\ntags: [bench]\n---\n\n${words(i * 31, 50)} (entry ${i}${edit}).\n`;
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { cwd, stdio: 'pipe' });

// Every timing on a shared machine is loaded: the load average before and after goes with the results.
const loadBefore = loadavg().map((x) => Number(x.toFixed(2)));
const root = await mkdtemp(join(tmpdir(), 'memcore-bench-team-'));
const repo = join(root, 'repo');
const db = join(repo, '.memcore');
const rows: { run: string; ms: number; detail: string }[] = [];
const row = (run: string, ms: number, detail: string) => {
  rows.push({ run, ms, detail });
  process.stderr.write(`${run}: ${ms.toFixed(ms < 10 ? 3 : 0)} ms  ${detail}\n`);
};
let memory: MemoryEngine | undefined;
try {
  await mkdir(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  await writeFile(join(repo, '.gitignore'), '.memcore/\n');
  for (let i = 0; i < entries; i++) {
    await mkdir(join(repo, entryPath(i), '..'), { recursive: true });
    await writeFile(join(repo, entryPath(i)), entryText(i));
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'memory');
  git(repo, 'checkout', '-qb', 'pulled');
  for (let i = 0; i < changed; i++) {
    const at = Math.floor((i * entries) / changed);
    await writeFile(join(repo, entryPath(at)), entryText(at, `, changed by the pull`));
  }
  git(repo, 'commit', '-qam', 'memory: a teammate');
  git(repo, 'checkout', '-q', 'main');

  const open = async (run: string) => {
    const t = performance.now();
    memory = await openMemory({ path: db, env: {}, ...(values.embedder === 'hash' ? { embedder: wordHashEmbedder(384) } : {}) });
    const sync = (await memory.memoryFolder())!.lastSync!;
    row(run, performance.now() - t, `${sync.files.total} files, ${sync.embedded} embedded, ${sync.fromCache} from the cache`);
  };
  await open('first open, empty .memcore, cache cold');
  await memory!.close();
  // The index removed, the embedding cache kept: a fresh clone on a machine that embedded these texts.
  for (const name of await readdir(db)) if (name !== 'lance') await rm(join(db, name), { recursive: true });
  await rm(join(db, 'lance', 'entries.lance'), { recursive: true });
  await open('first open, empty index, cache warm');

  const task = 'how are refresh tokens rotated and revoked';
  let t = performance.now();
  await memory!.buildTaskContext(task);
  row('buildTaskContext, first', performance.now() - t, '');

  git(repo, 'merge', '-q', '--ff-only', 'pulled');
  t = performance.now();
  const bundle = await memory!.buildTaskContext(task);
  const answered = performance.now() - t;
  const team = (memory as unknown as { team: { changed(): boolean; lastSync: TeamSyncReport } }).team;
  const pulled = team.lastSync;
  const phases = Object.entries(pulled.ms);
  const synced = phases.reduce((n, [, ms]) => n + ms, 0);
  row(
    `pull of ${changed} changed files, next buildTaskContext`,
    answered,
    `${pulled.files.read} files read, ${pulled.embedded} embedded in time, ${pulled.deferred} left to the background; ` +
      `sync ${synced.toFixed(0)} ms (${phases.map(([k, ms]) => `${k} ${ms.toFixed(0)}`).join(', ')}), the rest the query; ` +
      `${bundle.entries.length} entries${bundle.notes?.some((n) => /still being embedded/.test(n)) ? ', a note says how many are pending' : ''}`,
  );
  // The vectors left to the background are written by a catch-up of their own; polled here.
  while ((await memory!.memoryFolder())!.pendingVectors > 0) await new Promise((r) => setTimeout(r, 20));
  row(`  until every vector of the pull is in`, performance.now() - t, `from the pull's first call`);
  // A checkout of the commit already there (main was fast-forwarded to it): git's index is touched
  // and nothing else, so this times the sync's full rescan (a stat per file) with nothing to read.
  git(repo, 'checkout', '-q', 'main');
  t = performance.now();
  await memory!.memoryFolder();
  row(`checkout back: the sync alone`, performance.now() - t, `${team.lastSync.files.read} files read, ${team.lastSync.embedded} embedded`);
  t = performance.now();
  await memory!.buildTaskContext(task);
  row('then buildTaskContext', performance.now() - t, '');

  const calls = 10_000;
  await memory!.memoryFolder(); // the file watch's events of the pull, if any came after the sync
  t = performance.now();
  for (let i = 0; i < calls; i++) if (team.changed()) throw new Error('nothing changed, yet the check says it did');
  row('nothing changed: per-call check', (performance.now() - t) / calls, `mean of ${calls} calls (a stat per directory)`);
  t = performance.now();
  await memory!.buildTaskContext(`${task} again`);
  row('nothing changed: buildTaskContext', performance.now() - t, 'uncached task');

  if (values.embedder === 'local') {
    // A cold CLI call through a running server: `memcore serve` owns the folder (team mode: it checks
    // the folder before the call), `memcore context` is a process of its own that hands it the call.
    await memory!.close();
    memory = undefined;
    const cli = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
    // Run from here (where tsx resolves); --db names the folder, whose git repository gives the memory folder.
    const server = spawn(process.execPath, ['--import', 'tsx', cli, 'serve', '--db', db, '--no-http', '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let serverErr = '';
    server.stderr!.on('data', (d: Buffer) => (serverErr += d.toString()));
    const exited = new Promise((resolve) => server.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        server.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.trimEnd().endsWith('}')) resolve();
        });
        server.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${serverErr}`)));
      });
      const timed = (args: string[]) => {
        const t0 = performance.now();
        execFileSync(process.execPath, args, { stdio: 'pipe' });
        return performance.now() - t0;
      };
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const calls = Array.from({ length: 5 }, (_, i) => timed(['--import', 'tsx', cli, 'context', `${task} ${i}`, '--db', db, '--json']));
      const bare = Array.from({ length: 5 }, () => timed(['--import', 'tsx', '-e', '0']));
      row('cold CLI call through the running server', median(calls), `memcore context as a process (tsx), median of 5`);
      row('  a bare process start, same loader', median(bare), 'node --import tsx -e 0, median of 5');
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
  }

  const loadAfter = loadavg().map((x) => Number(x.toFixed(2)));
  console.log(`\nload average (1, 5, 15 min): ${loadBefore.join(' ')} before, ${loadAfter.join(' ')} after`);
  console.log('\n| run | ms | |\n|---|---:|---|');
  for (const r of rows) console.log(`| ${r.run} | ${r.ms < 10 ? r.ms.toFixed(3) : r.ms.toFixed(0)} | ${r.detail} |`);
  const out = join(
    fileURLToPath(new URL('./results/', import.meta.url)),
    `${values.out ?? `team-${entries}${values.embedder === 'hash' ? '-hash' : ''}`}.json`,
  );
  await writeFile(
    out,
    JSON.stringify(
      {
        entries,
        changed,
        embedder: values.embedder,
        cores: availableParallelism(),
        node: process.version,
        at: new Date().toISOString(),
        loadAverage: { before: loadBefore, after: loadAfter },
        rows,
      },
      null,
      2,
    ),
  );
  console.log(`\nwrote ${out}`);
} finally {
  await memory?.close();
  await rm(root, { recursive: true, force: true });
}
