import { throwIfAborted } from '../model/errors.js';
import type { EntryEdgeType, Reason } from '../model/types.js';
import type { GraphEdge, MemoryIndex } from '../store/memoryIndex.js';
import { makeHit, type Hit } from './candidate.js';

/**
 * An entry with more edges than this is a hub (the conventions entry every lesson links to): the
 * expansion reaches it but does not walk through it, which would put the whole store two hops from
 * every seed (100K entries linked to one: 2.6 s a query). The development sets' busiest entry has
 * 91 edges (2Wiki), so no eval figure moves.
 */
export const HUB_DEGREE = 256;

/**
 * Entries reachable from the seeds within `depth` hops over `edgeTypes` (see expandWithPaths), as
 * hits whose reasons are their shortest path from every seed that reached them; their rows are read
 * with the other candidates' (hydrateHits), under the same filter. The edges read on the way, among
 * seeds, reached entries and `alsoAmong`, are returned for graph-aware ranking.
 */
export async function expandThroughGraph(
  index: MemoryIndex,
  seeds: Hit[],
  opts: { depth: number; edgeTypes: readonly EntryEdgeType[]; alsoAmong?: readonly string[]; signal?: AbortSignal },
): Promise<{ reached: Hit[]; edges: GraphEdge[] }> {
  throwIfAborted(opts.signal);
  const seedIds = new Set(seeds.map((s) => s.id));
  const expansion = await index.reachWithPaths([...seedIds], {
    depth: opts.depth,
    edgeTypes: opts.edgeTypes,
    alsoAmong: opts.alsoAmong,
    hubDegree: HUB_DEGREE,
  });
  throwIfAborted(opts.signal);
  const reasons = new Map<string, Reason[]>();
  for (const r of expansion.reaches) {
    if (seedIds.has(r.targetId)) continue;
    const list = reasons.get(r.targetId) ?? [];
    list.push({ kind: 'graph', seedId: r.seedId, hops: r.hops, path: r.path });
    reasons.set(r.targetId, list);
  }
  return { reached: [...reasons].map(([id, why]) => makeHit(id, 0, why)), edges: expansion.edges };
}
