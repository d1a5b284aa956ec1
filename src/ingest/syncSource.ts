/**
 * Makes the store follow a source: the records a source wrote before and no longer holds are
 * removed. Which source wrote what is kept in its manifest (store/sourceManifests.ts).
 */
import type { MemoryDocument } from '../model/memoryFile.js';
import type { RelationRef } from '../store/graph/graphStore.js';
import { readManifest, readManifests, type RecordRemoval, type SourceManifest } from '../store/sourceManifests.js';
import type { Stores } from '../store/stores.js';

/** What a sync did besides the upserts (`IngestReport.sync`). */
export interface SyncReport {
  /** Records the source no longer holds, removed from the store. */
  removed: { entries: number; codeLocations: number; goldenPaths: number; relations: number };
  /**
   * Entries the source no longer holds that other entries still DEPENDS_ON: kept, but expired
   * (`valid_to` set to now), so they leave answers while the dependent's link still resolves.
   */
  expired: string[];
  /** Code locations the source no longer holds that entries or golden paths of other sources still reference: kept. */
  keptInUse: string[];
}

export interface SyncPlan {
  removal: RecordRemoval;
  /** Entry ids to expire rather than remove. */
  expire: string[];
  keptInUse: string[];
  /** The source's manifest after this write. */
  manifest: SourceManifest;
  /** False when the manifest on disk already says this. */
  manifestChanged: boolean;
}

const relationKey = (r: RelationRef) => `${r.type}\u0000${r.from}\u0000${r.to}`;

function manifestOf(source: string, doc: MemoryDocument): SourceManifest {
  return {
    source,
    entries: doc.entries.map((e) => e.id),
    codeLocations: doc.codeLocations.map((c) => c.id),
    goldenPaths: doc.goldenPaths.map((p) => p.id),
    relations: doc.relations.map((r) => ({ type: r.type, from: r.from, to: r.to })),
  };
}

function union(a: SourceManifest, b: SourceManifest): SourceManifest {
  const ids = (x: string[], y: string[]) => [...new Set([...x, ...y])];
  const relations = new Map([...a.relations, ...b.relations].map((r) => [relationKey(r), r]));
  return { source: a.source, entries: ids(a.entries, b.entries), codeLocations: ids(a.codeLocations, b.codeLocations), goldenPaths: ids(a.goldenPaths, b.goldenPaths), relations: [...relations.values()] };
}

function sameManifest(a: SourceManifest | null, b: SourceManifest): boolean {
  if (!a) return false;
  const same = (x: string[], y: string[]) => x.length === y.length && x.every((v) => y.includes(v));
  return same(a.entries, b.entries) && same(a.codeLocations, b.codeLocations) && same(a.goldenPaths, b.goldenPaths) &&
    same(a.relations.map(relationKey), b.relations.map(relationKey));
}

/**
 * What writing `doc` as everything `source` holds removes (with `sync`), and the manifest the
 * source keeps. Without `sync` nothing is removed and the manifest keeps claiming what the source
 * wrote before, so a later sync still removes it.
 */
export async function planSync(stores: Stores, source: string, doc: MemoryDocument, sync: boolean): Promise<SyncPlan> {
  const before = await readManifest(stores.dir, source);
  const now = manifestOf(source, doc);
  const none: RecordRemoval = { entries: [], codeLocations: [], goldenPaths: [], relations: [] };
  if (!before || !sync) {
    const manifest = before ? union(before, now) : now;
    return { removal: none, expire: [], keptInUse: [], manifest, manifestChanged: !sameManifest(before, manifest) };
  }
  const gone = <T>(old: T[], kept: T[], key: (x: T) => string) => {
    const still = new Set(kept.map(key));
    return old.filter((x) => !still.has(key(x)));
  };
  const self = (x: string) => x;
  let entries = gone(before.entries, now.entries, self);
  let codeLocations = gone(before.codeLocations, now.codeLocations, self);
  let goldenPaths = gone(before.goldenPaths, now.goldenPaths, self);
  let relations = gone(before.relations, now.relations, relationKey);
  if (entries.length + codeLocations.length + goldenPaths.length + relations.length === 0) {
    return { removal: none, expire: [], keptInUse: [], manifest: now, manifestChanged: !sameManifest(before, now) };
  }

  // A record another source also wrote stays: it is still in a source.
  const others = (await readManifests(stores.dir)).filter((m) => m.source !== source);
  const claimed = (pick: (m: SourceManifest) => string[]) => new Set(others.flatMap(pick));
  const claimedEntries = claimed((m) => m.entries);
  const claimedCode = claimed((m) => m.codeLocations);
  const claimedPaths = claimed((m) => m.goldenPaths);
  const claimedRelations = claimed((m) => m.relations.map(relationKey));
  entries = entries.filter((id) => !claimedEntries.has(id));
  codeLocations = codeLocations.filter((id) => !claimedCode.has(id));
  goldenPaths = goldenPaths.filter((id) => !claimedPaths.has(id));
  relations = relations.filter((r) => !claimedRelations.has(relationKey(r)));

  const leaving = new Set([...entries, ...goldenPaths]);
  const removedEdges = new Set(relations.map(relationKey));
  const stays = (r: RelationRef) => !leaving.has(r.from) && !removedEdges.has(relationKey(r));
  const expire = [...new Set((await stores.graph.edgesInto(entries, ['DEPENDS_ON'])).filter(stays).map((r) => r.to))];
  const keptInUse = [...new Set((await stores.graph.edgesInto(codeLocations, ['REFERENCES_CODE', 'PATH_STEP'])).filter(stays).map((r) => r.to))];
  const expiring = new Set(expire);
  const inUse = new Set(keptInUse);
  const removal = {
    entries: entries.filter((id) => !expiring.has(id)),
    codeLocations: codeLocations.filter((id) => !inUse.has(id)),
    goldenPaths,
    relations,
  };
  // Kept records stay in the manifest, so that a later sync removes them once nothing needs them.
  const manifest = { ...now, entries: [...now.entries, ...expire], codeLocations: [...now.codeLocations, ...keptInUse] };
  return { removal, expire, keptInUse, manifest, manifestChanged: true };
}
