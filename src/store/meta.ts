import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { MemcoreError } from '../model/errors.js';
import { join } from 'node:path';
import { parseStoreFile } from './storeFiles.js';
import type { GraphDriverName } from './graph/drivers.js';

/** What a database folder records about itself, next to the tables (meta.json). */
export interface StoreMeta {
  formatVersion: 1;
  /** The model the vectors came from: opening with another is refused until a re-embed. */
  embedder: { id: string; dimensions: number; truncatable: boolean };
  /** Length of `vector_small`. */
  smallDimensions: number;
  /** Bumped by every write that changes what a query can see; caches key on it. */
  generation: number;
  /** Fingerprint of the graph part of each ingested file, so an unchanged re-ingest is a no-op. */
  sources: Record<string, string>;
  /** The graph database the folder's graph is kept in (graph/drivers.ts); absent in folders from before, which are Kuzu's. */
  graph?: GraphDriverName;
}

const META_FILE = 'meta.json';
export const metaPath = (dir: string): string => join(dir, META_FILE);

export async function readMeta(dir: string): Promise<StoreMeta | null> {
  let text: string;
  try {
    text = await readFile(join(dir, META_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  return parseStoreFile<StoreMeta>('meta', join(dir, META_FILE), text);
}

/** Atomic replace: a crash leaves the old or the new file, never half of one. */
export async function writeMeta(dir: string, meta: StoreMeta): Promise<void> {
  const tmp = join(dir, `${META_FILE}.${process.pid}.tmp`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(tmp, JSON.stringify(meta, null, 2));
    await rename(tmp, join(dir, META_FILE));
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new MemcoreError(
      `${join(dir, META_FILE)} cannot be written (${code}); check that the folder is writable and the disk has room`,
      'STORE',
    );
  }
}

/** True when the folder holds a graph or an entries table (whatever its meta.json says). */
export function holdsStores(dir: string): boolean {
  const versions = join(dir, 'lance', 'entries.lance', '_versions');
  return existsSync(join(dir, 'graph.kuzu')) || (existsSync(versions) && readdirSync(versions).length > 0);
}

/** The error for a folder that holds stores but no meta.json: opening would write a fresh one over them. */
export function missingMeta(dir: string): MemcoreError {
  return new MemcoreError(
    `${metaPath(dir)} is missing, but ${dir} holds stores; memcore will not guess what they were built with. ` +
      'Run `memcore doctor --repair` to rebuild it from the stores and the configured embedder, or restore the folder from a backup.',
    'STORE',
  );
}
