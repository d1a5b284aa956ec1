import { ENTRY_EDGE_TYPES, type EntryEdgeType } from '../../model/types.js';
import type { SnapshotContent } from '../snapshot/snapshotFile.js';
import type { Direction, GraphEdge, GraphHit } from './graphStore.js';

/** An edge as held: `serial` is its place in the edge list of the last snapshot (see `snapshot`). */
type HeldEdge = GraphEdge & { serial: number };

const NO_EDGES: readonly HeldEdge[] = [];

/**
 * A snapshot's edges and lists as read (see `EntryAdjacency.snapshot`), with what has been decoded
 * of them. A list not decoded is read in place by the queries: a write decodes the lists of both
 * ends of every edge it touches, so an undecoded list and each edge on it are as the snapshot says.
 */
interface SnapshotLists {
  ids: string[];
  /** The slot of each entry with a list in the snapshot, decoded or not (a removed entry's is deleted). */
  slotOf: Map<string, number>;
  /** 1 where the slot's list moved into `edgesOf` and is no longer read here. */
  listTaken: Uint8Array;
  listStart: ArrayLike<number>;
  listMembers: ArrayLike<number>;
  /** The via list of each superseded entry (see `listTaken`). */
  viaOf: Map<string, number>;
  viaTaken: Uint8Array;
  viaStart: ArrayLike<number>;
  viaMembers: ArrayLike<number>;
  from: ArrayLike<number>;
  to: ArrayLike<number>;
  type: ArrayLike<number>;
  weight: ArrayLike<number>;
  decoded: (HeldEdge | undefined)[];
  /** `edgesAmong`'s marks by slot: a slot is wanted when its mark equals the call's `epoch`. */
  mark: Uint32Array;
  epoch: number;
}

/** The edge types as bits of ENTRY_EDGE_TYPES' indices, as a snapshot stores an edge's type. */
function typeBits(edgeTypes: Iterable<EntryEdgeType>): number {
  let bits = 0;
  for (const t of edgeTypes) bits |= 1 << ENTRY_EDGE_TYPES.indexOf(t);
  return bits;
}

/**
 * The entry ids and entry-to-entry edges (RELATED, DEPENDS_ON, SUPERSEDES) in memory, for the
 * reads every query makes (reach from the seeds, edges among candidates, supersession) and for
 * writes, which then need not ask Kuzu which rows exist. A Kuzu round trip costs
 * 40–90 ms at 100K entries whatever it asks; a breadth-first walk here costs microseconds. The
 * graph database stays the system of record: this is loaded from it once and kept in step by the
 * writes that go through the same store (Kuzu's file lock keeps other processes from writing).
 */
export class EntryAdjacency {
  /**
   * Every edge touching an entry, listed under both ends (one shared object per edge): all of them
   * in an adjacency built from edges, and after a snapshot only the lists writes have touched since.
   */
  private readonly edgesOf = new Map<string, HeldEdge[]>();
  /**
   * SUPERSEDES edges by the entry they supersede: what `supersededBy` asks of every candidate,
   * without walking the edges of a hub (100K of them) to find the one or two.
   */
  private readonly supersededVia = new Map<string, HeldEdge[]>();
  private entriesHeld: Set<string> | undefined;
  /** A snapshot's entry ids, made a set when first asked (writes and existence checks; a query's walk does not). */
  private entriesToCome: (() => string[]) | undefined;
  /**
   * The lists of the last snapshot loaded or taken, read in place by queries: no edge object is
   * built until a write touches its list (one object an edge cost 130–240 ms for 670K edges on a
   * fresh process's first query, and the collector's time for as long as they are held).
   * Undefined once every list is decoded.
   */
  private lazy: SnapshotLists | undefined;

  constructor(entryIds: Iterable<string> = [], edges: Iterable<GraphEdge> = []) {
    this.entriesHeld = new Set(entryIds);
    this.upsert(edges);
  }

  private get entries(): Set<string> {
    if (!this.entriesHeld) {
      this.entriesHeld = new Set(this.entriesToCome!());
      this.entriesToCome = undefined;
    }
    return this.entriesHeld;
  }

  /**
   * The held edge of `type` from `from` to `to`, looked for in the shorter of its ends' lists: a
   * map keyed by every edge cost ~200 MB and ~3 s to build at 3M edges, and a hub's list is never
   * the shorter one.
   */
  private find(e: Pick<GraphEdge, 'from' | 'to' | 'type'>): HeldEdge | undefined {
    const atFrom = this.edgesAt(e.from);
    const atTo = this.edgesAt(e.to);
    if (!atFrom || !atTo) return undefined;
    for (const held of atFrom.length <= atTo.length ? atFrom : atTo) {
      if (held.from === e.from && held.to === e.to && held.type === e.type) return held;
    }
    return undefined;
  }

  /**
   * The entries and edges, for a snapshot file: ids once each, edges as indices into them, and
   * every list in its order (a walk visits edges in list order, which ties in ranking follow).
   */
  snapshot(): SnapshotContent {
    this.decodeAll();
    // Ids numbered in the order of the edge lists, so that an edge's ends are known from the lists
    // it is in, and every edge numbered once, at its `from` end: looking ids or edges up in maps
    // cost seconds at 1M entries and 3M edges.
    const ids = [...this.edgesOf.keys()];
    const owned = ids.length;
    for (const id of this.entries) if (!this.edgesOf.has(id)) ids.push(id);
    const isEntry = Uint8Array.from(ids, (id, i) => (i >= owned || this.entries.has(id) ? 1 : 0));
    const edges: HeldEdge[] = [];
    let listed = 0;
    for (const [id, list] of this.edgesOf) {
      listed += list.length;
      for (const e of list) if (e.from === id) e.serial = edges.push(e) - 1;
    }
    const from = new Uint32Array(edges.length);
    const to = new Uint32Array(edges.length);
    const listStart = new Uint32Array(owned + 1);
    const listMembers = new Uint32Array(listed);
    let owner = 0;
    let k = 0;
    for (const [id, list] of this.edgesOf) {
      for (const e of list) {
        listMembers[k++] = e.serial;
        if (e.from === id) from[e.serial] = owner;
        if (e.to === id) to[e.serial] = owner;
      }
      listStart[++owner] = k;
    }
    // A superseded entry's list: its edges all end at it (empty lists, left by removals, say nothing).
    const via = [...this.supersededVia.values()].filter((list) => list.length > 0);
    const viaStart = new Uint32Array(via.length + 1);
    via.forEach((list, i) => (viaStart[i + 1] = viaStart[i]! + list.length));
    const content: SnapshotContent = {
      arrays: {
        isEntry,
        from,
        to,
        type: Uint8Array.from(edges, (e) => ENTRY_EDGE_TYPES.indexOf(e.type)),
        weight: Float64Array.from(edges, (e) => e.weight),
        listStart,
        listMembers,
        viaOwners: Uint32Array.from(via, (list) => to[list[0]!.serial]!),
        viaStart,
        viaMembers: Uint32Array.from(via.flat(), (e) => e.serial),
      },
      values: { ids },
    };
    // From now on the lists are read in place, as after a load: one object an edge costs the
    // collector, and a query walking them chases a pointer an edge.
    this.edgesOf.clear();
    this.supersededVia.clear();
    this.lazy = EntryAdjacency.listsOf(content);
    return content;
  }

  static fromSnapshot(content: SnapshotContent): EntryAdjacency {
    const ids = content.values.ids as string[];
    const isEntry = content.arrays.isEntry;
    if (!isEntry) throw new Error('the snapshot lacks isEntry');
    const adjacency = new EntryAdjacency();
    adjacency.entriesHeld = undefined;
    adjacency.entriesToCome = () => ids.filter((_, i) => isEntry[i] === 1);
    adjacency.lazy = EntryAdjacency.listsOf(content);
    return adjacency;
  }

  private static listsOf({ arrays, values }: SnapshotContent): SnapshotLists {
    const ids = values.ids as string[];
    const a = (name: string) => {
      const array = arrays[name];
      if (!array) throw new Error(`the snapshot lacks ${name}`);
      return array;
    };
    const listStart = a('listStart');
    const owned = listStart.length - 1;
    const viaOwners = a('viaOwners');
    const from = a('from');
    // Set one by one: a pair array an entry, as new Map(pairs) takes them, cost ~1.5x at 1M.
    const slotOf = new Map<string, number>();
    for (let i = 0; i < owned; i++) slotOf.set(ids[i]!, i);
    return {
      ids,
      slotOf,
      listTaken: new Uint8Array(owned),
      listStart,
      listMembers: a('listMembers'),
      viaOf: new Map(Array.from(viaOwners, (owner, i) => [ids[owner]!, i])),
      viaTaken: new Uint8Array(viaOwners.length),
      viaStart: a('viaStart'),
      viaMembers: a('viaMembers'),
      from,
      to: a('to'),
      type: a('type'),
      weight: a('weight'),
      decoded: new Array<HeldEdge | undefined>(from.length),
      mark: new Uint32Array(owned),
      epoch: 0,
    };
  }

  /** The edge numbered `serial` in the snapshot, one object however many lists hold it. */
  private snapshotEdge(lazy: SnapshotLists, serial: number): HeldEdge {
    let edge = lazy.decoded[serial];
    if (!edge) {
      edge = {
        from: lazy.ids[lazy.from[serial]!]!,
        to: lazy.ids[lazy.to[serial]!]!,
        type: ENTRY_EDGE_TYPES[lazy.type[serial]!]!,
        weight: lazy.weight[serial]!,
        serial,
      };
      lazy.decoded[serial] = edge;
    }
    return edge;
  }

  /** Every edge touching the entry, decoding its snapshot list the first time it is asked for. */
  private edgesAt(id: string): HeldEdge[] | undefined {
    const lazy = this.lazy;
    return (
      this.edgesOf.get(id) ?? (lazy && this.decodeList(this.edgesOf, lazy.slotOf, lazy.listTaken, lazy.listStart, lazy.listMembers, id))
    );
  }

  /** The SUPERSEDES edges ending at the entry, decoded alike. */
  private supersedingAt(id: string): HeldEdge[] | undefined {
    const lazy = this.lazy;
    return (
      this.supersededVia.get(id) ??
      (lazy && this.decodeList(this.supersededVia, lazy.viaOf, lazy.viaTaken, lazy.viaStart, lazy.viaMembers, id))
    );
  }

  /** Moves list `slots[id]` of a snapshot (its edges `members[start[i]…start[i+1]]`) into `held`. */
  private decodeList(
    held: Map<string, HeldEdge[]>,
    slots: Map<string, number>,
    taken: Uint8Array,
    start: ArrayLike<number>,
    members: ArrayLike<number>,
    id: string,
  ): HeldEdge[] | undefined {
    const i = slots.get(id);
    if (i === undefined || taken[i] === 1) return undefined;
    taken[i] = 1;
    const list: HeldEdge[] = [];
    for (let k = start[i]!; k < start[i + 1]!; k++) list.push(this.snapshotEdge(this.lazy!, members[k]!));
    held.set(id, list);
    return list;
  }

  /** A snapshot list not decoded: its slot, or -1. */
  private unreadSlot(id: string): number {
    const lazy = this.lazy;
    const slot = lazy?.slotOf.get(id);
    return slot === undefined || lazy!.listTaken[slot] === 1 ? -1 : slot;
  }

  /** Decodes every list not yet asked for (a snapshot, or a write that must see them all). */
  private decodeAll(): void {
    const lazy = this.lazy;
    if (!lazy) return;
    for (const id of lazy.slotOf.keys()) this.edgesAt(id);
    for (const id of lazy.viaOf.keys()) this.supersedingAt(id);
    this.lazy = undefined;
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
      const existing = this.find(e);
      if (existing) {
        existing.weight = e.weight;
        continue;
      }
      const edge = { from: e.from, to: e.to, type: e.type, weight: e.weight, serial: -1 };
      this.add(edge);
    }
  }

  /** Lists a new edge under its ends. */
  private add(edge: HeldEdge): void {
    this.listOf(edge.from).push(edge);
    if (edge.to !== edge.from) this.listOf(edge.to).push(edge);
    if (edge.type === 'SUPERSEDES') {
      const list = this.supersedingAt(edge.to);
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
    const removed = new Set<HeldEdge>();
    for (const id of gone) for (const e of this.edgesAt(id) ?? NO_EDGES) removed.add(e);
    const touched = new Set<string>();
    const touchedVia = new Set<string>();
    for (const e of removed) {
      if (!gone.has(e.from)) touched.add(e.from);
      if (!gone.has(e.to)) touched.add(e.to);
      if (e.type === 'SUPERSEDES' && !gone.has(e.to)) touchedVia.add(e.to);
    }
    for (const id of touched)
      this.edgesOf.set(
        id,
        this.edgesAt(id)!.filter((e) => !removed.has(e)),
      );
    for (const id of touchedVia)
      this.supersededVia.set(
        id,
        this.supersedingAt(id)!.filter((e) => !removed.has(e)),
      );
    for (const id of gone) {
      // A list never decoded goes with its entry.
      this.lazy?.slotOf.delete(id);
      this.lazy?.viaOf.delete(id);
      this.supersededVia.delete(id);
      this.edgesOf.delete(id);
      this.entries.delete(id);
    }
  }

  has(e: Pick<GraphEdge, 'from' | 'to' | 'type'>): boolean {
    return this.find(e) !== undefined;
  }

  /** Edges touching the entry, of every type. */
  degree(id: string): number {
    const held = this.edgesOf.get(id);
    if (held) return held.length;
    const slot = this.unreadSlot(id);
    return slot < 0 ? 0 : this.lazy!.listStart[slot + 1]! - this.lazy!.listStart[slot]!;
  }

  /**
   * Every seed's entries within `depth` hops over `edgeTypes`, each with its fewest hops (the seed
   * itself left out). An entry with more than `hubDegree` edges is reached, not walked from: one
   * entry linked from everything would otherwise put the whole store two hops from every seed.
   */
  reach(
    seedIds: readonly string[],
    opts: { depth: number; edgeTypes: readonly EntryEdgeType[]; direction?: Direction; hubDegree?: number },
  ): GraphHit[] {
    const hubDegree = opts.hubDegree ?? Infinity;
    const bits = typeBits(opts.edgeTypes);
    const direction = opts.direction ?? 'both';
    const alongEdges = direction !== 'incoming';
    const againstEdges = direction !== 'outgoing';
    const hits: GraphHit[] = [];
    for (const seedId of new Set(seedIds)) {
      const seen = new Set([seedId]);
      for (let frontier = [seedId], hops = 1; frontier.length > 0 && hops <= opts.depth; hops++) {
        const next: string[] = [];
        const visit = (target: string) => {
          if (seen.has(target)) return;
          seen.add(target);
          next.push(target);
          hits.push({ seedId, targetId: target, hops });
        };
        for (const node of frontier) {
          // A hub is skipped by its degree, before its list is read.
          if (this.degree(node) > hubDegree) continue;
          const held = this.edgesOf.get(node);
          if (held) {
            for (const e of held) {
              if ((bits & (1 << ENTRY_EDGE_TYPES.indexOf(e.type))) === 0) continue;
              // Along the edge, against it, or (a self loop aside) to its other end.
              if (e.from === node && alongEdges) visit(e.to);
              else if (e.to === node && againstEdges) visit(e.from);
            }
            continue;
          }
          const slot = this.unreadSlot(node);
          if (slot < 0) continue;
          const { listStart, listMembers, from, to, type, ids } = this.lazy!;
          for (let k = listStart[slot]!, end = listStart[slot + 1]!; k < end; k++) {
            const edge = listMembers[k]!;
            if ((bits & (1 << type[edge]!)) === 0) continue;
            if (from[edge] === slot && alongEdges) visit(ids[to[edge]!]!);
            else if (to[edge] === slot && againstEdges) visit(ids[from[edge]!]!);
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
    const among = [...wanted];
    const bits = typeBits(edgeTypes);
    const big = among.filter((id) => this.degree(id) > Math.max(1024, 4 * wanted.size));
    const hub = big.length === 1 ? big[0] : undefined;
    const found: GraphEdge[] = [];
    // Snapshot lists are tested by slot: a mark per wanted slot, rather than a set of strings per edge.
    const lazy = this.lazy;
    const slots = lazy ? Int32Array.from(among, (id) => lazy.slotOf.get(id) ?? -1) : undefined;
    let hubSlot = -1;
    if (lazy) {
      lazy.epoch = (lazy.epoch + 1) >>> 0 || 1;
      if (lazy.epoch === 1) lazy.mark.fill(0); // wrapped around
      for (const [i, slot] of slots!.entries()) {
        if (slot >= 0) lazy.mark[slot] = lazy.epoch;
        if (among[i] === hub) hubSlot = slot;
      }
    }
    for (const [i, id] of among.entries()) {
      if (id === hub) continue;
      const held = this.edgesOf.get(id);
      if (held) {
        for (const e of held) {
          if ((bits & (1 << ENTRY_EDGE_TYPES.indexOf(e.type))) === 0) continue;
          const atFrom = e.from === id ? wanted.has(e.to) : e.to === id && e.from === hub;
          if (atFrom) found.push({ from: e.from, to: e.to, type: e.type, weight: e.weight });
        }
        continue;
      }
      const slot = slots?.[i] ?? -1;
      if (slot < 0 || lazy!.listTaken[slot] === 1) continue;
      const { listStart, listMembers, from, to, type, weight, mark, epoch, ids: idOf } = lazy!;
      for (let k = listStart[slot]!, end = listStart[slot + 1]!; k < end; k++) {
        const edge = listMembers[k]!;
        if ((bits & (1 << type[edge]!)) === 0) continue;
        const f = from[edge]!;
        const t = to[edge]!;
        const atFrom = f === slot ? mark[t] === epoch : t === slot && f === hubSlot;
        if (atFrom) found.push({ from: idOf[f]!, to: idOf[t]!, type: ENTRY_EDGE_TYPES[type[edge]!]!, weight: weight[edge]! });
      }
    }
    return found;
  }

  /** For each id that a newer entry supersedes: the newer entry (the first by id when several do). */
  supersededBy(ids: readonly string[]): Map<string, string> {
    const by = new Map<string, string>();
    const lazy = this.lazy;
    for (const id of ids) {
      let newer: string | undefined;
      const held = this.supersededVia.get(id);
      if (held) {
        for (const e of held) if (e.from !== id && (newer === undefined || e.from < newer)) newer = e.from;
      } else {
        const list = lazy?.viaOf.get(id);
        if (list !== undefined && lazy!.viaTaken[list] === 0) {
          for (let k = lazy!.viaStart[list]!, end = lazy!.viaStart[list + 1]!; k < end; k++) {
            const from = lazy!.ids[lazy!.from[lazy!.viaMembers[k]!]!]!;
            if (from !== id && (newer === undefined || from < newer)) newer = from;
          }
        }
      }
      if (newer !== undefined) by.set(id, newer);
    }
    return by;
  }

  private listOf(id: string): HeldEdge[] {
    let list = this.edgesAt(id);
    if (!list) this.edgesOf.set(id, (list = []));
    return list;
  }
}
