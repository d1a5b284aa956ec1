/**
 * npm run bench:code -- --against-ctags [--repo <git dir or folder>]... [--speed <files>] [--out <name>]
 * How many of the definitions universal-ctags finds import-code's extractors find too (the same
 * name, start line within 2), per language, on real repositories. Only the kinds memcore extracts
 * are compared (functions, methods, classes, structs, interfaces, traits, enums, modules,
 * namespaces, types); fields, variables, macros and enumerators are not. Prints a table and writes
 * bench/results/<out>.json (default code-ctags). Needs `ctags` (Debian: universal-ctags).
 * With --speed <files>: import-code's speed on that many of their files (codeImportSpeed.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractCode, languageOf } from '../src/code/languages/index.js';
import { importSpeed, printSpeed, sourceTrees, type SourceTree, type SpeedRow } from './codeImportSpeed.js';

/** Repositories compared (and copied by --import-speed) when none is given: the ones the code-localization set uses, and a small one per language. */
export const DEFAULT_REPOS = [
  'honojs+hono',
  'pallets+click',
  'spf13+cobra',
  'rust-lang+log',
  'google+gson',
  'jbogard+MediatR',
  'DaveGamble+cJSON',
  'google+leveldb',
  'rack+rack',
  'slimphp+Slim',
  'nvm-sh+nvm',
].map((name) => `/work/.mirror/${name}/repo`);

/** ctags' kinds (full names) that are definitions memcore extracts, by memcore's language name. */
const COMPARED: Record<string, Set<string>> = {
  typescript: new Set(['function', 'class', 'interface', 'enum', 'method', 'namespace']),
  python: new Set(['class', 'function', 'member']),
  go: new Set(['func', 'struct', 'interface', 'type', 'talias']),
  rust: new Set(['function', 'method', 'struct', 'enum', 'interface', 'module', 'typedef']),
  java: new Set(['class', 'interface', 'enum', 'method', 'annotation']),
  csharp: new Set(['class', 'struct', 'interface', 'enum', 'method', 'namespace']),
  c: new Set(['function', 'struct', 'union', 'enum', 'typedef']),
  cpp: new Set(['class', 'struct', 'union', 'enum', 'function', 'namespace', 'typedef']),
  ruby: new Set(['class', 'module', 'method', 'singletonMethod']),
  php: new Set(['class', 'interface', 'trait', 'function', 'namespace']),
  bash: new Set(['function']),
};

/** A symbol's own name: the last part of `A::B#c`, `pkg.Type.Method`, `App\\Models\\User`, without the `~2` of a repeat. */
const ownName = (name: string) =>
  name
    .replace(/~\d+$/, '')
    .split(/::|[.#\\]/)
    .filter((p) => p !== '')
    .at(-1) ?? name;

/** Misses listed per language (MEMCORE_CTAGS_MISSED=n to see more). */
const MISSED_SHOWN = Number(process.env.MEMCORE_CTAGS_MISSED ?? 12);

interface Tag {
  name: string;
  path: string;
  line: number;
  kind: string;
}

interface LanguageRow {
  language: string;
  repos: string[];
  files: number;
  ctags: number;
  found: number;
  share: number;
  /** A few definitions ctags finds and memcore does not, for a person to look at. */
  missed: string[];
}

export async function againstCtags(args: string[]): Promise<void> {
  const repos: string[] = [];
  let out = 'code-ctags';
  let speedFiles = 0;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--repo' && args[i + 1]) repos.push(args[++i]!);
    else if (args[i] === '--speed' && /^[1-9]\d{0,5}$/.test(args[i + 1] ?? '')) speedFiles = Number(args[++i]);
    else if (args[i] === '--out' && /^[\w.-]+$/.test(args[i + 1] ?? '')) out = args[++i]!;
    else if (args[i] !== '--against-ctags') {
      console.error(
        `unknown argument ${args[i]}\n\nusage: npm run bench:code -- --against-ctags [--repo <git dir or folder>]... [--speed <files>] [--out <name>]`,
      );
      process.exit(2);
    }
  }
  try {
    execFileSync('ctags', ['--version'], { stdio: 'pipe' });
  } catch {
    console.error('ctags is not installed (Debian: apt-get install universal-ctags)');
    process.exit(1);
  }
  const list = repos.length > 0 ? repos : DEFAULT_REPOS.filter((r) => existsSync(r));
  const rows = new Map<string, LanguageRow>();
  const work = await mkdtemp(join(tmpdir(), 'memcore-ctags-'));
  const trees: SourceTree[] = [];
  let speed: SpeedRow[] = [];
  try {
    trees.push(...(await sourceTrees(list, work)));
    for (const { name, dir, files } of trees) {
      const tags = ctagsOf(dir);
      for (const path of files) {
        const language = languageOf(path)!;
        const kinds = COMPARED[language];
        if (!kinds) continue;
        // Names ctags makes up for anonymous namespaces, structs and classes are no definitions to find.
        const theirs = (tags.get(path) ?? []).filter((t) => kinds.has(t.kind) && !/^(__anon|AnonymousClass)[0-9a-f]+$/.test(t.name));
        const text = await readFile(join(dir, path), 'utf8');
        const ours = await extractCode(path, text).catch(() => null);
        const byName = new Map<string, number[]>();
        for (const s of ours?.symbols ?? []) {
          if (s.symbol === null) continue;
          for (const n of new Set([ownName(s.symbol), s.symbol.replace(/~\d+$/, '')]))
            byName.set(n, [...(byName.get(n) ?? []), s.startLine]);
        }
        const row = rows.get(language) ?? { language, repos: [], files: 0, ctags: 0, found: 0, share: 0, missed: [] };
        if (!row.repos.includes(name)) row.repos.push(name);
        row.files++;
        for (const t of theirs) {
          row.ctags++;
          const lines = [...(byName.get(t.name) ?? []), ...(byName.get(ownName(t.name)) ?? [])];
          if (lines.some((l) => Math.abs(l - t.line) <= 2)) row.found++;
          else if (row.missed.length < MISSED_SHOWN) row.missed.push(`${name}/${path}:${t.line} ${t.kind} ${t.name}`);
        }
        rows.set(language, row);
      }
    }
    if (speedFiles > 0) {
      await mkdir(join(work, 'speed'));
      speed = await importSpeed(trees, speedFiles, join(work, 'speed'));
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const table = [...rows.values()].map((r) => ({ ...r, share: r.ctags === 0 ? 1 : r.found / r.ctags }));
  console.log(`\nDefinitions universal-ctags finds that import-code finds too (same name, start line ±2)\n`);
  console.log('| language | repositories | files | ctags definitions | found | share |\n|---|---|---:|---:|---:|---:|');
  for (const r of table)
    console.log(`| ${r.language} | ${r.repos.join(', ')} | ${r.files} | ${r.ctags} | ${r.found} | ${r.share.toFixed(3)} |`);
  for (const r of table) if (r.missed.length > 0) process.stderr.write(`${r.language} missed, e.g.:\n  ${r.missed.join('\n  ')}\n`);
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  if (speed.length > 0) printSpeed(speed, speedFiles);
  await writeFile(
    join(dir, `${out}.json`),
    JSON.stringify({ date: new Date().toISOString(), languages: table, ...(speed.length > 0 ? { speed } : {}) }, null, 2) + '\n',
  );
  const worst = Math.min(...table.map((r) => r.share));
  process.exit(table.length > 0 && worst >= 0.95 ? 0 : 1);
}

/** ctags' definitions under `dir`, by repository-relative path. */
function ctagsOf(dir: string): Map<string, Tag[]> {
  const output = execFileSync('ctags', ['-R', '--output-format=json', '--fields=+nK', '-f', '-', '.'], {
    cwd: dir,
    maxBuffer: 1 << 30,
    encoding: 'utf8',
  });
  const byPath = new Map<string, Tag[]>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const t = JSON.parse(line) as { _type: string; name: string; path: string; line?: number; kind?: string };
    if (t._type !== 'tag' || t.line === undefined || t.kind === undefined) continue;
    const path = t.path.replace(/^\.\//, '');
    byPath.set(path, [...(byPath.get(path) ?? []), { name: t.name, path, line: t.line, kind: t.kind }]);
  }
  return byPath;
}
