/**
 * What each source last wrote into the folder (sources/<hash>.json): the ids of its entries, code
 * locations and golden paths, and its relations. A sync compares a source's new records with its
 * manifest to find what the source no longer holds. The manifests are written as part of the
 * journaled write that changes the stores, so a replay writes them again.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemcoreError } from '../model/errors.js';
import type { RelationRef } from './graph/graphStore.js';
import { parseStoreFile } from './storeFiles.js';

export interface SourceManifest {
  /** The source's key: a file path relative to the project (the folder holding the database), or a caller's label. */
  source: string;
  /** sha256 of the source file as last read, where its importer skips unchanged files (import-code). */
  hash?: string;
  entries: string[];
  codeLocations: string[];
  goldenPaths: string[];
  relations: RelationRef[];
}

/** Records a write removes, by kind. */
export interface RecordRemoval {
  entries: string[];
  codeLocations: string[];
  goldenPaths: string[];
  relations: RelationRef[];
}

const FOLDER = 'sources';
const READ_BATCH = 64;
const fileOf = (dir: string, source: string) => join(dir, FOLDER, `${createHash('sha256').update(source).digest('hex').slice(0, 32)}.json`);
const advice =
  'a manifest only guides syncs: delete it, and the next sync of its source removes nothing (ingest the source again to record it)';

/** The manifest `source` last wrote, or null when it never wrote one. */
export async function readManifest(dir: string, source: string): Promise<SourceManifest | null> {
  const path = fileOf(dir, source);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const manifest = parseStoreFile<SourceManifest>('sourceManifest', path, text, advice);
  // Two sources whose hashes share 128 bits would be a first; a file copied in by hand is likelier.
  return manifest.source === source ? manifest : null;
}

/** Every manifest in the folder. */
export async function readManifests(dir: string): Promise<SourceManifest[]> {
  return readManifestFiles(await manifestFiles(dir));
}

/** The file `source`'s manifest is kept in (whether or not it exists). */
export const manifestPath = fileOf;

/** The paths of every manifest file in the folder, sorted. */
export async function manifestFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(join(dir, FOLDER));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => join(dir, FOLDER, n));
}

/** The manifests in `paths` (manifestFiles' paths). */
export async function readManifestFiles(paths: readonly string[]): Promise<SourceManifest[]> {
  // Read in batches: one file at a time waits on the disk thousands of times (a codebase's files are a manifest each).
  const out: SourceManifest[] = [];
  for (let i = 0; i < paths.length; i += READ_BATCH) {
    const batch = paths.slice(i, i + READ_BATCH);
    const texts = await Promise.all(batch.map((p) => readFile(p, 'utf8')));
    batch.forEach((p, j) => out.push(parseStoreFile<SourceManifest>('sourceManifest', p, texts[j]!, advice)));
  }
  return out;
}

/** Replaces each source's manifest (atomically, one file each); a manifest with no records is removed. */
export async function writeManifests(dir: string, manifests: readonly SourceManifest[]): Promise<void> {
  if (manifests.length === 0) return;
  await mkdir(join(dir, FOLDER), { recursive: true });
  // Several files at a time: one at a time, 10,000 manifests (a team folder's first sync, a file
  // a source) took ~7 s of turns of the thread pool on a busy 2-core machine.
  // A source named twice keeps its last manifest, as when they were written in turn.
  const latest = [...new Map(manifests.map((m) => [m.source, m])).values()];
  for (let i = 0; i < latest.length; i += MANIFEST_WRITES_AT_ONCE)
    await Promise.all(latest.slice(i, i + MANIFEST_WRITES_AT_ONCE).map((m) => writeManifest(dir, m)));
}

const MANIFEST_WRITES_AT_ONCE = 16;

async function writeManifest(dir: string, m: SourceManifest): Promise<void> {
  const path = fileOf(dir, m.source);
  try {
    if (m.entries.length + m.codeLocations.length + m.goldenPaths.length + m.relations.length === 0) {
      await rm(path, { force: true });
      return;
    }
    await writeFile(`${path}.tmp`, JSON.stringify(m));
    await rename(`${path}.tmp`, path);
  } catch (e) {
    throw new MemcoreError(
      `${path} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); check that the folder is writable and the disk has room`,
      'STORE',
    );
  }
}
