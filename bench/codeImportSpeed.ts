/**
 * import-code's speed on a repository of `count` code files copied round-robin from real
 * repositories (ctagsCompare.ts's `--speed`, or alone: `npm run bench:code -- --import-speed 5000`).
 * Times a cold import, a re-run with nothing changed, one file changed, one file deleted and one
 * renamed, each in a fresh process as `memcore import-code` runs (word-hash embedder; the process's
 * start and the database's open are counted in `process ms`, not in `ms`).
 */
import { execFileSync, execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasExtractor } from '../src/code/languages/index.js';
import { walkFiles } from '../src/import/walkFiles.js';

export interface SpeedRow {
  step: string;
  /** Wall time of importCode. */
  ms: number;
  /** CPU time of the process during importCode (user + system, every thread): what the run costs on a machine others share. */
  cpuMs: number;
  /** Wall time of the whole process: node's start, the open, importCode, the close. */
  processMs: number;
  note: string;
}

export interface SourceTree {
  name: string;
  dir: string;
  /** Code files, relative to `dir`. */
  files: string[];
}

/** The code files of git directories (mirrors, checked out at HEAD into `work`) or folders. */
export async function sourceTrees(sources: string[], work: string): Promise<SourceTree[]> {
  const trees: SourceTree[] = [];
  for (const source of sources) {
    const name = basename(source) === 'repo' ? basename(join(source, '..')) : basename(source);
    let dir = source;
    // A bare git directory (a mirror) is checked out at HEAD first.
    if (!existsSync(join(source, '.git')) && existsSync(join(source, 'HEAD')) && statSync(source).isDirectory()) {
      dir = join(work, name);
      await mkdir(dir);
      execFileSync('sh', ['-c', `git --git-dir="$0" archive HEAD | tar -x -C "$1"`, source, dir]);
    }
    const files = (await walkFiles([dir], hasExtractor, [])).map((f) => relative(dir, f).split(sep).join('/'));
    trees.push({ name, dir, files });
  }
  return trees;
}

const git = (repo: string, ...a: string[]) =>
  execFileSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=B', ...a], { cwd: repo, stdio: 'pipe' });

/** One import-code in a child process: what it reports, and how long the process took. */
function importInChild(repo: string, db: string): Promise<SpeedRow & { files: { read: number; unchanged: number; removed: number } }> {
  const child = fileURLToPath(new URL('./codeImportChild.ts', import.meta.url));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', child, repo, db], { maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`import-code failed: ${stderr}`));
      const r = JSON.parse(stdout) as SpeedRow & { files: { read: number; unchanged: number; removed: number } };
      resolve({ ...r, processMs: performance.now() - started });
    });
  });
}

/** import-code of `count` code files copied from `trees`: cold, unchanged, one file changed, deleted, renamed. */
export async function importSpeed(trees: SourceTree[], count: number, work: string): Promise<SpeedRow[]> {
  const sources = trees.flatMap((t) => t.files.map((f) => ({ from: join(t.dir, f), to: `${t.name}/${f}` })));
  if (sources.length === 0) return [];
  const repo = join(work, 'repo');
  for (let i = 0; i < count; i++) {
    const s = sources[i % sources.length]!;
    const to = join(repo, `copy${Math.floor(i / sources.length)}`, s.to);
    await mkdir(join(to, '..'), { recursive: true });
    await writeFile(to, await readFile(s.from));
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'copies');
  const db = join(work, 'speed.memcore');
  const rows: SpeedRow[] = [];
  const timed = async (step: string) => {
    const r = await importInChild(repo, db);
    rows.push({ step, ms: r.ms, cpuMs: r.cpuMs, processMs: r.processMs, note: r.note });
    process.stderr.write(
      `${step}: ${r.ms.toFixed(0)} ms (${r.cpuMs.toFixed(0)} ms CPU; process ${r.processMs.toFixed(0)} ms), ${r.note}\n`,
    );
  };
  await timed('first import');
  await timed('again, nothing changed');
  const one = join(repo, 'copy0', sources[0]!.to);
  await writeFile(one, `${await readFile(one, 'utf8')}\n`);
  await timed('again, one file changed');
  await rm(join(repo, 'copy0', sources[1]!.to));
  await timed('again, one file deleted');
  const moved = join(repo, 'copy0', sources[2]!.to);
  await rename(moved, moved.replace(/(\.\w+)$/, '_renamed$1'));
  await timed('again, one file renamed');
  return rows;
}

/** `npm run bench:code -- --import-speed <files> [--repo <git dir or folder>]... [--out <name>]` */
export async function importSpeedMain(args: string[], defaultRepos: string[]): Promise<void> {
  const repos: string[] = [];
  let out = 'code-import-speed';
  let count = 0;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--repo' && args[i + 1]) repos.push(args[++i]!);
    else if (args[i] === '--import-speed' && /^[1-9]\d{0,5}$/.test(args[i + 1] ?? '')) count = Number(args[++i]);
    else if (args[i] === '--out' && /^[\w.-]+$/.test(args[i + 1] ?? '')) out = args[++i]!;
    else {
      console.error(
        `unknown argument ${args[i]}\n\nusage: npm run bench:code -- --import-speed <files> [--repo <git dir or folder>]... [--out <name>]`,
      );
      process.exit(2);
    }
  }
  const work = await mkdtemp(join(tmpdir(), 'memcore-import-speed-'));
  let rows: SpeedRow[];
  try {
    const trees = await sourceTrees(repos.length > 0 ? repos : defaultRepos.filter((r) => existsSync(r)), work);
    rows = await importSpeed(trees, count, work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  printSpeed(rows, count);
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${out}.json`), JSON.stringify({ date: new Date().toISOString(), speed: rows }, null, 2) + '\n');
}

export function printSpeed(rows: SpeedRow[], count: number): void {
  console.log(
    `\nimport-code of ${count} files (copies of the repositories above), ${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(1)}\n`,
  );
  console.log('| run | ms | CPU ms | process ms | |\n|---|---:|---:|---:|---|');
  for (const r of rows) console.log(`| ${r.step} | ${r.ms.toFixed(0)} | ${r.cpuMs.toFixed(0)} | ${r.processMs.toFixed(0)} | ${r.note} |`);
}
