/**
 * import-code's record of each file's size and modification time as last read (code-stamps.json in
 * the database folder), so a re-run skips reading and hashing a file whose stamp still matches.
 * A stamp only stands for the hash the file's manifest keeps: a stamp whose hash differs from the
 * manifest (the stores were restored, a write failed half way) is ignored and the file is hashed.
 *
 * The assumption: a file whose size and mtime (the file system's, to the nanosecond where it keeps
 * them) both match was not rewritten. A file rewritten with the same size within the same tick of
 * the file system's clock would pass for unchanged, so a file whose mtime is within
 * RACY_WINDOW_MS of the import's start gets no mtime in its stamp, and is hashed on the next run
 * (as git does with its index). The file is a cache: a missing or unreadable one only costs a re-hash.
 */
import { statSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemcoreError } from '../model/errors.js';
import { manifestFiles, manifestPath, readManifestFiles } from '../store/sourceManifests.js';

export const CODE_STAMPS_FILE = 'code-stamps.json';

/** Files changed this close to the import's start (ms) are hashed again next time: covers coarse clocks (FAT keeps 2 s). */
export const RACY_WINDOW_MS = 2000;

export interface FileStamp {
  size: number;
  /** null: changed too close to the read to be trusted (hash it next time). */
  mtimeMs: number | null;
  /** sha256 of the file as read, the same its manifest keeps. */
  hash: string;
  /** Namespaces the file declares (Java, Kotlin, C#): what a skipped file still tells other files' imports. */
  declares?: string[];
  /**
   * Size and mtime of the file's manifest (store/sourceManifests.ts) when it held `hash`: while
   * they match, the manifest is not read. Missing for a manifest changed within RACY_WINDOW_MS.
   */
  manifest?: ManifestStat;
}

/** A manifest file's size and mtime. */
export type ManifestStat = [size: number, mtimeMs: number];

/** What the stores' manifests hold of a file an earlier import read. */
export interface KnownFile {
  /** sha256 of the file as the import read it. */
  hash: string | undefined;
  /** The manifest's size and mtime as this run found them. */
  manifest: ManifestStat;
}

type StampFile = {
  version: 1;
  /** The code search index's state (codeSearchState) when the stamps were written: every stamped file was in it then. */
  codeSearchState?: string;
  codebases: Record<string, Record<string, FileStamp>>;
};

export class FileStamps {
  private readonly next = new Map<string, FileStamp>();
  private changed = false;
  /** Set by indexUnchanged. */
  private indexed = false;

  private constructor(
    private readonly dir: string,
    private readonly codebase: string,
    private readonly all: StampFile,
    private readonly startedAt: number,
  ) {}

  static async open(dir: string, codebase: string): Promise<FileStamps> {
    let all: StampFile = { version: 1, codebases: {} };
    try {
      const parsed = JSON.parse(await readFile(join(dir, CODE_STAMPS_FILE), 'utf8')) as Partial<StampFile>;
      if (parsed.version === 1 && typeof parsed.codebases === 'object' && parsed.codebases !== null) all = parsed as StampFile;
    } catch {
      // none yet, or damaged: every file is hashed this time and the file is written anew
    }
    return new FileStamps(dir, codebase, all, Date.now());
  }

  private get previous(): Record<string, FileStamp> {
    return this.all.codebases[this.codebase] ?? {};
  }

  /**
   * The files of this codebase the stores' manifests name (`code:<codebase>:<path>` sources), with
   * the hash each manifest keeps. A manifest whose size and mtime match its stamp is not read (its
   * hash is the stamp's): a re-run of 5,000 files read and parsed 5,000 manifests (~0.5 s of CPU).
   * Manifests of no stamped file (another codebase's are known by name) are read.
   */
  async known(): Promise<Map<string, KnownFile>> {
    const prefix = `code:${this.codebase}:`;
    const unread = new Set(await manifestFiles(this.dir));
    const out = new Map<string, KnownFile>();
    for (const [codebase, stamps] of Object.entries(this.all.codebases)) {
      for (const [path, stamp] of Object.entries(stamps)) {
        const file = manifestPath(this.dir, `code:${codebase}:${path}`);
        if (!unread.has(file)) continue;
        // A manifest's file name is its source's hash: another codebase's is not this one's.
        if (codebase !== this.codebase) unread.delete(file);
        else if (stamp.manifest) {
          const now = statSync(file, { throwIfNoEntry: false });
          if (now && now.size === stamp.manifest[0] && now.mtimeMs === stamp.manifest[1]) {
            unread.delete(file);
            out.set(path, { hash: stamp.hash, manifest: stamp.manifest });
          }
        }
      }
    }
    // Stat before the read: a manifest rewritten in between keeps a stat older than its text, and is read again.
    const files = [...unread].map((file) => ({ file, stat: statSync(file, { throwIfNoEntry: false }) }));
    const manifests = await readManifestFiles(files.filter((f) => f.stat).map((f) => f.file));
    const stats = new Map(files.map((f) => [f.file, f.stat]));
    for (const m of manifests) {
      if (!m.source.startsWith(prefix)) continue;
      const stat = stats.get(manifestPath(this.dir, m.source));
      out.set(m.source.slice(prefix.length), { hash: m.hash, manifest: stat ? [stat.size, stat.mtimeMs] : [0, 0] });
    }
    return out;
  }

  /** The stamp of a file whose size and mtime still match, and whose hash is the one its manifest keeps. */
  match(path: string, size: number, mtimeMs: number, manifestHash: string | undefined): FileStamp | null {
    const s = this.previous[path];
    if (!s || manifestHash === undefined || s.hash !== manifestHash || s.mtimeMs === null) return null;
    return s.size === size && s.mtimeMs === mtimeMs ? s : null;
  }

  /**
   * Records the file as seen this run (read, or matched). `manifest`: its manifest's stat, for a
   * file whose manifest this run does not rewrite.
   */
  record(path: string, size: number, mtimeMs: number, hash: string, declares: string[], manifest?: ManifestStat): void {
    const trusted = (at: number) => at < this.startedAt - RACY_WINDOW_MS;
    const stamp: FileStamp = {
      size,
      mtimeMs: trusted(mtimeMs) ? mtimeMs : null,
      hash,
      ...(declares.length > 0 ? { declares } : {}),
      ...(manifest && trusted(manifest[1]) ? { manifest } : {}),
    };
    this.next.set(path, stamp);
    const old = this.previous[path];
    if (!old || JSON.stringify(old) !== JSON.stringify(stamp)) this.changed = true;
  }

  /**
   * Whether every stamped file is still in the code search index: its file is as the last write
   * of the stamps saw it (a deleted or rebuilt index lacks files, and they must be read for it).
   */
  indexUnchanged(codeSearchState: string): boolean {
    this.indexed = codeSearchState !== '' && this.all.codeSearchState === codeSearchState;
    return this.indexed;
  }

  /**
   * Whether the index holds the file as it is now without asking the index: it held every stamped
   * file when the stamps were written (indexUnchanged), and the file's stamp has this hash.
   */
  vouchesIndexed(path: string, hash: string): boolean {
    return this.indexed && this.previous[path]?.hash === hash;
  }

  /** Writes the stamps of this run (files not recorded lose theirs); nothing when none changed. Call once the stores and the index took the import. */
  async commit(codeSearchState: string): Promise<void> {
    const same = !this.changed && Object.keys(this.previous).length === this.next.size;
    if (same && this.all.codeSearchState === codeSearchState) return;
    this.all.codebases[this.codebase] = Object.fromEntries(this.next);
    this.all.codeSearchState = codeSearchState;
    const path = join(this.dir, CODE_STAMPS_FILE);
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(this.all));
      await rename(tmp, path);
    } catch (e) {
      throw new MemcoreError(
        `${path} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); check that the folder is writable and the disk has room`,
        'STORE',
      );
    }
  }
}
