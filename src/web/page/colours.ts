/** One colour per entry type and one style per relation: the graph, its legend and the type chips share them. */
export const TYPE_COLOURS: Record<string, string> = {
  lesson: '#d9822b',
  decision: '#2f6fb3',
  pattern: '#8e44ad',
  convention: '#17917a',
  fact: '#6b7785',
  retraction: '#c0392b',
};
export const OTHER_TYPE_COLOUR = '#a0896b';
export const typeColour = (t: string) => TYPE_COLOURS[t] ?? OTHER_TYPE_COLOUR;

export const RELATION_STYLES: Record<string, { colour: string; line: 'solid' | 'dashed'; arrow: boolean; meaning: string }> = {
  RELATED: { colour: '#9aa5b1', line: 'solid', arrow: false, meaning: 'related to' },
  DEPENDS_ON: { colour: '#2f6fb3', line: 'solid', arrow: true, meaning: 'depends on' },
  SUPERSEDES: { colour: '#c0392b', line: 'dashed', arrow: true, meaning: 'replaces' },
};
