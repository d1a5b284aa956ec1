/**
 * Group commit: the upsert intents of writes that queued while a commit was in flight, collected
 * into one journaled commit (one journal record, one LanceDB write, one graph write). Each write is
 * prepared (checked, embedded, auto-linked) on its own against the committed stores; a write whose
 * intent touches what an earlier one of the group writes could have been prepared differently had
 * it waited, so it is refused here and runs again in the next group (see engine/groupCommit.ts).
 */
import type { AutoLinkOptions } from '../ingest/autoLink.js';
import { findLinks } from '../ingest/autoLink.js';
import { MemcoreError } from '../model/errors.js';
import type { Relation } from '../model/types.js';
import type { StoredEntry } from './lance/entriesTable.js';

/** What a write hands `Stores.apply` beside its intent. */
export interface Written {
  blobs?: readonly Float32Array[];
  upserted?: readonly StoredEntry[];
  /** The write auto-linked its entries (against the committed stores): links to others of its group are found at commit. */
  autoLink?: AutoLinkOptions;
}

/** The one intent kind a group merges; structurally the upsert of stores.ts's WriteIntent. */
export interface GroupableUpsert {
  op: 'upsert';
  entries: { entry: { id: string }; vector: number | string; vectorSmall: number | string }[];
  newIds?: string[];
  projection?: unknown;
  graph: {
    entries: { id: string }[];
    codeLocations: { id: string }[];
    goldenPaths: { id: string }[];
    relations: Relation[];
  };
  sources: Record<string, string>;
  remove?: unknown;
  manifests?: unknown;
}

/** Thrown to a write that must wait for the next group: the engine runs it again, never its caller. */
export class NextGroup extends MemcoreError {
  constructor(why: string) {
    super(`this write waits for the next group commit (${why})`, 'STORE');
    this.name = 'NextGroup';
  }
}

interface Member<I> {
  intent: I;
  written: Written;
  settle: (error: unknown) => void;
}

/** What a group holds while the engine prepares its writes one after another. */
export class WriteGroup<I extends { op: string }> {
  private readonly members: Member<I>[] = [];
  /** Ids the members write (entries, code locations, golden paths, both ends of a SUPERSEDES). */
  private readonly written = new Set<string>();
  /** Ids the members' relations point at. */
  private readonly referenced = new Set<string>();
  private closed = false;
  /** Texts the group's writes will embed, embedded for them in one call before they run (engine/groupCommit.ts). */
  readonly embedded = new Map<string, Float32Array>();
  private heard: ((how: 'joined' | 'alone') => void) | undefined;

  get size(): number {
    return this.members.length;
  }

  /** Resolves when the write being prepared now hands its intent over: joined the group, or to be committed alone at once. */
  nextOffer(): Promise<'joined' | 'alone'> {
    return new Promise((resolve) => (this.heard = resolve));
  }

  /**
   * Takes a write's intent into the group and returns the promise of its commit; undefined when
   * the write must be committed alone, now (the group is closed, or it is the first write and
   * not an upsert a group can merge). Throws NextGroup when it must wait for the next group.
   */
  offer(intent: I, written: Written): Promise<void> | undefined {
    if (this.closed) return undefined;
    const upsert = groupable(intent);
    if (!upsert) {
      if (this.members.length > 0) throw new NextGroup(`a ${intent.op} is committed alone`);
      this.closed = true;
      this.heard?.('alone');
      return undefined;
    }
    const { writes, refers } = touched(upsert);
    const clash = [...writes, ...refers].find((id) => this.written.has(id)) ?? writes.find((id) => this.referenced.has(id));
    if (clash !== undefined) throw new NextGroup(`${clash} is written by an earlier write of the group`);
    writes.forEach((id) => this.written.add(id));
    refers.forEach((id) => this.referenced.add(id));
    const committed = new Promise<void>((resolve, reject) =>
      this.members.push({ intent, written, settle: (e) => (e === undefined ? resolve() : reject(e)) }),
    );
    this.heard?.('joined');
    return committed;
  }

  /** Stops taking intents: later ones are committed alone. Returns the members to commit. */
  close(): { intent: I; written: Written }[] {
    this.closed = true;
    return this.members.map(({ intent, written }) => ({ intent, written }));
  }

  /** Answers every member: all committed, or all failed with the commit's error. */
  settle(error: unknown): void {
    for (const m of this.members) m.settle(error);
  }
}

function groupable<I extends { op: string }>(intent: I): GroupableUpsert | undefined {
  const u = intent as unknown as GroupableUpsert;
  // A sync's removal, manifests and a first projection fit each read the whole store: alone.
  return u.op === 'upsert' && !u.remove && !u.manifests && !u.projection ? u : undefined;
}

function touched(u: GroupableUpsert): { writes: string[]; refers: string[] } {
  const writes = [
    ...u.entries.map((e) => e.entry.id),
    ...u.graph.entries.map((e) => e.id),
    ...u.graph.codeLocations.map((c) => c.id),
    ...u.graph.goldenPaths.map((g) => g.id),
    // A SUPERSEDES is checked for cycles against the committed graph: both its ends count as written.
    ...u.graph.relations.filter((r) => r.type === 'SUPERSEDES').flatMap((r) => [r.from, r.to]),
  ];
  return { writes, refers: u.graph.relations.flatMap((r) => [r.from, r.to]) };
}

/**
 * The members' upserts as one: entries and graph parts in order, vector indexes moved onto one
 * list of blobs, sources merged (a later write's fingerprint wins), and the mention links between
 * entries of different members that auto-linking each alone could not see.
 */
export function mergeUpserts<U extends GroupableUpsert>(members: { intent: U; written: Written }[]): { intent: U; written: Written } {
  const blobs: Float32Array[] = [];
  const entries: U['entries'] = [];
  const upserted: StoredEntry[] = [];
  let allUpserted = true;
  const graph: U['graph'] = { entries: [], codeLocations: [], goldenPaths: [], relations: [] };
  const newIds: string[] = [];
  let sources: Record<string, string> = {};
  for (const { intent, written } of members) {
    const offset = blobs.length;
    blobs.push(...(written.blobs ?? []));
    const moved = (v: number | string) => (typeof v === 'number' ? v + offset : v);
    entries.push(...intent.entries.map((e) => ({ ...e, vector: moved(e.vector), vectorSmall: moved(e.vectorSmall) })));
    if (written.upserted) upserted.push(...written.upserted);
    else allUpserted = false;
    graph.entries.push(...intent.graph.entries);
    graph.codeLocations.push(...intent.graph.codeLocations);
    graph.goldenPaths.push(...intent.graph.goldenPaths);
    graph.relations.push(...intent.graph.relations);
    newIds.push(...(intent.newIds ?? []));
    sources = { ...sources, ...intent.sources };
  }
  graph.relations.push(...linksAcross(members));
  const first = members[0]!.intent;
  return {
    intent: { ...first, entries, newIds, graph, sources },
    written: { blobs, ...(allUpserted ? { upserted } : {}) },
  };
}

/** Mention links between entries of different members, for members that auto-link (only those touching one of theirs). */
function linksAcross(members: { intent: GroupableUpsert; written: Written }[]): Relation[] {
  const linking = members.filter((m) => m.written.autoLink);
  if (linking.length === 0 || members.length < 2) return [];
  const memberOf = new Map<string, number>();
  const corpus = members.flatMap((m, i) =>
    (m.written.upserted ?? []).map(({ entry }) => {
      memberOf.set(entry.id, i);
      return { id: entry.id, title: entry.title, aliases: entry.aliases, content: entry.content };
    }),
  );
  const focus = new Set(linking.flatMap((m) => (m.written.upserted ?? []).map((s) => s.entry.id)));
  const stated = new Set(members.flatMap((m) => m.intent.graph.relations.map((r) => `${r.type}\u0000${r.from}\u0000${r.to}`)));
  return findLinks(corpus, [], focus, linking[0]!.written.autoLink).filter(
    (r) => memberOf.get(r.from) !== memberOf.get(r.to) && !stated.has(`${r.type}\u0000${r.from}\u0000${r.to}`),
  );
}
