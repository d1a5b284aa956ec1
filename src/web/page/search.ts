import { api, entryHref, h, score, showError, typeChip, fill } from './dom.js';
import type { StatusJson } from './status.js';
import type { SearchHitView } from '../apiTypes.js';

const MODES = ['hybrid', 'semantic', 'matryoshka', 'keyword'];

/** `/`: one box that searches as you type, with mode, core and type filters kept in the address. */
export async function searchPage(root: HTMLElement): Promise<void> {
  const params = new URLSearchParams(location.search);
  const box = h('input', {
    type: 'search',
    id: 'q',
    name: 'q',
    placeholder: 'Search memory…',
    autocomplete: 'off',
    autofocus: true,
    'aria-label': 'Search memory',
  });
  box.value = params.get('q') ?? '';
  const mode = h('select', { id: 'mode', 'aria-label': 'Mode' }, ...MODES.map((m) => h('option', { value: m }, m)));
  mode.value = MODES.includes(params.get('mode') ?? '') ? params.get('mode')! : 'hybrid';
  const core = h('select', { id: 'core', 'aria-label': 'Core' }, h('option', { value: '' }, 'all cores'));
  const type = h('select', { id: 'type', 'aria-label': 'Type' }, h('option', { value: '' }, 'all types'));
  const results = h('div', { id: 'results', 'aria-live': 'polite' });
  const summary = h('p', { class: 'muted', id: 'summary' });
  fill(root, h('h1', {}, 'Search'), h('div', { class: 'searchbar' }, box, mode, core, type), summary, results);

  let controller: AbortController | undefined;
  let timer: number | undefined;
  async function run(): Promise<void> {
    controller?.abort();
    controller = new AbortController();
    const q = box.value;
    const filters = { q, mode: mode.value, core: core.value, type: type.value };
    const url = new URL(location.href);
    for (const [k, v] of Object.entries(filters)) {
      if (v && !(k === 'mode' && v === 'hybrid')) url.searchParams.set(k, v);
      else url.searchParams.delete(k);
    }
    history.replaceState(null, '', url);
    if (q.trim() === '') {
      results.replaceChildren();
      summary.textContent = 'Type to search: by meaning and keywords (hybrid), by meaning only, or by words only.';
      return;
    }
    try {
      const started = performance.now();
      const answer = await api<{ hits: SearchHitView[]; notes: string[] }>(
        '/search',
        { q, mode: mode.value, core: core.value, type: type.value },
        controller.signal,
      );
      selected = -1;
      summary.textContent = `${answer.hits.length} hit${answer.hits.length === 1 ? '' : 's'} in ${Math.round(performance.now() - started)} ms${answer.notes.length ? ` — ${answer.notes.join('; ')}` : ''}`;
      results.replaceChildren(
        h(
          'ol',
          { class: 'hits', role: 'listbox', 'aria-label': 'Hits' },
          ...answer.hits.map((hit) =>
            h(
              'li',
              { class: 'hit', role: 'option', 'aria-selected': 'false' },
              h('a', { href: entryHref(hit.id), class: 'title' }, hit.title),
              h(
                'div',
                { class: 'meta' },
                typeChip(hit.entryType),
                h('span', { class: 'core' }, hit.coreId),
                h('span', { class: 'score' }, `score ${score(hit.score)}`),
              ),
              h('div', { class: 'why' }, hit.why.join(' · ')),
            ),
          ),
        ),
      );
    } catch (e) {
      if ((e as Error).name !== 'AbortError') showError(results, e);
    }
  }
  const soon = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void run(), 120);
  };
  box.addEventListener('input', soon);
  // ↓ and ↑ move through the hits, Enter opens the one marked (the first when none is).
  let selected = -1;
  box.addEventListener('keydown', (event) => {
    const hits = [...results.querySelectorAll<HTMLElement>('.hit')];
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      if (hits.length === 0) return;
      event.preventDefault();
      selected = Math.max(0, Math.min(hits.length - 1, selected + (event.key === 'ArrowDown' ? 1 : -1)));
      hits.forEach((hit, i) => hit.setAttribute('aria-selected', String(i === selected)));
      hits[selected]!.scrollIntoView({ block: 'nearest' });
    } else if (event.key === 'Enter' && hits.length > 0) {
      const link = hits[Math.max(0, selected)]!.querySelector<HTMLAnchorElement>('a.title');
      if (link) location.href = link.href;
    }
  });
  for (const select of [mode, core, type]) select.addEventListener('change', () => void run());

  // The filters list what the memory holds; the search runs whether or not they have arrived.
  void api<StatusJson>('/status').then(
    (status) => {
      for (const c of Object.keys(status.stats.cores).sort()) core.append(h('option', { value: c }, c));
      for (const t of Object.keys(status.stats.entryTypes).sort()) type.append(h('option', { value: t }, t));
      core.value = params.get('core') ?? '';
      type.value = params.get('type') ?? '';
    },
    () => undefined,
  );
  core.value = params.get('core') ?? '';
  type.value = params.get('type') ?? '';
  await run();
}
