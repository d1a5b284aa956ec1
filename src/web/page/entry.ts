import { api, entryHref, h, href, pathHref, typeChip, fill } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { codeSpan } from '../../format/formatBundle.js';
import type { CodeLocation, MemoryEntry } from '../../model/types.js';
import type { Jsonified } from '../apiTypes.js';

interface EntryJson {
  entry: Jsonified<MemoryEntry>;
  links: { type: string; from: string; to: string }[];
  code: { code: CodeLocation; relevance: number; freshness?: string }[];
  goldenPaths: { id: string; name: string; concept: string | null }[];
  supersededBy: string | null;
  titles: Record<string, string>;
  effectiveness: { value: number; signals: number } | null;
}

const day = (iso: string | null) => (iso ? iso.slice(0, 10) : '—');

/** `/entry/<id>`: the entry, its links both ways grouped by relation, its code, and what replaced what. */
export async function entryPage(root: HTMLElement, id: string): Promise<void> {
  const view = await api<EntryJson>(`/entry/${encodeURIComponent(id)}`);
  const e = view.entry;
  document.title = `${e.title} — memcore`;
  const linkTo = (other: string) => h('a', { href: entryHref(other) }, view.titles[other] ?? other);
  const entryLinks = view.links.filter((l) => l.type === 'RELATED' || l.type === 'DEPENDS_ON' || l.type === 'SUPERSEDES');
  const groups = new Map<string, HTMLElement[]>();
  for (const l of entryLinks) {
    const out = l.from === e.id;
    const label = `${out ? '→' : '←'} ${l.type}`;
    groups.set(label, [...(groups.get(label) ?? []), h('li', {}, linkTo(out ? l.to : l.from))]);
  }
  const supersedes = entryLinks.filter((l) => l.type === 'SUPERSEDES' && l.from === e.id).map((l) => l.to);

  fill(
    root,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: href('/', { core: e.coreId }) }, e.coreId),
      ' / ',
      typeChip(e.entryType),
      e.pinned ? h('span', { class: 'chip' }, 'pinned') : null,
    ),
    h('h1', { id: 'entry-title' }, e.title),
    view.supersededBy
      ? h('p', { class: 'notice' }, 'Superseded by ', linkTo(view.supersededBy), ': this entry no longer takes effect.')
      : null,
    e.validTo && !view.supersededBy ? h('p', { class: 'notice' }, `No longer in effect since ${day(e.validTo)}.`) : null,
    h('article', { class: 'content', id: 'entry-content' }, renderMarkdown(e.content)),
    h(
      'section',
      {},
      h('h2', {}, 'Links'),
      groups.size === 0
        ? h('p', { class: 'muted' }, 'No links to other entries.')
        : h(
            'div',
            { class: 'links' },
            ...[...groups].map(([label, items]) => h('div', { class: 'link-group' }, h('h3', {}, label), h('ul', {}, items))),
          ),
      h('p', {}, h('a', { href: href('/graph', { focus: e.id, depth: 2 }) }, 'See it in the graph')),
    ),
    h(
      'section',
      {},
      h('h2', {}, 'Code'),
      view.code.length === 0
        ? h('p', { class: 'muted' }, 'References no code.')
        : h(
            'ul',
            { class: 'code', id: 'entry-code' },
            ...view.code.map((c) =>
              h(
                'li',
                {},
                h('code', {}, codeSpan(c.code)),
                c.code.codebaseId !== 'default' ? h('span', { class: 'muted' }, ` in ${c.code.codebaseId}`) : null,
                c.freshness ? h('span', { class: `chip fresh-${c.freshness}` }, c.freshness) : null,
                h('span', { class: 'muted' }, ` relevance ${c.relevance.toFixed(2)}`),
              ),
            ),
          ),
      view.goldenPaths.length === 0
        ? null
        : h(
            'div',
            {},
            h('h3', {}, 'Golden paths it implements'),
            h(
              'ul',
              {},
              ...view.goldenPaths.map((p) => h('li', {}, h('a', { href: pathHref(p.id) }, p.name), p.concept ? ` — ${p.concept}` : '')),
            ),
          ),
    ),
    supersedes.length > 0
      ? h('section', {}, h('h2', {}, 'Supersedes'), h('ul', {}, ...supersedes.map((s) => h('li', {}, linkTo(s)))))
      : null,
    h(
      'section',
      {},
      h('h2', {}, 'Details'),
      h(
        'dl',
        { class: 'facts' },
        ...(
          [
            ['Id', e.id],
            ['Core', e.coreId],
            ['Type', e.entryType],
            ['Confidence', e.confidence],
            ['Importance', `${e.importance} / 10`],
            ['Tags', e.tags.join(', ') || '—'],
            ['Aliases', e.aliases.join(', ') || '—'],
            ['Source', e.source ?? '—'],
            ['Sensitivity', e.sensitivity],
            ['Created', day(e.createdAt)],
            ['Updated', day(e.updatedAt)],
            ['In effect', `${day(e.validFrom ?? e.createdAt)} to ${e.validTo ? day(e.validTo) : 'now'}`],
            [
              'Usefulness',
              view.effectiveness
                ? `${view.effectiveness.value.toFixed(2)} over ${view.effectiveness.signals} rating${view.effectiveness.signals === 1 ? '' : 's'}`
                : 'not rated',
            ],
          ] as const
        ).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
      ),
    ),
  );
}
