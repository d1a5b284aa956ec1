/**
 * `memcore index`: refit the small-vector projection, build LanceDB's indexes, and write the
 * snapshots of every structure held in memory, with what queries derive from them, so that the
 * next process to open the folder loads them instead of building them (docs/storage.md,
 * "Snapshots").
 */
import type { IndexOptions, IndexResult } from '../engine/engineOptions.js';
import { indexOptions } from '../engine/readOptions.js';
import { relevanceFloor } from '../retrieve/relevance.js';
import { stage1CandidatesFor } from '../retrieve/stage1Calibration.js';
import type { Stores } from '../store/stores.js';

export async function indexStore(stores: Stores, options: IndexOptions): Promise<IndexResult> {
  const { annMinRows, onProgress } = indexOptions(options);
  await stores.refitProjection({
    onProgress: onProgress && ((done, total) => onProgress(`small vectors re-derived: ${done}/${total}`)),
  });
  onProgress?.('building indexes …');
  const built = await stores.table.buildIndexes({ annMinRows });
  onProgress?.('writing snapshots …');
  await stores.loadResident();
  // Derived from the keyword index and the columns and kept in their snapshots: a fresh
  // process's first query (or matryoshkaSearch) then skips measuring them.
  relevanceFloor(await stores.keywords());
  await stage1CandidatesFor(stores, 10);
  const snapshots = (await stores.residents.writeSnapshots({ rewrite: true })).map(({ key, bytes }) => ({ structure: key, bytes }));
  return { ...built, projection: stores.projection.kind, snapshots };
}
