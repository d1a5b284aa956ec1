/**
 * `memcore eval code-localization`: file-level code localization on real repositories' history
 * (../shared/eval-data/code-localization, see its README). For each task, the repository is checked
 * out at the task's base commit in a git worktree, imported (import-code, incremental from the
 * previous task's commit, and its markdown docs), and `findCode(task)` ranks the files; a task is
 * a hit at k when a (every) file the commit changed is in the first k. Time per task includes
 * the checkout and the imports.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { openMemory, type OpenMemoryOptions } from '../engine/memoryEngine.js';
import { invalidInput, MemcoreError } from '../model/errors.js';
import { DEFAULT_DATA_ROOT } from './adapters/index.js';

const run = promisify(execFile);

interface LocalizationTask {
  id: string;
  repo: string;
  base_commit: string;
  task: string;
  gold_files: string[];
}

export interface LocalizationRow {
  n: number;
  /** Percent of tasks with a gold file in the top k, by k. */
  accAny: Record<number, number>;
  /** Percent of tasks with every gold file in the top k, by k. */
  accAll: Record<number, number>;
}

export interface LocalizationReport {
  ks: number[];
  perRepo: Record<string, LocalizationRow & { bm25?: LocalizationRow; msPerTask: number; importMsPerTask: number; findMsPerTask: number }>;
  overall: LocalizationRow & { bm25?: LocalizationRow; msPerTask: number };
  /** With `misses`: tasks with no gold file in the top `misses`. */
  misses?: { id: string; gold: string[]; top: string[] }[];
}

export interface LocalizationOptions {
  /** Repository name (a folder of the data set: hono, click, cobra) → a clone's git dir or work tree. */
  gitDirs: Record<string, string>;
  data?: string;
  /** Tasks per repository at most (the first ones). */
  limit?: number;
  ks?: number[];
  /** Also import the repository's markdown (its docs) as entries, whose code references count. Default true. */
  docs?: boolean;
  misses?: number;
  engine?: Omit<OpenMemoryOptions, 'path' | 'cache'>;
  onProgress?: (message: string) => void;
}

const pct = (hits: number, n: number) => Math.round((1000 * hits) / Math.max(1, n)) / 10;

async function git(gitDir: string, args: string[], cwd?: string): Promise<string> {
  return (await run('git', [`--git-dir=${gitDir}`, ...args], { maxBuffer: 1 << 26, ...(cwd ? { cwd } : {}) })).stdout;
}

/** The git dir of a clone: the path itself for a bare repository, else its .git. */
function gitDirOf(path: string): string {
  const abs = resolve(path);
  if (existsSync(join(abs, '.git'))) return join(abs, '.git');
  if (existsSync(join(abs, 'HEAD')) && existsSync(join(abs, 'objects'))) return abs;
  throw new MemcoreError(`${path} is not a git repository (no .git, HEAD or objects)`, 'NOT_FOUND');
}

export async function runCodeLocalization(options: LocalizationOptions): Promise<LocalizationReport> {
  const data = resolve(options.data ?? join(DEFAULT_DATA_ROOT, 'code-localization'));
  if (!existsSync(data)) throw invalidInput(`no code-localization data at ${data}; pass --data <dir>`);
  const ks = [...new Set(options.ks ?? [1, 3, 5, 10])].sort((a, b) => a - b);
  const names = Object.keys(options.gitDirs);
  if (names.length === 0)
    throw invalidInput('code-localization needs a clone of each repository: --git-dir <name>=<path> (hono, click, cobra)');
  const progress = options.onProgress ?? (() => undefined);
  const bm25 = JSON.parse(await readFile(join(data, 'bm25-results.json'), 'utf8').catch(() => '{}')) as {
    per_repo?: Record<string, Record<string, number>>;
  };
  const report: LocalizationReport = { ks, perRepo: {}, overall: { n: 0, accAny: {}, accAll: {}, msPerTask: 0 } };
  const misses: NonNullable<LocalizationReport['misses']> = [];
  const hitsAny = new Map<number, number>();
  const hitsAll = new Map<number, number>();
  let totalMs = 0;
  for (const name of names) {
    const file = join(data, name, 'tasks.jsonl');
    if (!existsSync(file)) throw invalidInput(`no tasks for "${name}" at ${file}; the data set has ${names.join(', ')}`);
    const gitDir = gitDirOf(options.gitDirs[name]!);
    let tasks = (await readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as LocalizationTask);
    if (options.limit !== undefined) tasks = tasks.slice(0, options.limit);
    const temp = await mkdtemp(join(tmpdir(), `memcore-codeloc-${name}-`));
    const tree = join(temp, 'tree');
    const memory = await openMemory({ ...options.engine, path: join(temp, 'db'), cache: { ttlMs: 0 } });
    const any = new Map<number, number>();
    const all = new Map<number, number>();
    let importMs = 0;
    let findMs = 0;
    try {
      await git(gitDir, ['worktree', 'add', '--detach', '--quiet', tree, tasks[0]!.base_commit]);
      for (const [i, t] of tasks.entries()) {
        const started = performance.now();
        await git(gitDir, ['checkout', '--detach', '--quiet', '--force', t.base_commit], tree);
        await git(gitDir, ['clean', '-fdxq'], tree);
        await memory.importCode(tree, { codebase: name });
        if (options.docs !== false) await memory.importMarkdown([tree]);
        const imported = performance.now();
        const hits = await memory.findCode(t.task, { limit: Math.max(...ks, options.misses ?? 0) });
        const done = performance.now();
        importMs += imported - started;
        findMs += done - imported;
        const ranked = hits.map((h) => h.code.filePath);
        for (const k of ks) {
          const top = ranked.slice(0, k);
          if (t.gold_files.some((g) => top.includes(g))) any.set(k, (any.get(k) ?? 0) + 1);
          if (t.gold_files.every((g) => top.includes(g))) all.set(k, (all.get(k) ?? 0) + 1);
        }
        if (options.misses && !t.gold_files.some((g) => ranked.slice(0, options.misses).includes(g)))
          misses.push({ id: t.id, gold: t.gold_files, top: ranked.slice(0, options.misses) });
        if ((i + 1) % 10 === 0 || i + 1 === tasks.length) progress(`${name}: ${i + 1}/${tasks.length} tasks`);
      }
    } finally {
      await memory.close();
      await git(gitDir, ['worktree', 'remove', '--force', tree]).catch(() => undefined);
      await rm(temp, { recursive: true, force: true });
    }
    const n = tasks.length;
    const reference = bm25.per_repo?.[tasks[0]!.repo];
    report.perRepo[name] = {
      n,
      accAny: Object.fromEntries(ks.map((k) => [k, pct(any.get(k) ?? 0, n)])),
      accAll: Object.fromEntries(ks.map((k) => [k, pct(all.get(k) ?? 0, n)])),
      ...(reference && options.limit === undefined ? { bm25: bm25Row(reference, ks) } : {}),
      msPerTask: Math.round((importMs + findMs) / n),
      importMsPerTask: Math.round(importMs / n),
      findMsPerTask: Math.round((10 * findMs) / n) / 10,
    };
    for (const k of ks) {
      hitsAny.set(k, (hitsAny.get(k) ?? 0) + (any.get(k) ?? 0));
      hitsAll.set(k, (hitsAll.get(k) ?? 0) + (all.get(k) ?? 0));
    }
    report.overall.n += n;
    totalMs += importMs + findMs;
  }
  const n = report.overall.n;
  report.overall.accAny = Object.fromEntries(ks.map((k) => [k, pct(hitsAny.get(k) ?? 0, n)]));
  report.overall.accAll = Object.fromEntries(ks.map((k) => [k, pct(hitsAll.get(k) ?? 0, n)]));
  report.overall.msPerTask = Math.round(totalMs / n);
  // The published overall row is over the three repositories: shown only when all three ran whole.
  const overall = (bm25 as { overall?: Record<string, number> }).overall;
  if (overall && options.limit === undefined && Object.values(report.perRepo).every((r) => r.bm25) && names.length === 3)
    report.overall.bm25 = bm25Row(overall, ks);
  if (options.misses) report.misses = misses;
  return report;
}

function bm25Row(row: Record<string, number>, ks: number[]): LocalizationRow {
  return {
    n: row.n ?? 0,
    accAny: Object.fromEntries(ks.map((k) => [k, row[`acc_any@${k}`] ?? Number.NaN])),
    accAll: Object.fromEntries(ks.map((k) => [k, row[`acc_all@${k}`] ?? Number.NaN])),
  };
}

/** The report as a table: ours and BM25's per repository and overall. */
export function formatLocalization(report: LocalizationReport): string {
  const { ks } = report;
  const cells = (r: LocalizationRow | undefined, key: 'accAny' | 'accAll') => (r ? ks.map((k) => r[key][k]!.toFixed(1)).join(' / ') : '–');
  const head = `| repository | n | acc_any@${ks.join('/')} | acc_all@${ks.join('/')} | BM25 acc_any | BM25 acc_all | ms/task (import + find) |`;
  const rows = [
    ...Object.entries(report.perRepo).map(
      ([name, r]) =>
        `| ${name} | ${r.n} | ${cells(r, 'accAny')} | ${cells(r, 'accAll')} | ${cells(r.bm25, 'accAny')} | ${cells(r.bm25, 'accAll')} | ${r.msPerTask} (${r.importMsPerTask} + ${r.findMsPerTask}) |`,
    ),
    `| all | ${report.overall.n} | ${cells(report.overall, 'accAny')} | ${cells(report.overall, 'accAll')} | ${cells(report.overall.bm25, 'accAny')} | ${cells(report.overall.bm25, 'accAll')} | ${report.overall.msPerTask} |`,
  ];
  const missed = report.misses?.length
    ? [
        '',
        `missed (${report.misses.length}):`,
        ...report.misses.map((m) => `  ${m.id}: gold ${m.gold.join(', ')}; top ${m.top.slice(0, 5).join(', ')}`),
      ]
    : [];
  return [head, `|${'---|'.repeat(7)}`, ...rows, ...missed].join('\n');
}
