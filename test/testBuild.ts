/**
 * The source tree compiled once per test run, for the processes tests spawn (the CLI, the MCP
 * server, fixture scripts). Run through `node --import tsx`, each of those processes paid tsx's
 * start and its TypeScript transform (about 0.4 s of CPU before any work); the suite starts
 * hundreds of them. esbuild (already a dependency of the page build) writes every file of src/
 * to dist-test/ as JavaScript, file by file (no bundling), in the same layout, so that paths
 * relative to a module (schema/, package.json, node_modules) resolve as from src/. Built from
 * the working tree at the start of each run (vitest's globalSetup), skipped when the sources
 * are unchanged, so the tests test the code as it is. MEMCORE_TEST_TSX=1 spawns from the
 * source through tsx instead.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** One level below the root, as src/ is: `new URL('../../schema/…', import.meta.url)` lands on the same file. */
export const TEST_BUILD = join(ROOT, 'dist-test');
/** Test fixture scripts (test/fixtures/*.ts), compiled beside the tree they import. */
export const FIXTURES_BUILD = join(TEST_BUILD, 'test-fixtures');
const STAMP = '.sources-hash';

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
    hash: hash.digest('hex'),
  };
}

/**
 * Builds dist-test/ unless it holds a build of the same sources. Written to a temporary folder and
 * renamed into place, so that a run never spawns from half a build.
 */
export async function buildForTests(): Promise<{ built: boolean; files: number }> {
  const { src, fixtures, hash } = inputs();
  const stamp = join(TEST_BUILD, STAMP);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return { built: false, files: src.length };
  const { build } = await import('esbuild');
  const tmp = `${TEST_BUILD}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const common = {
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'silent',
    tsconfig: join(ROOT, 'tsconfig.json'),
  } as const;
  await build({ ...common, entryPoints: src, outbase: join(ROOT, 'src'), outdir: tmp });
  // The fixtures import the library as '../../src/…'; compiled one level further down, the same
  // modules are at '../…'.
  const out = await build({ ...common, entryPoints: fixtures, outdir: join(tmp, 'test-fixtures'), write: false });
  mkdirSync(join(tmp, 'test-fixtures'));
  for (const file of out.outputFiles) {
    const text = file.text.replaceAll(`from "../../src/`, `from "../`);
    if (text.includes('../src/')) throw new Error(`${file.path}: an import of src/ the test build does not rewrite`);
    writeFileSync(file.path, text);
  }
  // The memory page: a compiled server serves the bundle beside its modules (src/web/pageAssets.ts).
  const { buildPage } = await import('../src/web/buildPage.js');
  await buildPage(join(tmp, 'web', 'page'));
  writeFileSync(join(tmp, STAMP), hash);
  const old = `${TEST_BUILD}.${process.pid}.old`;
  if (existsSync(TEST_BUILD)) renameSync(TEST_BUILD, old);
  renameSync(tmp, TEST_BUILD);
  rmSync(old, { recursive: true, force: true });
  return { built: true, files: src.length };
}
