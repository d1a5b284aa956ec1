import type { MemoryEntry } from '../../model/types.js';

/** An entry as JSON carries it (the journal, EntryColumns' records): times as ISO strings. */
export type SerializedEntry = Omit<MemoryEntry, 'createdAt' | 'updatedAt' | 'validFrom' | 'validTo'> & {
  createdAt: string;
  updatedAt: string;
  validFrom: string | null;
  validTo: string | null;
};

export function serializeEntry(e: MemoryEntry): SerializedEntry {
  return {
    ...e,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
    validFrom: e.validFrom?.toISOString() ?? null,
    validTo: e.validTo?.toISOString() ?? null,
  };
}

export function reviveEntry(e: SerializedEntry): MemoryEntry {
  const date = (v: string | null) => (v === null ? null : new Date(v));
  return {
    ...e,
    createdAt: new Date(e.createdAt),
    updatedAt: new Date(e.updatedAt),
    validFrom: date(e.validFrom),
    validTo: date(e.validTo),
  };
}

/**
 * An entry as one JSON string: how EntryColumns holds an entry written after its load. One string
 * an entry, not an object graph of dates and arrays, keeps the garbage collector's walk short and
 * hands every reader its own copy.
 */
export const entryRecord = (e: MemoryEntry): string => JSON.stringify(serializeEntry(e));

export const entryFromRecord = (record: string): MemoryEntry => reviveEntry(JSON.parse(record) as SerializedEntry);
