/**
 * Moving a folder's graph to the other graph database (`memcore migrate --graph ladybug|kuzu`).
 * The two cannot read each other's files, so the graph is copied: every entry node, code location,
 * golden path (with its steps) and relation is read from the open folder and written into a new
 * graph file beside the old one, read back and compared, and only then put in place. LanceDB (the
 * entries, vectors, feedback signals, snapshots) is not touched: it does not depend on the graph
 * database. A migration killed at any point leaves an openable folder: until meta.json names the
 * new database, the folder opens with the old graph, which is removed last.
 */
import { existsSync } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { MemcoreError } from '../model/errors.js';
import type { GraphCounts } from '../store/graph/graphStore.js';
import { graphContents, writeGraphInChild } from './graphCopy.js';
import {
  GRAPH_DRIVERS,
  graphDriverLabel,
  graphDriverOf,
  graphFileName,
  isGraphDriver,
  type GraphDriverName,
} from '../store/graph/drivers.js';
import { readMeta, writeMeta } from '../store/meta.js';
import { Stores } from '../store/stores.js';

export interface MigrateGraphReport {
  path: string;
  from: GraphDriverName;
  to: GraphDriverName;
  /** False when the folder was on `to` already (nothing done). */
  migrated: boolean;
  /** What the graph holds, the same before and after. */
  counts: GraphCounts;
}

/** The suffix of the graph file a migration is writing, beside the folder's graph. */
const MIGRATING = '.migrating';

/** Removes a graph file and the write-ahead log beside it. */
async function removeGraphFile(file: string): Promise<void> {
  await rm(file, { force: true, recursive: true });
  await rm(`${file}.wal`, { force: true });
}

/** An embedder that only carries the folder's model identity: a migration embeds nothing. */
function identityOnly(meta: { embedder: { id: string; dimensions: number; truncatable: boolean } }): Embedder {
  return {
    ...meta.embedder,
    embed: () => Promise.reject(new MemcoreError('a graph migration does not embed', 'EMBEDDING')),
  };
}

/**
 * Moves the database folder `path` to the graph database `to`. Holds the folder (its graph's
 * lock) throughout, so no other process writes the old graph meanwhile; refuses a folder that is
 * open elsewhere (a server) with the usual "in use" error. Safe to rerun after an interruption.
 */
export async function migrateGraph(
  path: string,
  to: GraphDriverName,
  opts: { onProgress?: (message: string) => void } = {},
): Promise<MigrateGraphReport> {
  if (!isGraphDriver(to))
    throw new MemcoreError(`--graph must be one of ${GRAPH_DRIVERS.join(', ')}, got ${JSON.stringify(to)}`, 'INVALID_INPUT');
  const dir = resolve(path);
  const meta = await readMeta(dir);
  if (!meta) throw new MemcoreError(`${dir} is not a memcore database folder (no meta.json)`, 'NOT_FOUND');
  const from = graphDriverOf(meta);
  const progress = opts.onProgress ?? (() => undefined);
  const target = join(dir, graphFileName(to));
  const building = `${target}${MIGRATING}`;

  // Opening replays an unfinished write from the journal, so the copy is of a settled graph.
  const stores = await Stores.open(dir, identityOnly(meta));
  try {
    // What an interrupted run left: a half-written graph file (either way), and its log.
    for (const name of await readdir(dir))
      if (name.startsWith('graph.') && name.includes(MIGRATING)) await rm(join(dir, name), { force: true, recursive: true });
    if (from === to) return { path: dir, from, to, migrated: false, counts: await stores.graph.counts() };

    progress(`reading the ${graphDriverLabel(from)} graph`);
    const before = await graphContents(stores.graph);
    const counts = await stores.graph.counts();
    progress(
      `writing ${before.entries.length} entries, ${before.codeLocations.length} code locations, ${before.goldenPaths.length} golden paths, ${before.relations.length} relations into ${graphDriverLabel(to)}`,
    );
    try {
      const after = await writeGraphInChild(to, building, before);
      if (JSON.stringify(after.contents) !== JSON.stringify(before) || JSON.stringify(after.counts) !== JSON.stringify(counts))
        throw new MemcoreError(
          `${dir}: the ${graphDriverLabel(to)} copy of the graph differs from the ${graphDriverLabel(from)} one (before ${JSON.stringify(counts)}, after ${JSON.stringify(after.counts)}); nothing was changed`,
          'STORE',
        );
    } catch (e) {
      await removeGraphFile(building);
      throw e;
    }

    // The swap: the new file under its name (replacing a stale one a crash left before meta.json
    // named it), then meta.json, whose atomic replace is the moment the folder changes database.
    progress('putting the new graph in place');
    await rm(`${target}.wal`, { force: true });
    if (existsSync(`${building}.wal`)) await rename(`${building}.wal`, `${target}.wal`);
    await rename(building, target);
    stores.meta.graph = to;
    await writeMeta(dir, stores.meta);
    return { path: dir, from, to, migrated: true, counts };
  } finally {
    await stores.close();
    // The old graph, once nothing names it (also what a run killed after the swap left).
    const now = await readMeta(dir).catch(() => null);
    if (now)
      for (const driver of GRAPH_DRIVERS)
        if (driver !== graphDriverOf(now) && existsSync(join(dir, graphFileName(driver))))
          await removeGraphFile(join(dir, graphFileName(driver)));
  }
}
