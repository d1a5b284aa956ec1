import type { MemoryEntry } from '../../model/types.js';

/**
 * An entry as one JSON string, times as epoch milliseconds: how EntryColumns holds whole entries.
 * One string an entry, not an object graph of dates and arrays, keeps 100K entries to ~one string
 * each for the garbage collector to walk, and hands every reader its own copy.
 */
export function entryRecord(e: MemoryEntry): string {
  return JSON.stringify({
    ...e,
    createdAt: e.createdAt.getTime(),
    updatedAt: e.updatedAt.getTime(),
    validFrom: e.validFrom?.getTime() ?? null,
    validTo: e.validTo?.getTime() ?? null,
  });
}

type RecordFields = Omit<MemoryEntry, 'createdAt' | 'updatedAt' | 'validFrom' | 'validTo'> & {
  createdAt: number; updatedAt: number; validFrom: number | null; validTo: number | null;
};

export function entryFromRecord(record: string): MemoryEntry {
  const r = JSON.parse(record) as RecordFields;
  return {
    ...r,
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
    validFrom: r.validFrom === null ? null : new Date(r.validFrom),
    validTo: r.validTo === null ? null : new Date(r.validTo),
  };
}
