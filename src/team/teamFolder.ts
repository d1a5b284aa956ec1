/**
 * The memory folder of a team: entry files tracked in the repository (`memory/`), and a git-ignored
 * local folder beside it (`memory.local/`) for what must not be shared. The database folder is an
 * index derived from them: `sync` brings it up to the files, reading only files whose size or
 * modification time changed and indexing only those whose content hash changed (each file a source
 * of its own, so a file that is gone takes its records with it). `changed` is the per-call check of
 * a long-lived engine: the modification times of the folder's directories (a file added, removed,
 * renamed or checked out by git) and a file watch (a file edited in place), ~0.05 ms. A running
 * engine's sync waits `embedWaitMs` for the model, then indexes the changed entries without their
 * new vectors and writes those when the background embedding has them (docs/team.md).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { embedForWrite, type Embedder } from '../embed/embedder.js';
import { DEFAULTS } from '../config/defaults.js';
import { embeddingText, indexDocument } from '../ingest/indexer.js';
import type { SourcePart } from '../ingest/syncSource.js';
import { MemcoreError } from '../model/errors.js';
import { RELATION_ENDPOINTS, type EndpointKind, type ExternalReference, type MemoryDocument } from '../model/memoryFile.js';
import type { Stores } from '../store/stores.js';
import { EntryFileError, parseEntryFile, type FileProblem, type ParsedEntryFile } from './entryFile.js';
import { gitMarkers, type TeamPaths } from './teamPaths.js';
import type { DoctorReport } from '../ops/doctor.js';

export type { TeamPaths };

/** What a sync read and wrote. */
export interface TeamSyncReport {
  files: { total: number; read: number; indexed: number; removed: number; skipped: number };
  entries: { added: number; updated: number; unchanged: number };
  embedded: number;
  fromCache: number;
  /** Files skipped (conflict markers, bad front matter, dangling links), with file and line. */
  problems: FileProblem[];
  /** Entries written without their new text's vector: it is being computed in the background. */
  deferred: number;
  /**
   * Where the sync's time went, ms: listing and stating the files, reading and parsing the changed
   * ones, checking ids and links, waiting for the model (`embedWaitMs` at most), the index write
   * (auto-linking, LanceDB, the graph, the structures held in memory), the state file.
   */
  ms: { list: number; read: number; resolve: number; embed: number; index: number; state: number };
}

interface FileState {
  size: number;
  mtimeMs: number;
  hash: string;
  /** Entry and golden path ids the file defines. */
  ids: string[];
  /**
   * Its entry is indexed (or about to be) without its text's vector: the file is indexed again
   * once the vector is in the embedding cache, by this process's background work or, after a
   * crash, by the next sync. Saved before the index write, so that no crash loses it.
   */
  pending?: true;
}
interface State {
  version: 1;
  files: Record<string, FileState>;
}

interface Listed {
  /** From the repository root, with forward slashes. */
  rel: string;
  abs: string;
  kind: 'entry' | 'path';
  core: string;
  name: string;
  local: boolean;
  size: number;
  mtimeMs: number;
}

const SOURCE_PREFIX = 'memory:';
const STATE_FILE = 'memory-files.json';
/** Texts embedded, and saved to the embedding cache, at a time by the background work. */
const BACKGROUND_SLICE = 128;

/** Files whose entry has no vector of its text yet. */
const countPending = (state: State): number => Object.values(state.files).filter((f) => f.pending).length;

/** The state file's files whose entry has no vector of its text yet (`memcore doctor` of a folder not served). */
export async function pendingFiles(dbDir: string): Promise<number> {
  try {
    const state = JSON.parse(await readFile(join(dbDir, STATE_FILE), 'utf8')) as State;
    return state.files && typeof state.files === 'object' ? countPending(state) : 0;
  } catch {
    return 0;
  }
}

export class TeamFolder {
  private state: State | undefined;
  private dirTimes = new Map<string, number>();
  private watchers: FSWatcher[] = [];
  private dirty = true;
  /** Files the last sync skipped; the rest of memory answers. */
  problems: FileProblem[] = [];
  /** Files skipped that an earlier version of is still indexed. */
  private staleFiles = new Set<string>();
  lastSync: TeamSyncReport | undefined;
  /** Files whose vectors a background embedding of this process is computing, by the work's token. */
  private readonly inFlight = new Map<string, object>();
  private readonly jobs = new Set<Promise<boolean>>();
  /** Why the last background embedding failed, until one succeeds. */
  private embedFailure: string | undefined;
  /** Called when a background embedding put its vectors in the cache (the engine then syncs). */
  onVectors: (() => void) | undefined;

  constructor(
    readonly paths: TeamPaths,
    private readonly options: { autoLink?: boolean; watch?: boolean; embedWaitMs?: number } = {},
  ) {}

  /** How long a running engine's sync waits for the model (config memory.embedWaitMs). */
  get embedWaitMs(): number {
    return this.options.embedWaitMs ?? DEFAULTS.team.embedWaitMs;
  }

  /** Counted when the state is read or saved: bundles give it on every call. */
  private pendingCount = 0;

  /** Entries indexed without their text's vector (it is being computed, or the next sync computes it). */
  get pendingVectors(): number {
    return this.pendingCount;
  }

  /** Resolves when no background embedding runs. */
  async settled(): Promise<void> {
    while (this.jobs.size > 0) await Promise.all(this.jobs);
  }

  /** True when a file may have changed since the last sync (cheap: a stat per directory). */
  changed(): boolean {
    if (this.dirty) return true;
    for (const [dir, time] of this.dirTimes) {
      let now: number;
      try {
        now = statSync(dir).mtimeMs;
      } catch {
        now = -1;
      }
      if (now !== time) return (this.dirty = true);
    }
    return false;
  }

  /** Notes for a bundle: the files memory answers without, and whether an older version answers instead. */
  notes(): string[] {
    const pending = this.pendingVectors;
    const waiting =
      pending === 0
        ? []
        : [
            `${pending} changed memory ${pending === 1 ? 'entry is' : 'entries are'} still being embedded: until the vectors are in, ` +
              'they answer by their words and links (and the vector of their previous text, if any)' +
              (this.embedFailure ? ` (the background embedding failed: ${this.embedFailure}; the next change or open tries again)` : ''),
          ];
    return [
      ...waiting,
      ...this.problems.map(
        (p) =>
          `memory file ${p.file}${p.line !== null ? `:${p.line}` : ''} skipped (${p.message}); ` +
          (this.staleFiles.has(p.file) ? 'its last good version still answers until it is fixed' : 'it is not in memory until it is fixed'),
      ),
    ];
  }

  /**
   * Embeds `texts` into the embedding cache, a slice at a time (a crash keeps the slices done),
   * for the files `files`; resolves false when the model failed. When it succeeded after the sync
   * stopped waiting for it (`left.behind`), the folder is marked changed and `onVectors` called:
   * the next sync indexes those files with their vectors.
   */
  private embedInBackground(
    stores: Stores,
    embedder: Embedder,
    texts: string[],
    files: string[],
    left: { behind: boolean; ok?: boolean },
  ): Promise<boolean> {
    const token = {};
    for (const rel of files) this.inFlight.set(rel, token);
    const job = (async () => {
      try {
        for (let i = 0; i < texts.length; i += BACKGROUND_SLICE) {
          const slice = texts.slice(i, i + BACKGROUND_SLICE);
          const vectors = await embedForWrite(embedder, slice);
          await stores.embeddingCache.put(slice.map((text, j) => ({ text, vector: vectors[j]! })));
        }
        this.embedFailure = undefined;
        return true;
      } catch (e) {
        this.embedFailure = (e as Error).message;
        return false;
      } finally {
        for (const rel of files) if (this.inFlight.get(rel) === token) this.inFlight.delete(rel);
      }
    })();
    this.jobs.add(job);
    // Registered first, so it runs before what `settled` awaits.
    void job.then((ok) => {
      this.jobs.delete(job);
      left.ok = ok;
      if (!ok || !left.behind) return;
      this.dirty = true;
      this.onVectors?.();
    });
    return job;
  }

  private async loadState(stores: Stores): Promise<State> {
    if (this.state) return this.state;
    try {
      const parsed = JSON.parse(await readFile(join(stores.dir, STATE_FILE), 'utf8')) as State;
      if (parsed.version === 1 && parsed.files && typeof parsed.files === 'object') {
        this.pendingCount = countPending(parsed);
        return (this.state = parsed);
      }
    } catch {
      // Missing or unreadable: every file is read again (the index keeps what is unchanged).
    }
    return (this.state = { version: 1, files: {} });
  }

  private async saveState(stores: Stores, state: State): Promise<void> {
    this.pendingCount = countPending(state);
    const file = join(stores.dir, STATE_FILE);
    await writeFile(`${file}.tmp`, JSON.stringify(state));
    await rename(`${file}.tmp`, file);
  }

  private startWatching(dirs: Iterable<string>): void {
    for (const w of this.watchers.splice(0)) w.close();
    if (this.options.watch === false) return;
    for (const dir of dirs) {
      try {
        const w = watch(dir, { persistent: false }, () => (this.dirty = true));
        w.on('error', () => (this.dirty = true));
        this.watchers.push(w);
      } catch {
        // Gone or not a directory: its modification time is checked instead.
      }
    }
  }

  close(): void {
    for (const w of this.watchers.splice(0)) w.close();
  }

  /**
   * Brings the index up to the files. Run as a write (the engine serialises it). Texts the
   * embedding cache lacks are embedded at once, or, when that takes longer than `embedWaitMs`,
   * in the background: their entries are indexed at once without their new vector (the old one,
   * or none) and again when it is in. Default: everything at once (an open, a process that exits).
   */
  async sync(stores: Stores, embedder: Embedder, options: { embedWaitMs?: number } = {}): Promise<TeamSyncReport> {
    this.dirty = false;
    let mark = performance.now();
    const lap = () => -mark + (mark = performance.now());
    const ms = { list: 0, read: 0, resolve: 0, embed: 0, index: 0, state: 0 };
    const state = await this.loadState(stores);
    // git may rewrite a file in place (a checkout, a merge): its index changes with every such write.
    // Taken before the files are listed, so that a change while they are is seen by the next call.
    const markers = gitMarkers(this.paths.root).map((m) => [m, statSync(m, { throwIfNoEntry: false })?.mtimeMs ?? -1] as const);
    const { files, dirs } = await listFolder(this.paths);
    this.startWatching(dirs.keys());
    for (const [marker, time] of markers) dirs.set(marker, time);
    this.dirTimes = dirs;
    // Watched from here: a change while this sync reads is seen by the next call.

    const report: TeamSyncReport = {
      files: { total: files.length, read: 0, indexed: 0, removed: 0, skipped: 0 },
      entries: { added: 0, updated: 0, unchanged: 0 },
      embedded: 0,
      fromCache: 0,
      problems: [],
      deferred: 0,
      ms,
    };
    ms.list = lap();
    const problems: FileProblem[] = [];
    const fail = (file: string, e: unknown) => {
      if (e instanceof EntryFileError) problems.push({ file, line: e.line, message: e.problem });
      else if (e instanceof MemcoreError) problems.push({ file, line: null, message: e.message });
      else throw e;
    };
    const present = new Set(files.map((f) => f.rel));
    const parsed: { file: Listed; hash: string; result: ParsedEntryFile }[] = [];
    const touched: { file: Listed; hash: string }[] = [];
    for (const file of files) {
      const old = state.files[file.rel];
      // A file whose vector is pending is read again once no background work computes it.
      const waiting = old?.pending === true && !this.inFlight.has(file.rel);
      if (old && old.size === file.size && old.mtimeMs === file.mtimeMs && !waiting) continue;
      report.files.read++;
      let text: string;
      try {
        // Synchronous, as the stats of listFolder: an awaited read costs a turn of the thread pool
        // each, seconds for 10,000 small files on a busy machine.
        text = readFileSync(file.abs, 'utf8');
      } catch (e) {
        fail(file.rel, new EntryFileError(file.rel, null, `cannot be read: ${(e as Error).message}`));
        continue;
      }
      const hash = createHash('sha256').update(text).digest('hex');
      if (old && old.hash === hash && !old.pending) {
        touched.push({ file, hash });
        continue;
      }
      try {
        parsed.push({ file, hash, result: parseListed(this.paths, file, text) });
      } catch (e) {
        fail(file.rel, e);
      }
    }
    const gone = Object.keys(state.files).filter((rel) => !present.has(rel));
    ms.read = lap();

    // An id is defined once: by the file that held it already, else the first file read.
    const owner = new Map<string, string>();
    const leaving = new Set([...gone, ...parsed.map((p) => p.file.rel)]);
    for (const [rel, s] of Object.entries(state.files)) if (!leaving.has(rel)) for (const id of s.ids) owner.set(id, rel);
    const linked = await resolveIds(
      parsed,
      owner,
      async (ids) => new Set([...(await stores.graph.existingIds('entry', ids)), ...(await stores.graph.existingIds('path', ids))]),
      fail,
    );

    const parts: SourcePart[] = [
      ...linked.map(({ file, hash, result }) => ({ source: SOURCE_PREFIX + file.rel, hash, doc: result.document })),
      ...gone.map((rel) => ({ source: SOURCE_PREFIX + rel, doc: { entries: [], codeLocations: [], goldenPaths: [], relations: [] } })),
    ];
    ms.resolve = lap();
    const stale = new Set(linked.filter(({ file }) => state.files[file.rel]?.pending).map(({ result }) => result.id));
    const { files: deferring, embedded } = await this.deferredFiles(stores, embedder, linked, options.embedWaitMs ?? Infinity);
    const before = new Map([...deferring].map((rel) => [rel, state.files[rel]] as const));
    if (deferring.size > 0) {
      // Saved before the index write: a crash after it leaves files the next sync indexes again.
      for (const { file, hash, result } of linked)
        if (deferring.has(file.rel))
          state.files[file.rel] = { size: file.size, mtimeMs: file.mtimeMs, hash, ids: [result.id], pending: true };
      await this.saveState(stores, state);
    }
    ms.embed = lap();
    const deferredIds = new Set<string>();
    const indexed = new Set<string>();
    if (parts.length > 0) {
      const write = async (some: SourcePart[]) => {
        const { doc, external } = combine(some);
        const r = await indexDocument(stores, embedder, 'memory folder', doc, external, {
          parts: some,
          recordSource: true,
          sync: true,
          autoLink: this.options.autoLink ?? true,
          inputName: some.length === 1 ? some[0]!.source.slice(SOURCE_PREFIX.length) : 'memory folder',
          staleVectors: stale,
          deferEmbedding: deferring.size > 0,
        });
        for (const id of r.deferred ?? []) deferredIds.add(id);
        report.entries.added += r.entries.added;
        report.entries.updated += r.entries.updated;
        report.entries.unchanged += r.entries.unchanged;
        report.embedded += r.embedded;
        report.fromCache += r.fromCache;
        for (const p of some) indexed.add(p.source.slice(SOURCE_PREFIX.length));
      };
      try {
        await write(parts);
      } catch (e) {
        if (!(e instanceof MemcoreError) || e.code === 'STORE') throw e;
        // One file's records break the write (a cycle of SUPERSEDES, say): each file on its own.
        for (const part of parts) await write([part]).catch((err: unknown) => fail(part.source.slice(SOURCE_PREFIX.length), err));
      }
    }

    ms.index = lap();
    for (const { file, hash, result } of linked) {
      if (!indexed.has(file.rel)) continue;
      state.files[file.rel] = {
        size: file.size,
        mtimeMs: file.mtimeMs,
        hash,
        ids: [result.id],
        ...(deferredIds.has(result.id) ? { pending: true as const } : {}),
      };
      report.files.indexed++;
    }
    // A file marked before the write that the write refused: as it was.
    for (const [rel, old] of before) {
      if (indexed.has(rel)) continue;
      if (old) state.files[rel] = old;
      else delete state.files[rel];
    }
    report.deferred = deferredIds.size;
    // Embedded here in time, then found in the cache by the index write.
    report.embedded += embedded;
    report.fromCache = Math.max(0, report.fromCache - embedded);
    for (const { file, hash } of touched)
      state.files[file.rel] = { ...state.files[file.rel]!, size: file.size, mtimeMs: file.mtimeMs, hash };
    for (const rel of gone) {
      if (!indexed.has(rel)) continue;
      delete state.files[rel];
      report.files.removed++;
    }
    if (report.files.indexed + report.files.removed + touched.length + before.size > 0) await this.saveState(stores, state);
    report.files.skipped = problems.length;
    report.problems = problems;
    this.problems = problems;
    this.staleFiles = new Set(problems.filter((p) => state.files[p.file] !== undefined).map((p) => p.file));
    ms.state = lap();
    this.lastSync = report;
    return report;
  }

  /**
   * The files to index without their new vector: when the texts the cache lacks take longer than
   * `waitMs` to embed, they are left to the background (which goes on; a file is pending until
   * its vector is in). Empty when they came in time (the index write then finds them in the cache).
   */
  private async deferredFiles(
    stores: Stores,
    embedder: Embedder,
    linked: { file: Listed; result: ParsedEntryFile }[],
    waitMs: number,
  ): Promise<{ files: Set<string>; embedded: number }> {
    const none = { files: new Set<string>(), embedded: 0 };
    if (!Number.isFinite(waitMs) || embedder.cacheVectors === false) return none;
    const filesOf = new Map<string, string[]>();
    for (const { file, result } of linked)
      for (const e of result.document.entries) {
        const text = embeddingText(e);
        filesOf.set(text, [...(filesOf.get(text) ?? []), file.rel]);
      }
    if (filesOf.size === 0) return none;
    const cached = await stores.embeddingCache.get([...filesOf.keys()]);
    const missing = [...filesOf.keys()].filter((t) => !cached.has(t));
    if (missing.length === 0) return none;
    const files = [...new Set(missing.flatMap((t) => filesOf.get(t)!))];
    const left: { behind: boolean; ok?: boolean } = { behind: false };
    const job = this.embedInBackground(stores, embedder, missing, files, left);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([job, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    // Done in time (checked and marked in one turn, so the job's end sees which): failed, the
    // index write embeds them itself (and says why it cannot).
    if (left.ok !== undefined) return { files: new Set(), embedded: left.ok ? missing.length : 0 };
    left.behind = true;
    return { files: new Set(files), embedded: 0 };
  }
}

/** A file parsed, and refused when it is a secret in the tracked folder. */
function parseListed(paths: TeamPaths, file: Listed, text: string): ParsedEntryFile {
  const result = parseEntryFile(file.rel, text, file);
  if (!file.local && result.sensitivity === 'secret')
    throw new EntryFileError(
      file.rel,
      null,
      `a secret entry in the tracked folder: move it to ${relative(paths.root, paths.localDir)}/ (never committed), and out of git history if it was pushed`,
    );
  return result;
}

/**
 * The parsed files that can be indexed: an id is defined once (by the file `owner` says holds it,
 * else the first file read), and links point at an entry or golden path of the folder or at one
 * `inStore` finds (written from elsewhere). The others are reported through `fail`.
 */
async function resolveIds<T extends { file: Listed; result: ParsedEntryFile }>(
  parsed: T[],
  owner: Map<string, string>,
  inStore: (ids: string[]) => Promise<Set<string>>,
  fail: (file: string, e: EntryFileError) => void,
): Promise<T[]> {
  const unique = parsed.filter(({ file, result }) => {
    const other = owner.get(result.id);
    if (other !== undefined && other !== file.rel) {
      fail(file.rel, new EntryFileError(file.rel, 2, `id ${JSON.stringify(result.id)} is also the id of ${other}`));
      return false;
    }
    owner.set(result.id, file.rel);
    return true;
  });
  const unknown = [...new Set(unique.flatMap((g) => g.result.targets.map((t) => t.id)).filter((id) => !owner.has(id)))];
  const found = unknown.length ? await inStore(unknown) : new Set<string>();
  return unique.filter(({ file, result }) => {
    const dangling = result.targets.find((t) => !owner.has(t.id) && !found.has(t.id));
    if (dangling)
      fail(file.rel, new EntryFileError(file.rel, dangling.line, `links to ${JSON.stringify(dangling.id)}, which no memory file defines`));
    return !dangling;
  });
}

/** The parts as one document (a code location several files reference once), and the endpoints it does not hold. */
function combine(parts: SourcePart[]): { doc: MemoryDocument; external: ExternalReference[] } {
  const code = new Map(parts.flatMap((p) => p.doc.codeLocations).map((c) => [c.id, c]));
  const doc: MemoryDocument = {
    entries: parts.flatMap((p) => p.doc.entries),
    codeLocations: [...code.values()],
    goldenPaths: parts.flatMap((p) => p.doc.goldenPaths),
    relations: parts.flatMap((p) => p.doc.relations),
  };
  const held: Record<EndpointKind, Set<string>> = {
    entry: new Set(doc.entries.map((e) => e.id)),
    code: new Set(code.keys()),
    path: new Set(doc.goldenPaths.map((p) => p.id)),
  };
  const external: ExternalReference[] = [];
  for (const r of doc.relations) {
    const [fromKind, toKind] = RELATION_ENDPOINTS[r.type];
    const record = `${r.type} "${r.from}" → "${r.to}"`;
    if (!held[fromKind].has(r.from)) external.push({ id: r.from, kind: fromKind, record, field: 'from' });
    if (!held[toKind].has(r.to)) external.push({ id: r.to, kind: toKind, record, field: 'to' });
  }
  return { doc, external };
}

/** Writes a file whole or not at all: a temp file beside it, then a rename. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${process.pid}.${Date.now()}.tmp`);
  await writeFile(temp, text);
  await rename(temp, path);
}

/** Every entry and golden path file of the folder and its local folder, with the directories walked (and their times). */
export async function listFolder(paths: TeamPaths): Promise<{ files: Listed[]; dirs: Map<string, number> }> {
  const files: Listed[] = [];
  const dirs = new Map<string, number>();
  const rel = (abs: string) => relative(paths.root, abs).split(sep).join('/');
  // Synchronous stats: ~10 µs a file, where an awaited one costs a turn of the event loop each
  // (10,000 files: ~0.1 s against seconds on a busy machine).
  const readDir = (dir: string) => {
    try {
      const time = statSync(dir).mtimeMs;
      const list = readdirSync(dir, { withFileTypes: true });
      dirs.set(dir, time);
      return list;
    } catch {
      dirs.set(dir, -1);
      return [];
    }
  };
  const addFiles = (dir: string, core: string, kind: 'entry' | 'path', local: boolean) => {
    for (const f of readDir(dir)) {
      if (!f.isFile() || f.name.startsWith('.') || !f.name.endsWith('.md')) continue;
      const abs = join(dir, f.name);
      const s = statSync(abs, { throwIfNoEntry: false });
      if (!s) continue;
      files.push({ rel: rel(abs), abs, kind, core, name: f.name.slice(0, -3), local, size: s.size, mtimeMs: s.mtimeMs });
    }
  };
  for (const [top, local] of [
    [paths.dir, false],
    [paths.localDir, true],
  ] as const) {
    for (const c of readDir(top)) {
      if (!c.isDirectory() || c.name.startsWith('.')) continue;
      const core = join(top, c.name);
      addFiles(core, c.name, 'entry', local);
      if (existsSync(join(core, 'paths'))) addFiles(join(core, 'paths'), c.name, 'path', local);
    }
  }
  return { files, dirs };
}

/**
 * Every file of the folder checked, as `memcore check` and `doctor` do: each file read and parsed,
 * ids defined once, links pointing at an entry or golden path of the folder or of the store
 * (`inStore`, when a store is at hand). Nothing is written.
 */
export async function checkFolder(
  paths: TeamPaths,
  inStore: (ids: string[]) => Promise<Set<string>> = async () => new Set(),
): Promise<{ files: number; entries: number; goldenPaths: number; problems: FileProblem[] }> {
  const { files } = await listFolder(paths);
  const problems: FileProblem[] = [];
  const parsed: { file: Listed; result: ParsedEntryFile }[] = [];
  for (const file of files) {
    try {
      parsed.push({ file, result: parseListed(paths, file, await readFile(file.abs, 'utf8')) });
    } catch (e) {
      if (e instanceof EntryFileError) problems.push({ file: file.rel, line: e.line, message: e.problem });
      else if (e instanceof MemcoreError) problems.push({ file: file.rel, line: null, message: e.message });
      else problems.push({ file: file.rel, line: null, message: `cannot be read: ${(e as Error).message}` });
    }
  }
  await resolveIds(parsed, new Map(), inStore, (file, e) => problems.push({ file, line: e.line, message: e.problem }));
  problems.sort((x, y) => (x.file < y.file ? -1 : x.file > y.file ? 1 : (x.line ?? 0) - (y.line ?? 0)));
  return {
    files: files.length,
    entries: parsed.filter((p) => p.result.kind === 'entry').length,
    goldenPaths: parsed.filter((p) => p.result.kind === 'path').length,
    problems,
  };
}

/** `memcore doctor` of a folder not served: the memory folder's files checked too (without the store, links resolve in the folder). */
export async function folderFindings(report: DoctorReport, paths: TeamPaths, dbDir?: string): Promise<DoctorReport> {
  const { files, problems } = await checkFolder(paths);
  const pending = dbDir === undefined ? 0 : await pendingFiles(dbDir);
  const findings = [
    ...report.findings,
    // Left by a process that stopped before its background embedding wrote them: the next open does.
    ...(pending > 0
      ? [
          {
            check: 'memory vectors',
            ok: true,
            message: `${pending} entries indexed without their text's vector; the next open embeds them`,
          },
        ]
      : []),
    ...(problems.length === 0
      ? [{ check: 'memory files', ok: true, message: `${files} files under ${paths.dir}, all readable` }]
      : problems.map((p) => ({
          check: 'memory files',
          ok: false,
          message: `${p.file}${p.line !== null ? `:${p.line}` : ''}: ${p.message} (skipped; the rest answers)`,
        }))),
  ];
  return { ...report, healthy: report.healthy && problems.length === 0, findings };
}
