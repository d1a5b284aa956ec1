import { cosineSimilarity } from '../embed/embedder.js';
import { throwIfAborted } from '../model/errors.js';
import type { EntryEdgeType, Reason } from '../model/types.js';
import type { GraphEdge, GraphStore } from '../store/graph/graphStore.js';
import { expandWithPaths } from '../store/graph/expandWithPaths.js';
import type { EntriesTable } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Candidate } from './candidate.js';

/**
 * Entries reachable from the seeds within `depth` hops over `edgeTypes` (see expandWithPaths), then
 * one filtered LanceDB read to hydrate them (so expansion obeys the same filters); entries in
 * `known` (read by an earlier stage under the same filter) are not read again. Each reached entry
 * keeps its shortest path from every seed that reached it. The edges read on the way, among
 * seeds, reached entries and `alsoAmong`, are returned for graph-aware ranking.
 */
export async function expandThroughGraph(
  graph: GraphStore,
  table: EntriesTable,
  seeds: Candidate[],
  queryVector: Float32Array,
  opts: { depth: number; edgeTypes: readonly EntryEdgeType[]; filter: EntryFilter; alsoAmong?: readonly string[]; known?: readonly Candidate[]; signal?: AbortSignal },
): Promise<{ reached: Candidate[]; edges: GraphEdge[] }> {
  throwIfAborted(opts.signal);
  const seedIds = new Set(seeds.map((s) => s.entry.id));
  const expansion = await expandWithPaths(graph, [...seedIds], { depth: opts.depth, edgeTypes: opts.edgeTypes, alsoAmong: opts.alsoAmong });
  const reaches = expansion.reaches.filter((r) => !seedIds.has(r.targetId));
  throwIfAborted(opts.signal);
  if (reaches.length === 0) return { reached: [], edges: expansion.edges };
  const reasons = new Map<string, Reason[]>();
  for (const r of reaches) {
    const list = reasons.get(r.targetId) ?? [];
    list.push({ kind: 'graph', seedId: r.seedId, hops: r.hops, path: r.path });
    reasons.set(r.targetId, list);
  }
  const known = new Map((opts.known ?? []).map((c) => [c.entry.id, c]));
  const unread = [...reasons.keys()].filter((id) => !known.has(id));
  const hydrated = unread.length > 0 ? await table.read({ ...opts.filter, ids: unread }, { withVectors: true }) : [];
  throwIfAborted(opts.signal);
  const reached = [
    ...[...reasons.keys()].flatMap((id) => {
      const c = known.get(id);
      return c ? [{ entry: c.entry, similarity: c.similarity, why: reasons.get(id)!, ...(c.vector ? { vector: c.vector } : {}) }] : [];
    }),
    ...hydrated.map(({ entry, vector }) => ({
      entry,
      similarity: vector ? cosineSimilarity(queryVector, vector) : 0,
      why: reasons.get(entry.id) ?? [],
      ...(vector ? { vector } : {}),
    })),
  ];
  return { reached, edges: expansion.edges };
}
