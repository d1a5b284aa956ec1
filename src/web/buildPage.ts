/**
 * Bundles the memory page's script (src/web/page) with esbuild into one file, with its style
 * sheet beside it. Run by `npm run build:page` and `prepack`; a server running from a checkout
 * runs it itself when the bundle is missing or older than its sources.
 */
import { copyFile, mkdir, readdir, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { readFileSync, realpathSync } from 'node:fs';

export const PAGE_SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'page');

export interface BuiltPage {
  dir: string;
  /** Bytes of the script bundle, and gzipped. */
  scriptBytes: number;
  scriptGzipBytes: number;
}

/** The newest modification time among the page's sources, in ms. */
export async function newestSource(dir = PAGE_SOURCE): Promise<number> {
  const names = await readdir(dir);
  const times = await Promise.all(names.map(async (n) => (await stat(join(dir, n))).mtimeMs));
  return Math.max(...times);
}

export async function buildPage(outDir: string): Promise<BuiltPage> {
  const { build } = await import('esbuild');
  await mkdir(outDir, { recursive: true });
  // Written under temp names and renamed: a server reading the folder never sees half a bundle.
  const tag = `.${process.pid}.tmp`;
  await build({
    entryPoints: [join(PAGE_SOURCE, 'main.ts')],
    outfile: join(outDir, `app.js${tag}`),
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    legalComments: 'none',
    logLevel: 'silent',
  });
  await copyFile(join(PAGE_SOURCE, 'style.css'), join(outDir, `style.css${tag}`));
  await rename(join(outDir, `app.js${tag}`), join(outDir, 'app.js'));
  await rename(join(outDir, `style.css${tag}`), join(outDir, 'style.css'));
  const script = readFileSync(join(outDir, 'app.js'));
  return { dir: outDir, scriptBytes: script.length, scriptGzipBytes: gzipSync(script).length };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const out = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'web', 'page');
  const built = await buildPage(out);
  process.stdout.write(
    `page bundle: ${built.dir}/app.js ${(built.scriptBytes / 1024).toFixed(0)} KB, ${(built.scriptGzipBytes / 1024).toFixed(0)} KB gzipped\n`,
  );
}
