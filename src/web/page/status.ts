import { api, entryHref, h, fill } from './dom.js';

export interface StatusJson {
  stats: {
    entries: number;
    cores: Record<string, number>;
    entryTypes: Record<string, number>;
    relations: Record<string, number>;
    codeLocations: number;
    goldenPaths: number;
    embedder: { id: string; dimensions: number };
    generation: number;
    server: { pid: number; startedAt: string; uptimeSeconds: number; path: string };
  };
  feedback: { id: string; title: string | null; value: number; signals: number }[];
  gaps: { task: string; count: number; lastAt: string }[];
}

function countTable(caption: string, counts: Record<string, number>, link?: (key: string) => string): HTMLElement {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return h(
    'table',
    { class: 'counts' },
    h('caption', {}, caption),
    h(
      'tbody',
      {},
      ...rows.map(([k, n]) =>
        h('tr', {}, h('th', { scope: 'row' }, link ? h('a', { href: link(k) }, k) : k), h('td', {}, n.toLocaleString('en'))),
      ),
    ),
  );
}

/** `/status`: what the memory holds, what serves it, and what feedback and gaps say. */
export async function statusPage(root: HTMLElement): Promise<void> {
  const { stats, feedback, gaps } = await api<StatusJson>('/status');
  const uptime = stats.server.uptimeSeconds;
  fill(
    root,
    h('h1', {}, 'Status'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Entries'),
      h('dd', { id: 'entry-count' }, stats.entries.toLocaleString('en')),
      h('dt', {}, 'Code locations'),
      h('dd', {}, stats.codeLocations.toLocaleString('en')),
      h('dt', {}, 'Golden paths'),
      h('dd', {}, stats.goldenPaths.toLocaleString('en')),
      h('dt', {}, 'Embedder'),
      h('dd', {}, `${stats.embedder.id} (${stats.embedder.dimensions} dimensions)`),
      h('dt', {}, 'Generation'),
      h('dd', {}, stats.generation),
      h('dt', {}, 'Served by'),
      h(
        'dd',
        {},
        `pid ${stats.server.pid}, up ${Math.floor(uptime / 3600)} h ${Math.floor((uptime % 3600) / 60)} min ${uptime % 60} s, from ${stats.server.path}`,
      ),
    ),
    h(
      'div',
      { class: 'tables' },
      countTable('Entries by core', stats.cores, (c) => `/graph?core=${encodeURIComponent(c)}`),
      countTable('Entries by type', stats.entryTypes),
      countTable('Edges by relation', stats.relations),
    ),
    h('h2', {}, 'Feedback'),
    feedback.length === 0
      ? h('p', { class: 'muted' }, 'No entry has been rated yet (rate_memory, memcore feedback).')
      : h(
          'table',
          { class: 'counts' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Entry'), h('th', {}, 'Effectiveness'), h('th', {}, 'Ratings'))),
          h(
            'tbody',
            {},
            ...feedback.map((f) =>
              h(
                'tr',
                {},
                h('td', {}, h('a', { href: entryHref(f.id) }, f.title ?? f.id)),
                h('td', {}, f.value.toFixed(2)),
                h('td', {}, f.signals),
              ),
            ),
          ),
        ),
    h('h2', {}, 'Gaps'),
    gaps.length === 0
      ? h('p', { class: 'muted' }, 'No task has gone unanswered.')
      : h(
          'table',
          { class: 'counts' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Task memory could not answer'), h('th', {}, 'Asked'), h('th', {}, 'Last'))),
          h(
            'tbody',
            {},
            ...gaps.map((g) =>
              h('tr', {}, h('td', {}, g.task), h('td', {}, g.count), h('td', {}, g.lastAt.slice(0, 19).replace('T', ' '))),
            ),
          ),
        ),
  );
}
