import cytoscape from 'cytoscape';
import { api, entryHref, h, href, fill } from './dom.js';
import { RELATION_STYLES, TYPE_COLOURS, OTHER_TYPE_COLOUR, typeColour } from './colours.js';
import type { StatusJson } from './status.js';

interface GraphJson {
  nodes: { id: string; title: string; entryType: string; coreId: string; degree: number }[];
  edges: { from: string; to: string; type: string }[];
  total: number;
  sampled: boolean;
  focus?: string;
}

/** What a sampled graph offers to draw instead (the server's default is 2,000, its most 10,000). */
const DRAW_LIMITS = [500, 2000, 5000, 10_000];
const DEFAULT_DRAWN = 2000;
/** Past this many nodes a force layout takes seconds; rings by degree draw at once. */
const FORCE_LAYOUT_MAX = 300;
/** Titles are drawn only for graphs a reader can take in; larger ones show them on hover. */
const LABEL_MAX = 150;

const CYTOSCAPE_STYLE_ID = '__________cytoscape_stylesheet';

const short = (t: string) => (t.length > 42 ? `${t.slice(0, 40)}…` : t);

function legend(types: string[]): HTMLElement {
  const swatch = (colour: string, cls: string) => {
    const s = h('span', { class: cls });
    s.style.background = colour;
    return s;
  };
  const edgeSample = (style: (typeof RELATION_STYLES)[string]) => {
    const s = h('span', { class: 'edge-swatch' });
    s.style.borderTop = `2px ${style.line} ${style.colour}`;
    return s;
  };
  return h(
    'aside',
    { class: 'legend', id: 'graph-legend' },
    h('h2', {}, 'Entry types'),
    h('ul', {}, ...types.map((t) => h('li', {}, swatch(typeColour(t), 'node-swatch'), t))),
    h('h2', {}, 'Relations'),
    h(
      'ul',
      {},
      ...Object.entries(RELATION_STYLES).map(([type, style]) =>
        h('li', {}, edgeSample(style), `${type} (${style.meaning}${style.arrow ? ', arrow' : ''})`),
      ),
    ),
  );
}

/** `/graph?focus=<id>&depth=<n>` or `/graph?core=<core>`: entries as nodes, their links as edges. */
export async function graphPage(root: HTMLElement): Promise<void> {
  const params = new URLSearchParams(location.search);
  const focus = params.get('focus');
  const core = params.get('core');
  if (!focus && !core) {
    const status = await api<StatusJson>('/status');
    fill(
      root,
      h('h1', {}, 'Graph'),
      h('p', {}, 'Pick a core to draw, or open an entry and follow “See it in the graph”.'),
      h(
        'ul',
        { class: 'cores' },
        ...Object.entries(status.stats.cores)
          .sort()
          .map(([c, n]) => h('li', {}, h('a', { href: href('/graph', { core: c }) }, c), ` (${n.toLocaleString('en')} entries)`)),
      ),
    );
    return;
  }
  const max = params.get('max') ?? undefined;
  const graph = await api<GraphJson>('/graph', focus ? { focus, depth: params.get('depth') ?? undefined, max } : { core: core!, max });
  const title = focus ? `Around ${graph.nodes.find((n) => n.id === focus)?.title ?? focus}` : `Core ${core}`;
  document.title = `${title} — memcore`;
  const canvas = h('div', {
    id: 'graph',
    class: 'graph',
    role: 'img',
    'aria-label': `Graph of ${graph.nodes.length} entries and ${graph.edges.length} links`,
  });
  const depth = Number(params.get('depth') ?? 1);
  const types = [...new Set(graph.nodes.map((n) => n.entryType))].sort(
    (a, b) => Number(!(a in TYPE_COLOURS)) - Number(!(b in TYPE_COLOURS)) || a.localeCompare(b),
  );
  const note = graph.sampled
    ? `Showing the ${graph.nodes.length.toLocaleString('en')} most linked of ${graph.total.toLocaleString('en')} entries (a sample), with the ${graph.edges.length.toLocaleString('en')} links among them.`
    : `${graph.nodes.length.toLocaleString('en')} entries, ${graph.edges.length.toLocaleString('en')} links.`;
  fill(
    root,
    h('h1', {}, title),
    h(
      'p',
      { class: 'muted', id: 'graph-note' },
      note,
      ' Click an entry to open it.',
      focus
        ? h(
            'span',
            { class: 'depth' },
            ' Depth: ',
            ...[1, 2, 3].map((d) =>
              d === depth ? h('strong', {}, ` ${d} `) : h('a', { href: href('/graph', { focus, depth: d }) }, ` ${d} `),
            ),
          )
        : null,
      graph.sampled || max !== undefined
        ? h(
            'span',
            { class: 'depth' },
            ' Draw at most: ',
            ...DRAW_LIMITS.map((n) =>
              String(n) === (max ?? String(DEFAULT_DRAWN))
                ? h('strong', {}, ` ${n.toLocaleString('en')} `)
                : h(
                    'a',
                    { href: href('/graph', focus ? { focus, depth, max: n } : { core: core!, max: n }) },
                    ` ${n.toLocaleString('en')} `,
                  ),
            ),
          )
        : null,
    ),
    h('div', { class: 'graph-wrap' }, canvas, legend(types)),
    graph.nodes.length <= LABEL_MAX
      ? h(
          'details',
          { class: 'node-list' },
          h('summary', {}, 'Entries in this view'),
          h('ul', {}, ...graph.nodes.map((n) => h('li', {}, h('a', { href: entryHref(n.id) }, n.title), ` (${n.entryType})`))),
        )
      : null,
  );

  // Cytoscape adds a <style> element unless one with this id is there; the page's CSP would refuse
  // it, so a marker stands in, and style.css holds the one rule it carried.
  if (!document.getElementById(CYTOSCAPE_STYLE_ID))
    document.head.append(h('meta', { id: CYTOSCAPE_STYLE_ID, name: 'cytoscape-style', content: 'in style.css' }));
  const labels = graph.nodes.length <= LABEL_MAX;
  const cy = cytoscape({
    container: canvas,
    elements: [
      ...graph.nodes.map((n) => ({
        data: {
          id: n.id,
          label: short(n.title),
          title: n.title,
          colour: typeColour(n.entryType),
          size: 14 + Math.min(26, Math.sqrt(n.degree) * 5),
        },
        classes: n.id === graph.focus ? 'focus' : '',
      })),
      ...graph.edges.map((e, i) => ({ data: { id: `e${i}`, source: e.from, target: e.to, type: e.type } })),
    ],
    style: [
      {
        selector: 'node',
        style: {
          'background-color': 'data(colour)',
          width: 'data(size)',
          height: 'data(size)',
          label: labels ? 'data(label)' : '',
          'font-size': 13,
          color: '#2b2b2b',
          'text-valign': 'bottom',
          'text-margin-y': 3,
        },
      },
      { selector: 'node.focus', style: { 'border-width': 4, 'border-color': '#111' } },
      {
        selector: 'node:selected, node.hover',
        style: { label: 'data(title)', 'font-size': 12, 'z-index': 10, 'text-background-color': '#fff', 'text-background-opacity': 0.9 },
      },
      {
        selector: 'edge',
        style: { width: 1.5, 'curve-style': graph.edges.length > 3000 ? 'haystack' : 'bezier', 'line-color': OTHER_TYPE_COLOUR },
      },
      ...Object.entries(RELATION_STYLES).map(([type, s]) => ({
        selector: `edge[type = "${type}"]`,
        style: {
          'line-color': s.colour,
          'line-style': s.line,
          'target-arrow-color': s.colour,
          'target-arrow-shape': s.arrow ? 'triangle' : 'none',
        },
      })),
    ] as cytoscape.StylesheetJson,
    layout:
      graph.nodes.length <= FORCE_LAYOUT_MAX
        ? {
            name: 'cose',
            animate: false,
            randomize: true,
            padding: 30,
            idealEdgeLength: () => 100,
            nodeRepulsion: () => 400_000,
            numIter: 1500,
          }
        : {
            name: 'concentric',
            concentric: (n: cytoscape.NodeSingular) => Number(n.data('size')),
            levelWidth: () => 4,
            minNodeSpacing: 4,
            animate: false,
            padding: 20,
          },
  });
  // A handful of nodes would be fitted to the frame at a zoom that blows the labels up.
  if (cy.zoom() > 1.1) {
    cy.zoom(1.1);
    cy.center();
  }
  cy.on('tap', 'node', (event) => void (location.href = entryHref(event.target.id() as string)));
  cy.on('mouseover', 'node', (event) => event.target.addClass('hover'));
  cy.on('mouseout', 'node', (event) => event.target.removeClass('hover'));
  cy.one('render', () => {
    canvas.dataset.rendered = 'true';
    // From the start of the navigation: what a person waits for the first drawing (bench/page.ts reads it).
    canvas.dataset.renderMs = String(Math.round(performance.now()));
  });
  // A handle for whoever debugs the page, and for the tests that click a node where it is drawn.
  (window as unknown as { memcoreGraph: cytoscape.Core }).memcoreGraph = cy;
}
