/**
 * The writer leaves the snapshots current: after a write, the structures a fresh reader would
 * otherwise build from the stores (no snapshot, or one the change log brings up to date only by
 * reading many entries again) are loaded here, with what queries derive from them, and written,
 * before the process exits (docs/storage.md, "Snapshots"). A reader then loads them as they are,
 * or catches up from the change log on the few entries written since.
 */
import { DEFAULTS } from '../config/defaults.js';
import { lengthDispersion, relevanceFloor } from '../retrieve/relevance.js';
import { stage1CandidatesFor } from '../retrieve/stage1Calibration.js';
import type { EntryColumns, KeywordIndex } from '../store/memoryIndex.js';
import type { SnapshotKey } from '../store/resident/residents.js';
import type { Stores } from '../store/stores.js';

export interface SnapshotsLeft {
  /** The structures a fresh reader would have built, which this call loaded (or built) first. */
  behind: SnapshotKey[];
  /** The snapshot files written, at the store's generation. */
  written: { key: string; generation: number; bytes: number; ms: number }[];
}

/**
 * Brings every snapshot a fresh reader needs to the store's generation: loads what is behind
 * (`Residents.snapshotsBehind`), measures the values the first query would otherwise measure (the
 * relevance floor and the length dispersion its chance test uses, the stage-1 calibration: ~1.2 s at 100K), and writes every file not current.
 */
export async function leaveSnapshotsCurrent(
  stores: Stores,
  opts: {
    /** Leave a reader nothing to catch up (after a bulk write); by default up to DEFAULTS.store.snapshotCatchUpMaxEntries entries. */
    all?: boolean;
  } = {},
): Promise<SnapshotsLeft> {
  const behind = await stores.residents.snapshotsBehind(opts.all ? undefined : DEFAULTS.store.snapshotCatchUpMaxEntries);
  // One at a time: each build holds what it reads from the stores until it is done, and at 1M
  // entries the columns, keywords and names built at once passed 11 GB of RSS in a writer's close.
  for (const key of behind) await stores.loadResidentOf([key]);
  // Derived values kept in the snapshots, for the structures held at this generation (loaded here or before).
  const keywords = await stores.residents.current<KeywordIndex>('keywords');
  if (keywords) {
    relevanceFloor(keywords);
    lengthDispersion(keywords);
  }
  if (await stores.residents.current<EntryColumns>('columns')) await stage1CandidatesFor(stores, 10);
  return { behind, written: await stores.residents.writeSnapshots() };
}
