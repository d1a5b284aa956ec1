import type { PathHop } from '../../model/types.js';
import type { GraphEdge, GraphReach, GraphStore, ReachOptions } from './graphStore.js';

/**
 * The entries within `depth` hops of the seeds, each with one shortest path, from two graph reads:
 * which entries and how far (`reach`), then the edges among seeds, targets and `alsoAmong`. Every
 * node on a shortest path is itself reached in fewer hops, so those edges hold every path; the
 * caller gets them too (graph-aware ranking needs the edges among its candidates, `alsoAmong`).
 */
export async function expandWithPaths(
  graph: GraphStore,
  seedIds: readonly string[],
  opts: ReachOptions & { alsoAmong?: readonly string[] },
): Promise<{ reaches: GraphReach[]; edges: GraphEdge[] }> {
  const hits = await graph.reach(seedIds, opts);
  const among = [...new Set([...seedIds, ...hits.map((h) => h.targetId), ...(opts.alsoAmong ?? [])])];
  const edges = await graph.edgesAmong(among, opts.edgeTypes);
  // The paths walk as the reach did: out of a hub, none.
  const hubs = opts.hubDegree === undefined ? new Set<string>() : await graph.hubsAmong(among, opts.hubDegree);
  const direction = opts.direction ?? 'both';
  const next = new Map<string, { node: string; hop: PathHop }[]>();
  const link = (a: string, b: string, hop: PathHop) => {
    const list = next.get(a);
    if (list) list.push({ node: b, hop });
    else next.set(a, [{ node: b, hop }]);
  };
  for (const { from, to, type } of edges) {
    if (direction !== 'incoming') link(from, to, { type, from, to });
    if (direction !== 'outgoing') link(to, from, { type, from, to });
  }
  // Breadth first from each seed, once: the first path found to a node is a shortest one.
  const pathsFrom = new Map<string, Map<string, PathHop[]>>();
  const shortestPaths = (seed: string) => {
    const paths = new Map<string, PathHop[]>([[seed, []]]);
    for (let frontier = [seed], hop = 0; frontier.length > 0 && hop < opts.depth; hop++) {
      const reached: string[] = [];
      for (const node of frontier) {
        if (hubs.has(node)) continue;
        for (const { node: to, hop: edge } of next.get(node) ?? []) {
          if (paths.has(to)) continue;
          paths.set(to, [...paths.get(node)!, edge]);
          reached.push(to);
        }
      }
      frontier = reached;
    }
    return paths;
  };
  const reaches = hits.map((h) => {
    if (!pathsFrom.has(h.seedId)) pathsFrom.set(h.seedId, shortestPaths(h.seedId));
    return { ...h, path: pathsFrom.get(h.seedId)!.get(h.targetId) ?? [] };
  });
  return { reaches, edges };
}
