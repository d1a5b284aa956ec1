import type { EntryEdgeType, MemoryEntry } from '../model/types.js';
import type { GraphEdge } from '../store/graph/graphStore.js';

/** What to draw: the neighbourhood of one entry, or a whole core. */
export type EntryGraphQuery =
  | {
      /** The entry in the middle. */
      focus: string;
      /** Hops out from it, 1 to 3 (default 1). */
      depth?: number;
      maxNodes?: number;
    }
  | {
      core: string;
      /**
       * Entries drawn at most (default 2,000, at most 10,000). A larger core is sampled: its most
       * linked entries are kept, and `sampled` says so.
       */
      maxNodes?: number;
    };

export interface EntryGraphNode {
  id: string;
  title: string;
  entryType: string;
  coreId: string;
  /** Edges to other entries in the whole view before sampling. */
  degree: number;
}

export interface EntryGraph {
  nodes: EntryGraphNode[];
  edges: { from: string; to: string; type: EntryEdgeType }[];
  /** Entries the query covers (the core's size, or the neighbourhood's), before sampling. */
  total: number;
  /** Whether `nodes` is a sample of `total`: the `maxNodes` most linked. */
  sampled: boolean;
  focus?: string;
}

export const ENTRY_GRAPH_DEFAULT_NODES = 2000;
export const ENTRY_GRAPH_MAX_NODES = 10_000;

/**
 * Keeps the `maxNodes` most linked entries (the focus always), and the edges among those. The
 * most linked entries are the ones a reader of a large graph looks for first, and keeping them
 * keeps the edges the drawing is made of.
 */
export function sampleEntryGraph(
  entries: readonly MemoryEntry[],
  edges: readonly GraphEdge[],
  maxNodes: number,
  focus?: string,
): EntryGraph {
  const degree = new Map<string, number>(entries.map((e) => [e.id, 0]));
  for (const e of edges) {
    degree.set(e.from, (degree.get(e.from) ?? 0) + 1);
    degree.set(e.to, (degree.get(e.to) ?? 0) + 1);
  }
  const ranked = [...entries].sort(
    (a, b) => Number(b.id === focus) - Number(a.id === focus) || degree.get(b.id)! - degree.get(a.id)! || a.id.localeCompare(b.id),
  );
  const kept = ranked.slice(0, maxNodes);
  const keptIds = new Set(kept.map((e) => e.id));
  return {
    nodes: kept.map((e) => ({ id: e.id, title: e.title, entryType: e.entryType, coreId: e.coreId, degree: degree.get(e.id)! })),
    edges: edges.filter((e) => keptIds.has(e.from) && keptIds.has(e.to)).map(({ from, to, type }) => ({ from, to, type })),
    total: entries.length,
    sampled: kept.length < entries.length,
    ...(focus !== undefined ? { focus } : {}),
  };
}
