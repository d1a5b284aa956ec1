/**
 * The memory page. The server answers every page address with the same shell; this reads the
 * address and draws that page, so each one loads directly and can be bookmarked.
 */
import { showError } from './dom.js';
import { contextPage } from './context.js';
import { entryPage } from './entry.js';
import { graphPage } from './graph.js';
import { pathPage } from './paths.js';
import { searchPage } from './search.js';
import { statusPage } from './status.js';

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

async function draw(root: HTMLElement): Promise<void> {
  const path = location.pathname;
  for (const link of document.querySelectorAll<HTMLAnchorElement>('header nav a')) {
    if (link.getAttribute('href') === path || (path.startsWith('/entry/') && link.getAttribute('href') === '/'))
      link.setAttribute('aria-current', 'page');
  }
  if (path === '/') return searchPage(root);
  if (path.startsWith('/entry/')) return entryPage(root, decoded(path.slice('/entry/'.length)));
  if (path === '/graph') return graphPage(root);
  if (path.startsWith('/paths/')) return pathPage(root, decoded(path.slice('/paths/'.length)));
  if (path === '/context') return contextPage(root);
  if (path === '/status') return statusPage(root);
  throw new Error(`no page at ${path}`);
}

const root = document.getElementById('app')!;
draw(root).then(
  () => root.setAttribute('data-ready', 'true'),
  (e: unknown) => {
    showError(root, e);
    root.setAttribute('data-ready', 'error');
  },
);
