/**
 * The source tree compiled once per test run, for the processes tests spawn (the CLI, the MCP
 * server, fixture scripts). Run through `node --import tsx`, each of those processes paid tsx's
 * start and its TypeScript transform: 0.3 s of CPU for a command that fails at once, about 1.2 s
 * for an ingest, and the suite starts hundreds of them. esbuild (already a dependency of the page
 * build) writes every file of src/ as JavaScript, file by file (no bundling), in the same layout
 * and at the same depth (dist-test.<hash>/ beside src/), so that paths relative to a module
 * (schema/, package.json, node_modules) resolve as from src/. Built from the working tree at the
 * start of each run (vitest's globalSetup, test/globalSetup.ts), reused while the sources are
 * unchanged, so the tests test the code as it is. MEMCORE_TEST_TSX=1 spawns the TypeScript
 * through tsx instead.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * A link to the newest build, dist-test.<hash of its sources>/: a run that started on an older one
 * keeps it (test/cliProcess.ts resolves the link when a test file loads), and no run ever sees a
 * half-written one.
 */
export const TEST_BUILD = join(ROOT, 'dist-test');
/** Where a build puts the test fixture scripts (test/fixtures/*.ts), beside the tree they import. */
export const FIXTURES_DIR = 'test-fixtures';
const STAMP = '.sources-hash';
/** Builds kept besides the newest, for runs still going on them. */
const KEEP_OLDER = 2;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    return d.isDirectory() ? filesUnder(path) : [path];
  });
}

const isModule = (f: string) => f.endsWith('.ts') && !f.endsWith('.d.ts');

/** What the build reads: src/ (the page's sources included), the fixture scripts, the tsconfig and this file. */
function inputs(): { src: string[]; fixtures: string[]; hash: string } {
  const all = filesUnder(join(ROOT, 'src')).sort();
  const fixtures = readdirSync(join(ROOT, 'test', 'fixtures'))
    .filter(isModule)
    .map((f) => join(ROOT, 'test', 'fixtures', f))
    .sort();
  const hash = createHash('sha256');
  for (const f of [...all, ...fixtures, join(ROOT, 'tsconfig.json'), fileURLToPath(import.meta.url)]) {
    hash.update(relative(ROOT, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return {
    src: all.filter((f) => isModule(f) && !f.startsWith(join(ROOT, 'src', 'web', 'page') + '/')),
    fixtures,
    hash: hash.digest('hex').slice(0, 16),
  };
}

async function compile(src: string[], fixtures: string[], out: string): Promise<void> {
  const { build } = await import('esbuild');
  const common = {
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'silent',
    tsconfig: join(ROOT, 'tsconfig.json'),
  } as const;
  await build({ ...common, entryPoints: src, outbase: join(ROOT, 'src'), outdir: out });
  // The fixtures import the library as '../../src/…'; compiled one level further down, the same
  // modules are at '../…'. Anything else outside test/fixtures/ is not in the build.
  const compiled = await build({ ...common, entryPoints: fixtures, outdir: join(out, FIXTURES_DIR), write: false });
  mkdirSync(join(out, FIXTURES_DIR));
  for (const file of compiled.outputFiles) {
    const outside = /(?:from |import\()"(\.\.\/(?!\.\.\/src\/)[^"]*)"/.exec(file.text);
    if (outside)
      throw new Error(`${file.path}: imports ${outside[1]}, outside test/fixtures/ and src/, which test/testBuild.ts does not build`);
    writeFileSync(file.path, file.text.replaceAll(`"../../src/`, `"../`));
  }
  // The memory page: a compiled server serves the bundle beside its modules (src/web/pageAssets.ts).
  const { buildPage } = await import('../src/web/buildPage.js');
  await buildPage(join(out, 'web', 'page'));
}

/** Builds dist-test.<hash>/ unless it exists, and points dist-test at it. */
export async function buildForTests(): Promise<{ built: boolean; dir: string }> {
  const { src, fixtures, hash } = inputs();
  const dir = `${TEST_BUILD}.${hash}`;
  let built = false;
  if (!existsSync(join(dir, STAMP))) {
    const tmp = `${dir}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    await compile(src, fixtures, tmp);
    writeFileSync(join(tmp, STAMP), hash);
    rmSync(dir, { recursive: true, force: true }); // (a build that never got its stamp)
    try {
      renameSync(tmp, dir);
      built = true;
    } catch (e) {
      // another run, started at the same time, put the same build there first
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(join(dir, STAMP))) throw e;
    }
  }
  // The link replaced in one rename: a process resolving it sees the old build or the new one.
  if (existsSync(TEST_BUILD) && !lstatSync(TEST_BUILD).isSymbolicLink()) rmSync(TEST_BUILD, { recursive: true });
  const link = `${TEST_BUILD}.${process.pid}.link`;
  rmSync(link, { force: true });
  symlinkSync(relative(ROOT, dir), link);
  renameSync(link, TEST_BUILD);
  const older = readdirSync(ROOT)
    .filter((n) => /^dist-test\.[0-9a-f]{16}$/.test(n) && join(ROOT, n) !== dir)
    .map((n) => ({ path: join(ROOT, n), mtime: statSync(join(ROOT, n)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { path } of older.slice(KEEP_OLDER)) rmSync(path, { recursive: true, force: true });
  return { built, dir };
}
