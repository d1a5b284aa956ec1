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
  /** The manifests that change with this write (one per source whose records changed). */
  manifests: SourceManifest[];
}

/** A source a write records, with the records it now holds. */
export interface SourcePart {
  source: string;
  /** The source file's hash, kept in its manifest. */
  hash?: string;
  doc: Pick<MemoryDocument, 'entries' | 'codeLocations' | 'goldenPaths' | 'relations'>;
}

const relationKey = (r: RelationRef) => `${r.type}\u0000${r.from}\u0000${r.to}`;

function manifestOf({ source, hash, doc }: SourcePart): SourceManifest {
  return {
    source,
    ...(hash !== undefined ? { hash } : {}),
    entries: doc.entries.map((e) => e.id),
    codeLocations: doc.codeLocations.map((c) => c.id),
    goldenPaths: doc.goldenPaths.map((p) => p.id),
    relations: doc.relations.map((r) => ({ type: r.type, from: r.from, to: r.to })),
  };
}
function union(a: SourceManifest, b: SourceManifest): SourceManifest {
  const ids = (x: string[], y: string[]) => [...new Set([...x, ...y])];
  const relations = new Map([...a.relations, ...b.relations].map((r) => [relationKey(r), r]));
  return {
    source: a.source,
    ...(b.hash !== undefined ? { hash: b.hash } : {}),
    entries: ids(a.entries, b.entries),
    codeLocations: ids(a.codeLocations, b.codeLocations),
    goldenPaths: ids(a.goldenPaths, b.goldenPaths),
    relations: [...relations.values()],
  };
}

function sameManifest(a: SourceManifest | null, b: SourceManifest): boolean {
  if (!a) return false;
  const same = (x: string[], y: string[]) => x.length === y.length && x.every((v) => y.includes(v));
  return (
    a.hash === b.hash &&
    same(a.entries, b.entries) &&
    same(a.codeLocations, b.codeLocations) &&
    same(a.goldenPaths, b.goldenPaths) &&
    same(a.relations.map(relationKey), b.relations.map(relationKey))
  );
}

/**
 * What writing each part as everything its source holds removes (with `sync`), and the manifests
 * the sources keep. Without `sync` nothing is removed and a manifest keeps claiming what its
 * source wrote before, so a later sync still removes it. A record that leaves one part of the
 * write and joins another, or that a source outside the write still holds, stays.
 */
export async function planSync(stores: Stores, parts: readonly SourcePart[], sync: boolean): Promise<SyncPlan> {
  const befores = await Promise.all(parts.map((p) => readManifest(stores.dir, p.source)));
  const nows = parts.map(manifestOf);
  const none = (): RecordRemoval => ({ entries: [], codeLocations: [], goldenPaths: [], relations: [] });
  const gone = <T>(old: T[], kept: T[], key: (x: T) => string) => {
    const still = new Set(kept.map(key));
    return old.filter((x) => !still.has(key(x)));
  };
  const self = (x: string) => x;
  const leavingByPart = nows.map((now, i) => {
    const before = befores[i];
    if (!before || !sync) return none();
    return {
      entries: gone(before.entries, now.entries, self),
      codeLocations: gone(before.codeLocations, now.codeLocations, self),
      goldenPaths: gone(before.goldenPaths, now.goldenPaths, self),
      relations: gone(before.relations, now.relations, relationKey),
    };
  });
  const leavingCount = leavingByPart.reduce(
    (n, r) => n + r.entries.length + r.codeLocations.length + r.goldenPaths.length + r.relations.length,
    0,
  );
  const manifestsFor = (expire: Set<string>, inUse: Set<string>) =>
    nows.flatMap((now, i) => {
      const before = befores[i] ?? null;
      let manifest = now;
      if (before && !sync) manifest = union(before, now);
      // Kept records stay in the manifest, so that a later sync removes them once nothing needs them.
      else if (before)
        manifest = {
          ...now,
          entries: [...now.entries, ...leavingByPart[i]!.entries.filter((id) => expire.has(id))],
          codeLocations: [...now.codeLocations, ...leavingByPart[i]!.codeLocations.filter((id) => inUse.has(id))],
        };
      return sameManifest(before, manifest) ? [] : [manifest];
    });
  if (leavingCount === 0) return { removal: none(), expire: [], keptInUse: [], manifests: manifestsFor(new Set(), new Set()) };

  // A record another source holds stays: sources outside this write as on disk, those in it as they are now.
  const inWrite = new Set(parts.map((p) => p.source));
  const others = [...(await readManifests(stores.dir)).filter((m) => !inWrite.has(m.source)), ...nows];
  const claimed = (pick: (m: SourceManifest) => string[]) => new Set(others.flatMap(pick));
  const claimedEntries = claimed((m) => m.entries);
  const claimedCode = claimed((m) => m.codeLocations);
  const claimedPaths = claimed((m) => m.goldenPaths);
  const claimedRelations = claimed((m) => m.relations.map(relationKey));
  const all = <T>(pick: (r: RecordRemoval) => T[]) => leavingByPart.flatMap(pick);
  const entries = [...new Set(all((r) => r.entries).filter((id) => !claimedEntries.has(id)))];
  const codeLocations = [...new Set(all((r) => r.codeLocations).filter((id) => !claimedCode.has(id)))];
  const goldenPaths = [...new Set(all((r) => r.goldenPaths).filter((id) => !claimedPaths.has(id)))];
  const relations = [
    ...new Map(
      all((r) => r.relations)
        .filter((r) => !claimedRelations.has(relationKey(r)))
        .map((r) => [relationKey(r), r]),
    ).values(),
  ];

  const leaving = new Set([...entries, ...goldenPaths]);
  const removedEdges = new Set(relations.map(relationKey));
  const stays = (r: RelationRef) => !leaving.has(r.from) && !removedEdges.has(relationKey(r));
  const expire = [...new Set((await stores.graph.edgesInto(entries, ['DEPENDS_ON'])).filter(stays).map((r) => r.to))];
  const keptInUse = [
    ...new Set((await stores.graph.edgesInto(codeLocations, ['REFERENCES_CODE', 'PATH_STEP'])).filter(stays).map((r) => r.to)),
  ];
  const expiring = new Set(expire);
  const inUse = new Set(keptInUse);
  const removal = {
    entries: entries.filter((id) => !expiring.has(id)),
    codeLocations: codeLocations.filter((id) => !inUse.has(id)),
    goldenPaths,
    relations,
  };
  return { removal, expire, keptInUse, manifests: manifestsFor(expiring, inUse) };
}
