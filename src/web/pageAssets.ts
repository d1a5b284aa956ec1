/**
 * The memory page's files: the HTML shell every page route answers with, and the script and
 * style sheet it loads. Everything is served from the package: no CDN, and it works offline.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Run from a checkout (src/web/*.ts under tsx), the bundle is built into dist/web/page; installed, it ships there. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
export const PAGE_DIR = FROM_SOURCE ? join(HERE, '..', '..', 'dist', 'web', 'page') : join(HERE, 'page');

export interface PageAsset {
  body: Buffer;
  type: string;
}

export type PageAssets = Record<'app.js' | 'style.css', PageAsset>;

let loading: Promise<PageAssets> | undefined;

async function bundleIsCurrent(): Promise<boolean> {
  if (!existsSync(join(PAGE_DIR, 'app.js')) || !existsSync(join(PAGE_DIR, 'style.css'))) return false;
  if (!FROM_SOURCE) return true;
  const { newestSource } = await import('./buildPage.js');
  return (await stat(join(PAGE_DIR, 'app.js'))).mtimeMs >= (await newestSource());
}

/** The script and style sheet, built first when running from a checkout whose bundle is missing or old. */
export function pageAssets(): Promise<PageAssets> {
  loading ??= (async () => {
    if (!(await bundleIsCurrent())) {
      if (!FROM_SOURCE) throw new Error(`the memory page is not built (${PAGE_DIR} is missing); reinstall memcore`);
      await (await import('./buildPage.js')).buildPage(PAGE_DIR);
    }
    return {
      'app.js': { body: await readFile(join(PAGE_DIR, 'app.js')), type: 'text/javascript; charset=utf-8' },
      'style.css': { body: await readFile(join(PAGE_DIR, 'style.css')), type: 'text/css; charset=utf-8' },
    };
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

/** The one HTML document of the page: the script reads the address and draws the page it names. */
export const PAGE_SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>memcore</title>
<link rel="stylesheet" href="/assets/style.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body>
<header class="top">
<a class="brand" href="/">memcore</a>
<nav><a href="/">Search</a><a href="/graph">Graph</a><a href="/context">Context</a><a href="/status">Status</a></nav>
</header>
<main id="app"><p class="muted">Loading…</p></main>
</body>
</html>
`;

/**
 * No inline script or style, nothing from another origin. Scripts may still set element styles
 * through the DOM (the graph library sizes its canvas so), which style-src does not govern.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
