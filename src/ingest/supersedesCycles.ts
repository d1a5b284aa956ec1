import { MemoryFileError } from '../model/errors.js';
import type { Relation } from '../model/types.js';
import type { GraphStore } from '../store/graph/graphStore.js';

/**
 * Refuses a write whose SUPERSEDES relations would close a cycle, with those already stored: on a
 * cycle every entry is superseded by another, so every one of them would drop out of every answer
 * without a word. The message names the ids around the cycle.
 */
export async function refuseSupersedesCycles(graph: GraphStore, source: string, relations: readonly Relation[]): Promise<void> {
  const added = relations.filter((r) => r.type === 'SUPERSEDES');
  if (added.length === 0) return;
  // Every entry the new edges can lead to through stored SUPERSEDES edges (newer → older).
  const seen = new Set(added.flatMap((r) => [r.from, r.to]));
  for (let frontier = [...seen]; frontier.length > 0;) {
    const hits = await graph.reach(frontier, { depth: 10, edgeTypes: ['SUPERSEDES'], direction: 'outgoing' });
    frontier = [...new Set(hits.map((h) => h.targetId))].filter((id) => !seen.has(id));
    for (const id of frontier) seen.add(id);
  }
  const older = new Map<string, Set<string>>();
  const link = (from: string, to: string) => (older.get(from) ?? older.set(from, new Set()).get(from)!).add(to);
  for (const e of await graph.edgesAmong([...seen], ['SUPERSEDES'])) link(e.from, e.to);
  for (const r of added) link(r.from, r.to);
  for (const r of added) {
    const back = pathBetween(older, r.to, r.from);
    if (back) {
      throw new MemoryFileError(
        source,
        `relations (SUPERSEDES "${r.from}" → "${r.to}")`,
        'to',
        `would close a SUPERSEDES cycle: ${[r.from, ...back].map((id) => `"${id}"`).join(' → ')}; on a cycle every entry is superseded and none would be answered`,
      );
    }
  }
}

/** A path from `start` to `goal` along the edges (breadth first), as the ids after `start`, or undefined. */
function pathBetween(next: Map<string, Set<string>>, start: string, goal: string): string[] | undefined {
  const parent = new Map<string, string | null>([[start, null]]);
  for (let frontier = [start]; frontier.length > 0;) {
    const reached: string[] = [];
    for (const node of frontier) {
      if (node === goal) {
        const path: string[] = [];
        for (let at: string | null = node; at !== null; at = parent.get(at)!) path.unshift(at);
        return path;
      }
      for (const to of next.get(node) ?? []) {
        if (parent.has(to)) continue;
        parent.set(to, node);
        reached.push(to);
      }
    }
    frontier = reached;
  }
  return undefined;
}
