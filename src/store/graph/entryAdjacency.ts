import { ENTRY_EDGE_TYPES, type EntryEdgeType } from '../../model/types.js';
import type { SnapshotContent } from '../snapshot/snapshotFile.js';
import type { Direction, GraphEdge, GraphHit } from './graphStore.js';

const NO_EDGES: readonly GraphEdge[] = [];

const edgeKey = (e: Pick<GraphEdge, 'from' | 'to' | 'type'>) => `${e.type}\u0000${e.from}\u0000${e.to}`;

/**
 * The entry ids and entry-to-entry edges (RELATED, DEPENDS_ON, SUPERSEDES) in memory, for the
 * reads every query makes (reach from the seeds, edges among candidates, supersession) and for
 * writes, which then need not ask Kuzu which rows exist. A Kuzu round trip costs
 * 40–90 ms at 100K entries whatever it asks; a breadth-first walk here costs microseconds. The
 * graph database stays the system of record: this is loaded from it once and kept in step by the
 * writes that go through the same store (Kuzu's file lock keeps other processes from writing).
 */
export class EntryAdjacency {
  /** Every edge touching an entry, listed under both ends (one shared object per edge). */
  private readonly edgesOf = new Map<string, GraphEdge[]>();
  /** Every edge by its key; derived from `edgesOf` on first use after a snapshot loaded the edges (queries never need it). */
  private edgeByKey: Map<string, GraphEdge> | undefined = new Map();
  /**
   * SUPERSEDES edges by the entry they supersede: what `supersededBy` asks of every candidate,
   * without walking the edges of a hub (100K of them) to find the one or two.
   */
  private readonly supersededVia = new Map<string, GraphEdge[]>();
  private readonly entries: Set<string>;

  constructor(entryIds: Iterable<string> = [], edges: Iterable<GraphEdge> = []) {
    this.entries = new Set(entryIds);
    this.upsert(edges);
  }

  private get byKey(): Map<string, GraphEdge> {
    if (!this.edgeByKey) {
      this.edgeByKey = new Map();
      for (const [id, edges] of this.edgesOf) for (const e of edges) if (e.from === id) this.edgeByKey.set(edgeKey(e), e);
    }
    return this.edgeByKey;
  }

  /**
   * The entries and edges, for a snapshot file: ids once each, edges as indices into them, and
   * every list in its order (a walk visits edges in list order, which ties in ranking follow).
   */
  snapshot(): SnapshotContent {
    const ids = [...this.entries];
    const index = new Map(ids.map((id, i) => [id, i]));
    const at = (id: string) => index.get(id) ?? (index.set(id, ids.length), ids.push(id), ids.length - 1);
    const edgeIndex = new Map<GraphEdge, number>();
    const edges: GraphEdge[] = [];
    const lists = (byId: Map<string, GraphEdge[]>) => {
      const owners = [...byId.keys()];
      const start = new Uint32Array(owners.length + 1);
      const members: number[] = [];
      owners.forEach((id, i) => {
        for (const e of byId.get(id)!) {
          let k = edgeIndex.get(e);
          if (k === undefined) edgeIndex.set(e, (k = edges.push(e) - 1));
          members.push(k);
        }
        start[i + 1] = members.length;
      });
      return { owners: Uint32Array.from(owners, at), start, members: Uint32Array.from(members) };
    };
    const listed = lists(this.edgesOf);
    const via = lists(this.supersededVia);
    return {
      arrays: {
        from: Uint32Array.from(edges, (e) => at(e.from)), to: Uint32Array.from(edges, (e) => at(e.to)),
        type: Uint8Array.from(edges, (e) => ENTRY_EDGE_TYPES.indexOf(e.type)), weight: Float64Array.from(edges, (e) => e.weight),
        listOwners: listed.owners, listStart: listed.start, listMembers: listed.members,
        viaOwners: via.owners, viaStart: via.start, viaMembers: via.members,
      },
      values: { ids, entries: this.entries.size },
    };
  }

  static fromSnapshot({ arrays, values }: SnapshotContent): EntryAdjacency {
    const ids = values.ids as string[];
    const adjacency = new EntryAdjacency(ids.slice(0, values.entries as number));
    adjacency.edgeByKey = undefined;
    const a = (name: string) => {
      const array = arrays[name];
      if (!array) throw new Error(`the snapshot lacks ${name}`);
      return array;
    };
    const [from, to, type, weight] = [a('from'), a('to'), a('type'), a('weight')];
    const edges = Array.from(from, (f, i): GraphEdge => ({ from: ids[f]!, to: ids[to[i]!]!, type: ENTRY_EDGE_TYPES[type[i]!]!, weight: weight[i]! }));
    const restore = (into: Map<string, GraphEdge[]>, owners: ArrayLike<number>, start: ArrayLike<number>, members: ArrayLike<number>) => {
      for (let i = 0; i < owners.length; i++) {
        const list: GraphEdge[] = [];
        for (let k = start[i]!; k < start[i + 1]!; k++) list.push(edges[members[k]!]!);
        into.set(ids[owners[i]!]!, list);
      }
    };
    restore(adjacency.edgesOf, a('listOwners'), a('listStart'), a('listMembers'));
    restore(adjacency.supersededVia, a('viaOwners'), a('viaStart'), a('viaMembers'));
    return adjacency;
  }

  hasEntry(id: string): boolean {
    return this.entries.has(id);
  }

  addEntries(ids: Iterable<string>): void {
    for (const id of ids) this.entries.add(id);
  }

  /** Adds edges; an edge of the same type between the same ends (in order) is replaced. */
  upsert(edges: Iterable<GraphEdge>): void {
    for (const e of edges) {
      const existing = this.byKey.get(edgeKey(e));
      if (existing) {
        existing.weight = e.weight;
        continue;
      }
      const edge = { from: e.from, to: e.to, type: e.type, weight: e.weight };
      this.byKey.set(edgeKey(e), edge);
      this.add(edge);
    }
  }

  /** Lists a new edge under its ends. */
  private add(edge: GraphEdge): void {
    this.listOf(edge.from).push(edge);
    if (edge.to !== edge.from) this.listOf(edge.to).push(edge);
    if (edge.type === 'SUPERSEDES') {
      const list = this.supersededVia.get(edge.to);
      if (list) list.push(edge);
      else this.supersededVia.set(edge.to, [edge]);
    }
  }

  /**
   * Forgets entries and every edge touching them. Each surviving entry's list is filtered once for
   * the whole batch: deleting a thousand lessons that all link to a hub must not filter the hub's
   * 100K edges a thousand times.
   */
  removeEntries(ids: Iterable<string>): void {
    const gone = new Set(ids);
    const removed = new Set<GraphEdge>();
    for (const id of gone) for (const e of this.edgesOf.get(id) ?? NO_EDGES) removed.add(e);
    const touched = new Set<string>();
    const touchedVia = new Set<string>();
    for (const e of removed) {
      this.byKey.delete(edgeKey(e));
      if (!gone.has(e.from)) touched.add(e.from);
      if (!gone.has(e.to)) touched.add(e.to);
      if (e.type === 'SUPERSEDES' && !gone.has(e.to)) touchedVia.add(e.to);
    }
    for (const id of touched) this.edgesOf.set(id, this.edgesOf.get(id)!.filter((e) => !removed.has(e)));
    for (const id of touchedVia) this.supersededVia.set(id, this.supersededVia.get(id)!.filter((e) => !removed.has(e)));
    for (const id of gone) {
      this.supersededVia.delete(id);
      this.edgesOf.delete(id);
      this.entries.delete(id);
    }
  }

  has(e: Pick<GraphEdge, 'from' | 'to' | 'type'>): boolean {
    return this.byKey.has(edgeKey(e));
  }

  /** Edges touching the entry, of every type. */
  degree(id: string): number {
    return this.edgesOf.get(id)?.length ?? 0;
  }

  /**
   * Every seed's entries within `depth` hops over `edgeTypes`, each with its fewest hops (the seed
   * itself left out). An entry with more than `hubDegree` edges is reached, not walked from: one
   * entry linked from everything would otherwise put the whole store two hops from every seed.
   */
  reach(seedIds: readonly string[], opts: { depth: number; edgeTypes: readonly EntryEdgeType[]; direction?: Direction; hubDegree?: number }): GraphHit[] {
    const hubDegree = opts.hubDegree ?? Infinity;
    const types = new Set(opts.edgeTypes);
    const direction = opts.direction ?? 'both';
    const hits: GraphHit[] = [];
    for (const seedId of new Set(seedIds)) {
      const seen = new Set([seedId]);
      for (let frontier = [seedId], hops = 1; frontier.length > 0 && hops <= opts.depth; hops++) {
        const next: string[] = [];
        for (const node of frontier) {
          const edges = this.edgesOf.get(node) ?? NO_EDGES;
          if (edges.length > hubDegree) continue;
          for (const e of edges) {
            if (!types.has(e.type)) continue;
            // Along the edge, against it, or (a self loop aside) to its other end.
            const target = e.from === node && direction !== 'incoming' ? e.to : e.to === node && direction !== 'outgoing' ? e.from : undefined;
            if (target === undefined || seen.has(target)) continue;
            seen.add(target);
            next.push(target);
            hits.push({ seedId, targetId: target, hops });
          }
        }
        frontier = next;
      }
    }
    return hits;
  }

  /**
   * Every edge of `edgeTypes` whose two ends are both among `ids`, each found at its `from` end.
   * One entry among them with far more edges than there are ids (a hub) is not walked: its edges
   * to the others are found at their ends instead.
   */
  edgesAmong(ids: readonly string[], edgeTypes: readonly EntryEdgeType[]): GraphEdge[] {
    const wanted = new Set(ids);
    const types = new Set(edgeTypes);
    const big = [...wanted].filter((id) => this.degree(id) > Math.max(1024, 4 * wanted.size));
    const hub = big.length === 1 ? big[0] : undefined;
    const found: GraphEdge[] = [];
    for (const id of wanted) {
      if (id === hub) continue;
      for (const e of this.edgesOf.get(id) ?? NO_EDGES) {
        if (!types.has(e.type)) continue;
        const from = e.from === id ? wanted.has(e.to) : e.to === id && e.from === hub;
        if (from) found.push({ from: e.from, to: e.to, type: e.type, weight: e.weight });
      }
    }
    return found;
  }

  /** For each id that a newer entry supersedes: the newer entry (the first by id when several do). */
  supersededBy(ids: readonly string[]): Map<string, string> {
    const by = new Map<string, string>();
    for (const id of ids) {
      let newer: string | undefined;
      for (const e of this.supersededVia.get(id) ?? NO_EDGES) {
        if (e.from !== id && (newer === undefined || e.from < newer)) newer = e.from;
      }
      if (newer !== undefined) by.set(id, newer);
    }
    return by;
  }

  private listOf(id: string): GraphEdge[] {
    let list = this.edgesOf.get(id);
    if (!list) this.edgesOf.set(id, (list = []));
    return list;
  }
}
