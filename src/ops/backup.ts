/**
 * Backups of a database folder: a copy of its files taken while no write runs, with a manifest of
 * sizes, checksums, counts and the embedder, and a restore that checks all of it before it
 * replaces anything.
 */
import { createHash } from 'node:crypto';
import { constants, createReadStream, existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { MemcoreError } from '../model/errors.js';

export const MANIFEST = 'memcore-backup.json';

/** What a backup holds and how to check it. */
export interface BackupManifest {
  formatVersion: 1;
  createdAt: string;
  /** The folder it was taken from. */
  source: string;
  embedder: { id: string; dimensions: number };
  generation: number;
  counts: { entries: number; codeLocations: number; goldenPaths: number; relations: number };
  files: { path: string; bytes: number; sha256: string }[];
}

/**
 * Files of a folder that are not the store: a server's socket, address and token stay behind, and
 * so do the snapshots of structures held in memory, which the restored folder's first query
 * builds again (they are derived, and at 100K entries larger than the table's text), and the
 * folder's `.gitignore`, which every open writes when it is missing.
 */
const NOT_STORE = new Set(['server.sock', 'server.json', 'server.token', 'snapshots', '.gitignore', MANIFEST]);

async function filesUnder(dir: string, root = dir): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (dir === root && NOT_STORE.has(entry.name)) continue;
    if (entry.isDirectory()) out.push(...(await filesUnder(path, root)));
    else if (entry.isFile() && !entry.name.endsWith('.tmp')) out.push(relative(root, path));
  }
  return out.sort();
}

function sha256(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (d) => hash.update(d))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  if (!existsSync(dir)) return true;
  return (await readdir(dir)).length === 0;
}

/**
 * Copies the store's files from `dir` into `dest` (missing or empty) and writes the manifest.
 * The caller holds writes back for the whole copy and has checkpointed the graph.
 */
export async function copyStore(
  dir: string,
  dest: string,
  about: Omit<BackupManifest, 'formatVersion' | 'createdAt' | 'source' | 'files'>,
  onProgress?: (done: number, total: number) => void,
): Promise<BackupManifest> {
  if (!(await isEmptyOrMissing(dest))) throw new MemcoreError(`${dest} is not empty; back up into a new folder`, 'INVALID_INPUT');
  await mkdir(dest, { recursive: true });
  const files: BackupManifest['files'] = [];
  const names = await filesUnder(dir);
  for (const [i, name] of names.entries()) {
    await mkdir(dirname(join(dest, name)), { recursive: true });
    await copyFile(join(dir, name), join(dest, name));
    files.push({ path: name, bytes: (await stat(join(dest, name))).size, sha256: await sha256(join(dest, name)) });
    onProgress?.(i + 1, names.length);
  }
  const manifest: BackupManifest = { formatVersion: 1, createdAt: new Date().toISOString(), source: dir, ...about, files };
  await writeFile(join(dest, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

/** The folders of a database folder; every other file of a backup sits at its top. */
const STORE_FOLDERS = new Set(['lance', 'journal', 'sources']);
/** One part of a path a store writes: letters, digits, `.`, `_` and `-`, not starting with a dot. */
const PATH_PART = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;

/**
 * Why `path` is not a file a database folder holds (its own layout: the graph, meta and other
 * files at the top, and the files under lance/, journal/ and sources/), or undefined when it is.
 * A manifest is input: `../x`, an absolute path or a server file must never be restored.
 */
export function backupPathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string') return 'is not a string';
  const parts = path.split('/');
  if (!parts.every((p) => PATH_PART.test(p))) return 'has a part that is empty, `.`, `..`, hidden or holds characters a store never writes';
  if (parts.length === 1 ? NOT_STORE.has(path) : !STORE_FOLDERS.has(parts[0]!) || parts.length > 8)
    return `is outside the folder's layout (files at its top, or under ${[...STORE_FOLDERS].join('/, ')}/)`;
  return undefined;
}

/** Throws unless `rel` under `root` is a regular file reached through no symlink (`root` resolved already). */
async function checkInside(root: string, rel: string, what: string): Promise<void> {
  let at = root;
  for (const part of rel.split('/')) {
    at = join(at, part);
    const info = await lstat(at).catch(() => undefined);
    if (!info) return; // missing: reported by the caller
    if (info.isSymbolicLink())
      throw new MemcoreError(
        `${what}: manifest entry ${JSON.stringify(rel)} goes through a symlink (${at}); nothing was restored`,
        'INVALID_INPUT',
      );
  }
  const real = await realpath(at);
  if (!real.startsWith(root + sep))
    throw new MemcoreError(
      `${what}: manifest entry ${JSON.stringify(rel)} resolves outside the backup (${real}); nothing was restored`,
      'INVALID_INPUT',
    );
}

/** Reads a backup's manifest and checks every file's size and checksum; the error names the first that differs. */
export async function verifyBackup(src: string): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(src, MANIFEST), 'utf8')) as BackupManifest;
  } catch (e) {
    throw new MemcoreError(`${src} is not a memcore backup (${MANIFEST}: ${(e as Error).message})`, 'INVALID_INPUT');
  }
  if (manifest.formatVersion !== 1 || !Array.isArray(manifest.files) || !manifest.embedder?.id)
    throw new MemcoreError(`${join(src, MANIFEST)}: not a backup manifest memcore can read`, 'INVALID_INPUT');
  // Every path first, before any file is touched.
  for (const f of manifest.files) {
    const problem = backupPathProblem((f as { path?: unknown } | null)?.path);
    if (problem)
      throw new MemcoreError(
        `${join(src, MANIFEST)}: manifest entry ${JSON.stringify((f as { path?: unknown } | null)?.path)} ${problem}; it is not a file a memcore folder holds, and nothing was restored`,
        'INVALID_INPUT',
      );
  }
  const root = await realpath(src);
  for (const f of manifest.files) {
    await checkInside(root, f.path, `backup ${src}`);
    const path = join(src, f.path);
    if (!existsSync(path)) throw new MemcoreError(`backup ${src} is damaged: ${f.path} is missing`, 'STORE');
    if ((await stat(path)).size !== f.bytes || (await sha256(path)) !== f.sha256)
      throw new MemcoreError(`backup ${src} is damaged: ${f.path} does not match its checksum`, 'STORE');
  }
  return manifest;
}

/**
 * Puts a verified backup in place of `dest`: copied beside it first, checked by `check` (which
 * opens the copy and compares its counts with the manifest's), then swapped in; what `dest` held
 * is removed only after the swap.
 */
export async function restoreInto(
  src: string,
  dest: string,
  manifest: BackupManifest,
  check: (dir: string) => Promise<void>,
  force: boolean,
): Promise<void> {
  if (!force && !(await isEmptyOrMissing(dest)))
    throw new MemcoreError(`${dest} is not empty; pass --force (force: true) to replace what it holds`, 'INVALID_INPUT');
  const staging = join(dirname(dest), `.${basename(dest)}.restoring-${process.pid}`);
  const previous = join(dirname(dest), `.${basename(dest)}.replaced-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  // A folder of its own, made now: nothing in it can be a link somewhere else.
  await mkdir(staging);
  try {
    for (const f of manifest.files) {
      await mkdir(dirname(join(staging, f.path)), { recursive: true });
      // Never over an existing path: a name listed twice, or anything that appeared meanwhile.
      await copyFile(join(src, f.path), join(staging, f.path), constants.COPYFILE_EXCL);
    }
    await check(staging);
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  }
  if (existsSync(dest)) await rename(dest, previous);
  await rename(staging, dest);
  await rm(previous, { recursive: true, force: true });
}
