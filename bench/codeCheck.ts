/**
 * npm run bench:code [-- --package openai --entries 2000 --diffs 20]
 * `memcore check` and `context --diff` on a real codebase: an installed npm package's sources
 * copied into a git repository in a temp folder, imported with import-code, and referenced by
 * generated entries. Times import-code, a cold and a warm check, check after five files changed,
 * and contextForDiff on that change. Prints a table and writes bench/results/code-<package>.json.
 * With --against-ctags: the extractors against universal-ctags on real repositories (ctagsCompare.ts).
 * With --import-speed <files>: import-code of that many files copied from them (codeImportSpeed.ts).
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemory, type Embedder } from '../src/index.js';
import { mulberry32 } from '../src/embed/matryoshka.js';
import { benchOptions, stats } from './synthetic.js';

const USAGE = `usage: npm run bench:code -- [--package openai] [--entries 2000] [--diffs 20] [--out <name>]
       npm run bench:code -- --against-ctags [--repo <git dir or folder>]... [--speed <files>] [--out <name>]
       npm run bench:code -- --import-speed <files> [--repo <git dir or folder>]... [--out <name>]

  --package <name>  an installed package whose sources are the codebase (default openai)
  --entries <n>     entries that reference a symbol each, 1 to 100000 (default 2000)
  --diffs <n>       contextForDiff calls timed, 1 to 1000 (default 20)
  --out <name>      bench/results/<name>.json (default code-<package>)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;
if (process.argv.includes('--import-speed')) {
  const [{ importSpeedMain }, { DEFAULT_REPOS }] = await Promise.all([import('./codeImportSpeed.js'), import('./ctagsCompare.js')]);
  await importSpeedMain(process.argv.slice(2), DEFAULT_REPOS);
  process.exit(0);
}
if (process.argv.includes('--against-ctags')) {
  const { againstCtags } = await import('./ctagsCompare.js');
  await againstCtags(process.argv.slice(2));
}
const values = benchOptions(
  USAGE,
  {
    package: { type: 'string', default: 'openai' },
    entries: { type: 'string', default: '2000' },
    diffs: { type: 'string', default: '20' },
    out: { type: 'string' },
  },
  (v) =>
    /^(@[\w.-]+\/)?[\w.-]+$/.test(v.package!) &&
    Number.isInteger(Number(v.entries)) &&
    Number(v.entries) >= 1 &&
    Number(v.entries) <= 100_000 &&
    Number.isInteger(Number(v.diffs)) &&
    Number(v.diffs) >= 1 &&
    Number(v.diffs) <= 1000,
);
const pkg = values.package!;
const source = fileURLToPath(new URL(`../node_modules/${pkg}`, import.meta.url));

/** Words hashed into 64 dimensions: the bench times code work, not a model. */
const hashEmbedder: Embedder = {
  id: 'bench:word-hash-64',
  dimensions: 64,
  truncatable: true,
  cacheVectors: false,
  async embed(texts) {
    return texts.map((t) => {
      const v = new Float32Array(64);
      for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 64]! += 1;
      v[0]! += 0.01;
      return v;
    });
  },
};

const root = await mkdtemp(join(tmpdir(), 'memcore-bench-code-'));
const repo = join(root, 'repo');
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=B', ...args], { cwd: repo, stdio: 'pipe', maxBuffer: 1 << 28 });
const time = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const r = await f();
  return [r, performance.now() - t];
};
try {
  await mkdir(repo);
  await cp(source, repo, { recursive: true, filter: (p) => !p.includes('/node_modules/', source.length) });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'import');
  const memory = await openMemory({ path: join(root, '.memcore'), embedder: hashEmbedder, env: {} });
  const rows: { step: string; ms: number; note: string }[] = [];
  const note = (step: string, ms: number, text: string) => {
    rows.push({ step, ms, note: text });
    process.stderr.write(`${step}: ${ms.toFixed(0)} ms, ${text}\n`);
  };

  const [imported, importMs] = await time(() => memory.importCode(repo, { codebase: 'pkg', autoLink: false }));
  note('import-code', importMs, `${imported.files.read} files, ${imported.codeLocations} locations`);
  const symbols = (await memory.exportMemory()).code_locations!.filter((c) => c.symbol !== undefined);
  const random = mulberry32(7);
  const count = Number(values.entries);
  const picked = Array.from({ length: count }, () => symbols[Math.floor(random() * symbols.length)]!);
  await memory.ingestDocument({
    core_id: 'pkg',
    entries: picked.map((c, i) => ({
      id: `e${i}`,
      title: `Lesson ${i} about ${c.symbol}`,
      content: `${c.symbol} in ${c.file_path}: remember case ${i}.`,
    })),
    relations: picked.map((c, i) => ({ type: 'REFERENCES_CODE' as const, from: `e${i}`, to: c.id! })),
  });

  const [cold, coldMs] = await time(() => memory.checkCode({ repo }));
  note('check, cold (every file parsed)', coldMs, `${cold.locations} locations: ${JSON.stringify(cold.counts)}`);
  const [, warmMs] = await time(() => memory.checkCode({ repo }));
  note('check, warm (files unchanged)', warmMs, 'stat per file, parse cache hit');

  // Five files change: a line added at the top of each (every symbol in them moves).
  const changed = [...new Set(picked.map((c) => c.file_path))].slice(0, 5);
  for (const file of changed) await writeFile(join(repo, file), `// changed for the bench\n${await readFile(join(repo, file), 'utf8')}`);
  const [after, afterMs] = await time(() => memory.checkCode({ repo }));
  note('check, 5 files changed', afterMs, JSON.stringify(after.counts));

  const diffTimes: number[] = [];
  let last = 0;
  for (let i = 0; i < Number(values.diffs); i++) {
    const [bundle, ms] = await time(() => memory.contextForDiff({ repo }, { maxEntries: 8 }));
    diffTimes.push(ms);
    last = bundle.entries.length;
  }
  const d = stats(diffTimes);
  note('context --diff (5 files), p50', d.p50, `p95 ${d.p95.toFixed(0)} ms, first ${diffTimes[0]!.toFixed(0)} ms, ${last} entries`);
  await memory.close();

  console.log(
    `\nmemcore check and context --diff on ${pkg} (${imported.files.read} files, ${imported.codeLocations} code locations, ${count} entries), ${availableParallelism()} cores\n`,
  );
  console.log('| step | ms | |\n|---|---|---|');
  for (const r of rows) console.log(`| ${r.step} | ${r.ms.toFixed(0)} | ${r.note} |`);
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, `${values.out ?? `code-${pkg.replace(/[@/]/g, '_')}`}.json`),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        package: pkg,
        files: imported.files.read,
        locations: imported.codeLocations,
        entries: count,
        cores: availableParallelism(),
        rows,
        diffMs: diffTimes,
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
process.exit(0);
