import { resolve } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { MemcoreError } from '../model/errors.js';
import { checkOptionNames } from '../model/options.js';
import { restoreInto, verifyBackup, type BackupManifest } from './backup.js';
import { Stores } from '../store/stores.js';
import { leaveSnapshotsCurrent } from './freshSnapshots.js';

export interface RestoreOptions {
  /** The database folder to restore into. Default `./.memcore`. */
  path?: string;
  /** Replace a folder that holds something. Default false: such a folder is refused. */
  force?: boolean;
}

/**
 * Restores a backup made by `memory.backup(dest)` (or `memcore backup`): checks every file against
 * the manifest's checksums, copies it beside the target, opens the copy and compares its counts
 * and embedder with the manifest's, and only then swaps it in. No process may have the target open.
 */
export async function restoreMemory(src: string, options: RestoreOptions = {}): Promise<BackupManifest> {
  checkOptionNames('restoreMemory', options, ['path', 'force']);
  const manifest = await verifyBackup(resolve(src));
  await restoreInto(
    resolve(src),
    resolve(options.path ?? '.memcore'),
    manifest,
    (dir) => checkRestored(dir, manifest),
    options.force === true,
  );
  return manifest;
}

/**
 * Opens the restored copy (it embeds nothing) and compares what it holds with the manifest; then
 * writes its snapshots (a backup leaves them out), so that the first reader loads rather than
 * builds them. Under the default limits (`residentMaxEntries`, `scanMaxEntries`): a reader opened
 * under others builds its entry columns.
 */
async function checkRestored(dir: string, manifest: BackupManifest): Promise<void> {
  const embedder: Embedder = {
    id: manifest.embedder.id,
    dimensions: manifest.embedder.dimensions,
    truncatable: false,
    embed: () => Promise.reject(new MemcoreError('a restore check does not embed', 'EMBEDDING')),
  };
  const stores = await Stores.open(dir, embedder);
  try {
    const entries = (await stores.table.read({})).length;
    const graph = await stores.graph.counts();
    const relations = Object.values(graph.relations).reduce((a, b) => a + b, 0);
    const got = { entries, codeLocations: graph.codeLocations, goldenPaths: graph.goldenPaths, relations };
    if (graph.entries !== entries || JSON.stringify(got) !== JSON.stringify(manifest.counts)) {
      throw new MemcoreError(
        `the restored copy holds ${JSON.stringify({ ...got, graphEntries: graph.entries })}, the backup's manifest says ${JSON.stringify(manifest.counts)}; nothing was replaced`,
        'STORE',
      );
    }
    // Best effort: the restore stands without them (the first reader builds what is missing).
    await leaveSnapshotsCurrent(stores, { all: true }).catch(() => undefined);
  } finally {
    await stores.close();
  }
}
