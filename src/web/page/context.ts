import { api, entryHref, h, score, typeChip, fill } from './dom.js';
import type { ContextView } from '../apiTypes.js';

const OPTIONS = ['core', 'max_entries', 'max_tokens', 'depth'] as const;

/**
 * `/context?task=…`: what an agent gets for a task. The block is the one `build_task_context`
 * returns and `memcore context --format prompt` prints; beside it, why each entry is there and
 * what it costs.
 */
export async function contextPage(root: HTMLElement): Promise<void> {
  const params = new URLSearchParams(location.search);
  const task = params.get('task') ?? '';
  const field = (name: string, label: string, type = 'number') => {
    const input = h('input', { name, id: name, type, ...(type === 'number' ? { min: 0 } : {}) });
    input.value = params.get(name) ?? '';
    return h('label', {}, label, input);
  };
  const taskBox = h('textarea', {
    name: 'task',
    id: 'task',
    rows: 3,
    placeholder: 'The task, in the words of whoever asked for it',
    required: true,
  });
  taskBox.value = task;
  const noCode = h('input', {
    type: 'checkbox',
    name: 'include_code',
    value: 'false',
    id: 'include_code',
    checked: params.get('include_code') === 'false',
  });
  const form = h(
    'form',
    { method: 'get', action: '/context', class: 'context-form' },
    h('label', { class: 'wide' }, 'Task', taskBox),
    field('core', 'Core', 'text'),
    field('max_entries', 'Max entries'),
    field('max_tokens', 'Max tokens'),
    field('depth', 'Depth'),
    h('label', { class: 'check' }, noCode, 'without code'),
    h('button', { type: 'submit' }, 'Preview'),
  );
  const out = h('div', { id: 'context-out' });
  fill(root, h('h1', {}, 'Context preview'), form, out);
  if (task.trim() === '') {
    out.append(h('p', { class: 'muted' }, 'Give a task to see the <memory> block an agent would get for it.'));
    return;
  }
  const query: Record<string, string | undefined> = { task };
  for (const o of OPTIONS) query[o] = params.get(o) ?? undefined;
  if (params.get('include_code') === 'false') query.include_code = 'false';
  const view = await api<ContextView>('/context', query);
  out.replaceChildren(
    h(
      'div',
      { class: 'context-grid' },
      h(
        'section',
        {},
        h('h2', {}, 'What the agent gets'),
        view.block === ''
          ? h(
              'p',
              { class: 'muted', id: 'context-empty' },
              'Nothing: memory holds nothing relevant, and the block is left out of the prompt.',
            )
          : h('pre', { id: 'context-block', class: 'block' }, view.block),
        h(
          'p',
          { class: 'muted', id: 'context-block-tokens' },
          // The table counts each entry's title and text (what max_tokens budgets); the block also
          // holds its framing, each entry's metadata, the code references and the golden paths.
          view.block === ''
            ? ''
            : `~${view.blockTokens.toLocaleString('en')} tokens in the block: ` +
                `${view.totalTokens.toLocaleString('en')} of entry titles and text (the table's total, what Max tokens budgets), ` +
                `~${Math.max(0, view.blockTokens - view.totalTokens).toLocaleString('en')} of framing, metadata, code references and golden paths.`,
          view.bundleId ? ` Over MCP the block opens as <memory bundle="${view.bundleId}">, the id to rate its entries with.` : '',
        ),
        ...view.notes.map((n) => h('p', { class: 'notice' }, n)),
      ),
      h(
        'section',
        {},
        h('h2', {}, 'Why each entry'),
        view.lowConfidence
          ? h('p', { class: 'notice' }, 'Low confidence: no entry is known to be relevant, so the block says so instead of listing them.')
          : null,
        h(
          'table',
          { class: 'items', id: 'context-items' },
          h(
            'thead',
            {},
            h('tr', {}, h('th', {}, '#'), h('th', {}, 'Entry'), h('th', {}, 'Score'), h('th', {}, 'Tokens'), h('th', {}, 'Reason')),
          ),
          h(
            'tbody',
            {},
            ...view.items.map((item, i) =>
              h(
                'tr',
                {},
                h('td', {}, i + 1),
                h(
                  'td',
                  {},
                  h('a', { href: entryHref(item.id) }, item.title),
                  ' ',
                  typeChip(item.entryType),
                  item.possiblyStale ? h('span', { class: 'chip fresh-orphaned' }, 'possibly stale') : null,
                ),
                h('td', { class: 'num' }, score(item.score)),
                h('td', { class: 'num' }, item.tokens),
                h('td', { class: 'why' }, item.why.join(' · ')),
              ),
            ),
          ),
          h(
            'tfoot',
            {},
            h(
              'tr',
              {},
              h('td', {}),
              h('th', { scope: 'row' }, 'Total (titles and text)'),
              h('td', {}),
              h('td', { class: 'num', id: 'context-total' }, view.totalTokens),
              h('td', {}),
            ),
          ),
        ),
      ),
    ),
  );
}
