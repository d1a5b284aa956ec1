import { api, h, fill } from './dom.js';
import { codeSpan } from '../../format/formatBundle.js';
import type { CodeLocation } from '../../model/types.js';

interface PathJson {
  id: string;
  name: string;
  concept: string | null;
  description: string | null;
  steps: { order: number; description: string | null; code: CodeLocation }[];
}

/** `/paths/<id>`: a golden path as its ordered steps, each at a code location. */
export async function pathPage(root: HTMLElement, id: string): Promise<void> {
  const path = await api<PathJson>(`/paths/${encodeURIComponent(id)}`);
  document.title = `${path.name} — memcore`;
  fill(
    root,
    h('p', { class: 'crumbs' }, 'Golden path'),
    h('h1', {}, path.name),
    path.concept ? h('p', { class: 'concept' }, h('strong', {}, 'Concept: '), path.concept) : null,
    path.description ? h('p', {}, path.description) : null,
    h(
      'ol',
      { class: 'steps', id: 'path-steps' },
      ...path.steps.map((s) =>
        h('li', { value: s.order }, h('code', {}, codeSpan(s.code)), s.description ? h('p', {}, s.description) : null),
      ),
    ),
  );
}
