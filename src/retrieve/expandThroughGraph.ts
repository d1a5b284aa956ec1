import { cosineSimilarity } from '../embed/embedder.js';
import { throwIfAborted } from '../model/errors.js';
import type { EntryEdgeType, Reason } from '../model/types.js';
import type { GraphStore } from '../store/graph/graphStore.js';
import type { EntriesTable } from '../store/lance/entriesTable.js';
import type { EntryFilter } from '../store/lance/filter.js';
import type { Candidate } from './candidate.js';

/**
 * Entries reachable from the seeds within `depth` hops over `edgeTypes`: one Cypher query for all
 * seeds, then one filtered LanceDB read to hydrate them (so expansion obeys the same filters).
 * Each reached entry keeps its shortest path from every seed that reached it.
 */
export async function expandThroughGraph(
  graph: GraphStore,
  table: EntriesTable,
  seeds: Candidate[],
  queryVector: Float32Array,
  opts: { depth: number; edgeTypes: readonly EntryEdgeType[]; filter: EntryFilter; signal?: AbortSignal },
): Promise<Candidate[]> {
  throwIfAborted(opts.signal);
  const seedIds = new Set(seeds.map((s) => s.entry.id));
  const reaches = (await graph.expand([...seedIds], { depth: opts.depth, edgeTypes: opts.edgeTypes })).filter((r) => !seedIds.has(r.targetId));
  throwIfAborted(opts.signal);
  if (reaches.length === 0) return [];
  const reasons = new Map<string, Reason[]>();
  for (const r of reaches) {
    const list = reasons.get(r.targetId) ?? [];
    list.push({ kind: 'graph', seedId: r.seedId, hops: r.hops, path: r.path });
    reasons.set(r.targetId, list);
  }
  const hydrated = await table.read({ ...opts.filter, ids: [...reasons.keys()] }, { withVectors: true });
  throwIfAborted(opts.signal);
  return hydrated.map(({ entry, vector }) => ({
    entry,
    similarity: vector ? cosineSimilarity(queryVector, vector) : 0,
    why: reasons.get(entry.id) ?? [],
    ...(vector ? { vector } : {}),
  }));
}
