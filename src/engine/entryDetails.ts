import { ENTRY_EDGE_TYPES, type CodeLocation, type GoldenPath, type MemoryEntry } from '../model/types.js';
import type { GraphStore } from '../store/graph/graphStore.js';
import type { EntryLink } from './remember.js';
import type { Freshness } from '../code/codeFreshness.js';

/** An entry with everything the graph knows about it (`memcore show`, MCP `memcore://entry/{id}`). */
export interface EntryDetails {
  entry: MemoryEntry;
  /** Its edges to and from other entries, to code and to golden paths. */
  links: EntryLink[];
  /** Its code references; `freshness` when the engine was opened with a `repo` to check them against. */
  code: { code: CodeLocation; relevance: number; freshness?: Freshness }[];
  goldenPaths: GoldenPath[];
  /** The entry that supersedes it, if one does (whether or not that one has taken effect yet). */
  supersededBy: string | null;
}

/** Every edge of one entry: entry edges both ways, then its code and golden paths. */
export async function entryLinks(graph: GraphStore, id: string): Promise<EntryLink[]> {
  return (await entryDetailsOf(graph, id)).links;
}

export async function entryDetails(graph: GraphStore, entry: MemoryEntry): Promise<EntryDetails> {
  return { entry, ...(await entryDetailsOf(graph, entry.id)) };
}

async function entryDetailsOf(graph: GraphStore, id: string): Promise<Omit<EntryDetails, 'entry'>> {
  const neighbours = await graph.reach([id], { depth: 1, edgeTypes: ENTRY_EDGE_TYPES, direction: 'both' });
  const edges = await graph.edgesAmong([id, ...neighbours.map((n) => n.targetId)], ENTRY_EDGE_TYPES);
  const code = await graph.codeReferencesOf([id]);
  const paths = await graph.goldenPathsOf([id]);
  const superseded = await graph.supersededBy([id]);
  const links = [
    ...edges.filter((e) => e.from === id || e.to === id).map(({ type, from, to }) => ({ type, from, to })),
    ...code.map((c) => ({ type: 'REFERENCES_CODE', from: id, to: c.code.id })),
    ...paths.map((p) => ({ type: 'IMPLEMENTS', from: id, to: p.id })),
  ].sort((a, b) => a.type.localeCompare(b.type) || a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
  return {
    links,
    code: code.map(({ code, relevance }) => ({ code, relevance })),
    goldenPaths: paths.map(({ entryIds: _implementers, ...path }) => path),
    supersededBy: superseded.get(id) ?? null,
  };
}
