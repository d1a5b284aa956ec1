/**
 * What a read may show. In effect: what the project holds now (or as of a time), applied the same
 * way by every read that says "in effect". Named: an entry of a sensitivity not asked for is not
 * returned, and not named either, as the other end of a link or a step of a path.
 */
import type { EntryFilter } from '../model/entryFilter.js';
import { MemcoreError } from '../model/errors.js';
import { dropSuperseded } from '../retrieve/dropSuperseded.js';
import { ENTRY_EDGE_TYPES, SENSITIVITY_LEVELS, type EntryEdgeType, type MemoryEntry, type Sensitivity } from '../model/types.js';
import type { Direction } from '../store/graph/graphStore.js';
import type { Stores } from '../store/stores.js';
import type { EntryLink } from './remember.js';
import type { TraverseHit } from './engineOptions.js';

/**
 * The entries of `filter` in effect as of `asOf` (now when undefined): the filter's validity test
 * (`validAt`: valid_from, else created_at, up to valid_to) and its types (records such as
 * retractions are left out: `RECORD_ENTRY_TYPES`, set by `resolveFilter`), then no entry that a
 * successor in force supersedes. Searches and bundles apply the same two steps to their
 * candidates (entryFilterOf, then dropSuperseded); `list` and `core-memory` read through here.
 */
export async function entriesInEffect(stores: Stores, filter: EntryFilter, asOf: Date | undefined): Promise<MemoryEntry[]> {
  const rows = (await stores.table.read(filter)).map((s) => s.entry);
  return (await dropSuperseded(stores, rows, asOf ? { asOf } : {})).kept;
}

/** Of `ids`, those whose entries a read with this sensitivity may name. */
export async function visibleIds(stores: Stores, ids: Iterable<string>, sensitivity: Sensitivity[]): Promise<Set<string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0 || sensitivity.length === SENSITIVITY_LEVELS.length) return new Set(wanted);
  return new Set((await stores.table.read({ ids: wanted, sensitivity })).map((s) => s.entry.id));
}

/**
 * The links of entry `id` whose other entry a read with this sensitivity may name (links to code
 * and golden paths always), and the test it used.
 */
export async function namedLinks(
  stores: Stores,
  id: string,
  links: EntryLink[],
  sensitivity: Sensitivity[],
): Promise<{ links: EntryLink[]; named: (other: string) => boolean }> {
  const betweenEntries = (l: EntryLink) => ENTRY_EDGE_TYPES.includes(l.type as EntryEdgeType);
  const visible = await visibleIds(
    stores,
    links.filter(betweenEntries).flatMap((l) => [l.from, l.to]),
    sensitivity,
  );
  const named = (other: string) => other === id || visible.has(other);
  return { links: links.filter((l) => !betweenEntries(l) || (named(l.from) && named(l.to))), named };
}

/** MemoryEngine.traverse, its options checked: the entries reachable from `startId` that may be named, nearest first. */
export async function traverseFrom(
  stores: Stores,
  startId: string,
  opts: { depth: number; edgeTypes: EntryEdgeType[]; direction: Direction; sensitivity: Sensitivity[] },
): Promise<TraverseHit[]> {
  const { sensitivity } = opts;
  // An entry of a sensitivity not asked for is not found, as an unknown one is.
  if (
    (await visibleIds(stores, [startId], opts.sensitivity)).size === 0 ||
    (await stores.graph.existingIds('entry', [startId])).size === 0
  ) {
    throw new MemcoreError(`no entry with id "${startId}"`, 'NOT_FOUND');
  }
  const { reaches } = await stores.reachWithPaths([startId], opts);
  const entries = new Map(
    (await stores.table.read({ ids: reaches.map((r) => r.targetId), sensitivity })).map((s) => [s.entry.id, s.entry]),
  );
  // A path through a hidden entry would name it: such hits are left out with it.
  const named = (id: string) => id === startId || entries.has(id);
  return reaches
    .flatMap((r) => {
      const entry = entries.get(r.targetId);
      return entry && r.path.every((hop) => named(hop.from) && named(hop.to)) ? [{ entry, hops: r.hops, path: r.path }] : [];
    })
    .sort((a, b) => a.hops - b.hops || a.entry.id.localeCompare(b.entry.id));
}
