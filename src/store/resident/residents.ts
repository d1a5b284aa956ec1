/**
 * The structures the query path holds in memory (entry columns, keyword index, name index,
 * effectiveness, and the graph's entry adjacency and code links) and the one way each is built,
 * kept in step and invalidated: built on first use, followed by this process's writes, rebuilt
 * (or brought up to date from the change log) when another process's write moved the store's
 * generation, and written to snapshot files
 * (`<db>/snapshots/`) that a fresh process loads instead of building (docs/storage.md#snapshots).
 * The stores stay the system of record: nothing here can make a structure differ from one built
 * afresh, which test/resident.test.ts checks.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResidentLoad } from '../../model/types.js';
import type { FeedbackSignal } from '../../feedback/effectiveness.js';
import type { StoredEntry } from '../lance/entriesTable.js';
import { appendChange, changesBetween, forgetChangesThrough, type ChangeRecord } from '../snapshot/changeLog.js';
import { readSnapshot, snapshotGeneration, writeSnapshot, type LaterSections, type SnapshotContent } from '../snapshot/snapshotFile.js';

/** What a write changed, for the structures held in memory to follow it. */
export interface StoreChange {
  upserted: readonly StoredEntry[];
  deleted: readonly string[];
  /** Ratings the write added (a feedback write). */
  signals?: readonly FeedbackSignal[];
}

/** One structure held in memory: its name, how it is built from the stores, followed and snapshotted. */
export interface Resident<T> {
  /** Its name: the snapshot file's, and the key of `stats().resident`. */
  key: string;
  build(): Promise<T>;
  /** Applies a write of this process (or the change log's net change) in place. */
  follow?(value: T, change: StoreChange): void;
  /**
   * Kept in step by its owner instead, in place, as the owner's writes happen (the graph's
   * structures: a write's change names entries, not edges). Held whatever the generation says,
   * since only this process can write what it describes (Kuzu lets one process open a database),
   * and never brought up to date from the change log; its snapshot loads only at the generation
   * it was written at. The owner calls `changedAhead` when it changes what the structure
   * describes before the write moves the generation.
   */
  followedByOwner?: boolean;
  snapshot?: Snapshotting<T>;
}

/** What is held of a structure: at which generation, and how it goes on. */
interface Held<T> {
  generation: number;
  value: Promise<T>;
  follow?: (value: T, change: StoreChange) => void;
  followedByOwner?: boolean;
  snapshot?: Snapshotting<T>;
}

/**
 * How a structure derived from the entries is written to a snapshot file and read back. Only structures derived from the entries alone, which a write's change (its
 * ids) lets them follow, have one: a stale snapshot is brought up to date from the change log.
 */
export interface Snapshotting<T> {
  /** What the content depends on besides the generation: a snapshot written under another is not loaded. */
  fingerprint: string;
  write(value: T): SnapshotContent;
  /** Undefined when the content lacks what this store now holds (it is rebuilt). */
  read(content: SnapshotContent & { later: LaterSections }): T | undefined;
  /**
   * Arrays not needed for the first answer: read after the rest, into a value that must not be
   * followed or written out before `settled` says they are in.
   */
  lazy?: readonly string[];
  /** Reads the lazy arrays now, if not yet, and resolves once they are in. */
  settled?(value: T): Promise<void>;
  /**
   * What the owner starts once the process has had a moment (`settled` when absent): a value that
   * reads its lazy arrays where they lie checks them here instead of reading them in.
   */
  whenQuiet?(value: T): Promise<unknown>;
  /** Resolves once the lazy arrays were read, without asking for them: to why one did not come. */
  lazyRead?(value: T): Promise<string | undefined>;
}

/** Snapshot files and the change log live here, in the database folder. */
const SNAPSHOT_DIR = 'snapshots';
const CHANGE_LOG = 'changes.jsonl';
/** The structures written to snapshot files: the entry columns, the keyword and name indexes, the entry edges and the code links. */
export const SNAPSHOT_KEYS = ['columns', 'keywords', 'names', 'adjacency', 'code-links'] as const;
export type SnapshotKey = (typeof SNAPSHOT_KEYS)[number];
/** Kept in step by the graph store (`followedByOwner`): their snapshots are used only at their own generation. */
const OWNER_FOLLOWED_KEYS: ReadonlySet<string> = new Set<SnapshotKey>(['adjacency', 'code-links']);
/**
 * A long-lived process writes the snapshots of what it holds this long after its last write
 * (and on close): a burst of writes costs one snapshot, and no write waits for one. Only for
 * stores of at most DEFAULTS.store.snapshotAfterIdleMaxEntries entries (~1–2 s at 100K): at 1M
 * writing them took 26.7 s, much of it copying and flattening on the caller's thread, when a
 * served store would answer nothing; larger stores write them on close and `memcore index`.
 */
export const SNAPSHOT_AFTER_IDLE_MS = 30_000;
/**
 * A snapshot's lazy parts (Snapshotting.lazy) are read this long after the last load in flight
 * ended, unless something needs them sooner. Counted from the end of every load rather than from
 * the snapshot's: at 1M entries the entries' columns and the residual level (~1 GB) read while the
 * first query still loaded the keyword index made that query ~1.1 s slower (4.7 against 3.6 s).
 */
const LAZY_PARTS_AFTER_MS = 2_000;

/** What the structures need of the stores that hold the folder. */
export interface ResidentHost {
  readonly dir: string;
  /** The store's generation, re-read when another process may have moved it. */
  currentGeneration(): Promise<number>;
  /** The generation as this process last saw it, without reading. */
  knownGeneration(): number;
  /** Entries as stored, with their vectors: a catch-up re-reads what the change log names. */
  readStored(ids: readonly string[]): Promise<StoredEntry[]>;
  /** Whether a long-lived process writes the snapshots once writes pause (a small enough store). */
  snapshotsAfterIdle(): Promise<boolean>;
  /** Whether a write of this process is under way (what its owner follows is not snapshotted meanwhile). */
  writing(): boolean;
}

/**
 * Every structure held in memory for one database folder. Without a host (a graph store opened on
 * its own), structures are built on first use and held until forgotten: no generation, no snapshots.
 */
export class Residents {
  private readonly held = new Map<string, Held<unknown>>();
  /** Loads and builds in flight, and who waits for there to be none. */
  private loading = 0;
  private quietWaiters: (() => void)[] = [];

  constructor(private readonly host?: ResidentHost) {}

  private counted<T>(load: Promise<T>): Promise<T> {
    this.loading++;
    const ended = () => {
      if (--this.loading === 0) for (const wake of this.quietWaiters.splice(0)) wake();
    };
    load.then(ended, ended);
    return load;
  }

  /** Calls `run` once no load has been in flight for `ms`. */
  private whenQuietFor(ms: number, run: () => void): void {
    const waitForQuiet = () => {
      if (this.loading === 0) setTimeout(() => (this.loading === 0 ? run() : waitForQuiet()), ms).unref();
      else this.quietWaiters.push(waitForQuiet);
    };
    waitForQuiet();
  }

  /** The folder's host: only structures held for a folder have snapshots and a change log. */
  private get folder(): ResidentHost {
    if (!this.host) throw new Error('structures held without a folder have no snapshots');
    return this.host;
  }

  /**
   * The structure, built on first use. With `follow`, the writes of this process update it in
   * place (follow must be idempotent: a build in flight during a write may or may not have seen
   * it); without, or once the generation moved by another process's write, it is built again, or
   * brought up to date from the change log when it has a snapshot scheme.
   */
  async get<T>(resident: Resident<T>): Promise<T> {
    const { key, followedByOwner } = resident;
    const ownersValue = followedByOwner && this.held.get(key);
    if (ownersValue) return (ownersValue as Held<T>).value;
    const snapshot = this.host && resident.snapshot;
    const build = () => resident.build();
    const follow = resident.follow && ((value: T, change: StoreChange) => resident.follow!(value, change));
    const generation = (await this.host?.currentGeneration()) ?? 0;
    // Read after the wait, and nothing awaited from here until it is held: concurrent first calls share one load.
    const cached = this.held.get(key) as Held<T> | undefined;
    if (cached && (followedByOwner || cached.generation === generation)) return cached.value;
    // Held at an older generation (another process wrote since): brought up to date from the
    // change log when it has every generation between, rebuilt otherwise.
    const catchUp =
      cached && cached.generation < generation && follow && snapshot
        ? cached.value.then(async (value) => {
            return (await this.bringUpToDate(value, follow, cached.generation, generation, snapshot.settled))
              ? value
              : this.loadResident(key, build, snapshot, generation, follow);
          })
        : undefined;
    const value = this.counted(catchUp ?? (snapshot ? this.loadResident(key, build, snapshot, generation, follow) : build()));
    const entry = { generation, value, follow, followedByOwner, snapshot } as Held<unknown>;
    this.held.set(key, entry);
    value.catch(() => this.held.get(key) === entry && this.held.delete(key));
    return value;
  }

  /**
   * The structure as held now, when it is of the store's current generation; undefined when it is
   * not loaded (without loading it: that is the cold start).
   */
  async current<T>(key: string): Promise<T | undefined> {
    const held = this.held.get(key) as Held<T> | undefined;
    return held?.generation === ((await this.host?.currentGeneration()) ?? 0) ? held.value.catch(() => undefined) : undefined;
  }

  /** What is held of `key` at whatever generation (close releases it). */
  heldValue<T>(key: string): Promise<T> | undefined {
    return (this.held.get(key) as Held<T> | undefined)?.value;
  }

  /** Drops what is held of `key`: the next `get` builds it again. */
  forget(key: string): void {
    this.held.delete(key);
  }

  /** Generation through which a structure's snapshots no longer describe what it holds (see `changedAhead`). */
  private readonly staleThrough = new Map<string, number>();

  /**
   * The owner of `key` changed what it describes ahead of the write's generation (a graph write
   * commits before the write moves the generation): a snapshot of the generation known now is no
   * longer loaded for it. With `drop`, what is held goes too, and the next `get` builds it.
   */
  changedAhead(key: string, opts: { drop?: boolean } = {}): void {
    if (this.host) this.staleThrough.set(key, this.host.knownGeneration());
    if (opts.drop) this.held.delete(key);
  }

  /** How each structure held in memory was last loaded (`stats().resident`). */
  readonly loads = new Map<string, ResidentLoad>();
  /** The generation of each snapshot file as this process last read or wrote it. */
  private readonly snapshotGenerations = new Map<string, number>();

  private snapshotPath(key: string): string {
    return join(this.folder.dir, SNAPSHOT_DIR, `${key}.snap`);
  }

  /**
   * A structure from its snapshot file when there is one of this generation, or of an older one
   * that the change log brings up to date; from the stores otherwise (and then with a note saying
   * why the file was not used). The stores stay the system of record: nothing here can make a
   * structure differ from one built afresh, which test/resident.test.ts checks.
   */
  private async loadResident<T>(
    key: string,
    build: () => Promise<T>,
    snapshot: Snapshotting<T>,
    generation: number,
    follow?: (value: T, change: StoreChange) => void,
  ): Promise<T> {
    const started = performance.now();
    const done = (value: T, loadedFrom: ResidentLoad['loadedFrom'], note?: string, caughtUp?: ResidentLoad['caughtUp']) => {
      this.loads.set(key, { loadedFrom, ms: performance.now() - started, ...(note ? { note } : {}), ...(caughtUp ? { caughtUp } : {}) });
      return value;
    };
    let caughtUp: { entries: number } | undefined;
    const path = this.snapshotPath(key);
    let note: string | undefined = this.lazyFailures.get(key);
    this.lazyFailures.delete(key);
    if (note || generation <= (this.staleThrough.get(key) ?? -1)) return done(await build(), 'built', note);
    try {
      const found = await readSnapshot(path, { kind: key, fingerprint: snapshot.fingerprint }, { lazy: snapshot.lazy });
      if (found && 'problem' in found) note = `${path} ${found.problem}; rebuilt from the stores`;
      else if (found && found.generation > generation)
        note = `${path} is of generation ${found.generation}, past the store's ${generation}; rebuilt from the stores`;
      else if (found) {
        this.snapshotGenerations.set(key, found.generation);
        const value = snapshot.read(found.content);
        // Not used as it is: the file need not stay open for its later parts.
        const giveUp = (why: string) => {
          found.content.later.release();
          return why;
        };
        if (value === undefined) note = giveUp(`${path} lacks what this store now holds; rebuilt from the stores`);
        else if (found.generation === generation) {
          this.watchLazyParts(key, path, snapshot, value);
          return done(value, 'snapshot');
        } else if (follow && (caughtUp = await this.bringUpToDate(value, follow, found.generation, generation, snapshot.settled))) {
          this.watchLazyParts(key, path, snapshot, value);
          return done(value, 'caught-up', undefined, { fromGeneration: found.generation, entries: caughtUp.entries });
        } else
          note = giveUp(
            `${path} is of generation ${found.generation}, the store of ${generation}, and the change log does not bring it up to date; rebuilt from the stores`,
          );
      }
    } catch (e) {
      note = `${path} could not be loaded (${(e as Error).message}); rebuilt from the stores`;
    }
    return done(await build(), 'built', note);
  }

  /** Why a structure's lazy snapshot parts did not come: its next load builds it, with this note. */
  private readonly lazyFailures = new Map<string, string>();

  /**
   * Reads the parts the snapshot hands over later once loads are quiet (LAZY_PARTS_AFTER_MS). When
   * one does not come (damaged meanwhile), the structure is let go: the next query builds it from
   * the stores, and `stats().resident` says why.
   */
  private watchLazyParts<T>(key: string, path: string, snapshot: Snapshotting<T>, value: T): void {
    const whenQuiet = snapshot.whenQuiet ?? snapshot.settled;
    if (whenQuiet) this.whenQuietFor(LAZY_PARTS_AFTER_MS, () => void whenQuiet(value).catch(() => undefined));
    if (!snapshot.lazyRead) return;
    void snapshot.lazyRead(value).then((problem) => {
      const held = this.held.get(key);
      if (!problem || !held) return;
      void held.value.then((v) => {
        if (v !== value || this.held.get(key) !== held) return;
        this.held.delete(key);
        this.lazyFailures.set(key, `${path} ${problem}; rebuilt from the stores`);
      });
    });
  }

  /**
   * Applies the change log's net change from `from` to `to` to a structure held at `from`: the
   * entries written since are read again (with their vectors), as a write of this process would
   * hand them over, once the value's lazy parts are in (`settled`; not read for a change of no
   * entries: a rating, a write of the graph alone). Undefined when the log does not reach.
   */
  private async bringUpToDate<T>(
    value: T,
    follow: (value: T, change: StoreChange) => void,
    from: number,
    to: number,
    settled?: (value: T) => Promise<void>,
  ): Promise<{ entries: number } | undefined> {
    const net = await changesBetween(join(this.folder.dir, SNAPSHOT_DIR, CHANGE_LOG), from, to);
    if (!net) return undefined;
    if (net.upserted.length + net.deleted.length === 0) return { entries: 0 };
    await settled?.(value);
    const stored = net.upserted.length > 0 ? await this.readStoredBetween(from, to, net.upserted) : [];
    const found = new Set(stored.map((s) => s.entry.id));
    follow(value, {
      upserted: stored,
      deleted: [...net.deleted, ...net.upserted.filter((id) => !found.has(id))],
    });
    return { entries: net.upserted.length + net.deleted.length };
  }

  /** The rows the last catch-up read, by generations: the structures caught up over the same stretch share one read. */
  private lastCatchUpRead: { stretch: string; rows: Promise<StoredEntry[]> } | undefined;

  private readStoredBetween(from: number, to: number, ids: readonly string[]): Promise<StoredEntry[]> {
    const stretch = `${from}:${to}`;
    if (this.lastCatchUpRead?.stretch !== stretch) {
      const rows = this.folder.readStored(ids);
      this.lastCatchUpRead = { stretch, rows };
      rows.catch(() => undefined);
      // Let go of the rows (and their vectors) once the loads are over.
      this.whenQuietFor(0, () => {
        if (this.lastCatchUpRead?.rows === rows) this.lastCatchUpRead = undefined;
      });
    }
    return this.lastCatchUpRead!.rows;
  }

  /**
   * Writes the snapshot of every structure held whose file is not of the generation it holds
   * (close, the idle timer, and `memcore index`); with `rewrite`, of every structure held (the
   * bench). Returns what it wrote.
   */
  writeSnapshots(opts: { rewrite?: boolean } = {}): Promise<{ key: string; generation: number; bytes: number; ms: number }[]> {
    // One at a time: the idle timer's and a close's would write the same temporary files.
    const run = this.snapshotsWritten.then(() => this.writeSnapshotsNow(opts));
    this.snapshotsWritten = run.catch(() => undefined);
    return run;
  }

  private snapshotsWritten: Promise<unknown> = Promise.resolve();

  private async writeSnapshotsNow(opts: { rewrite?: boolean }): Promise<{ key: string; generation: number; bytes: number; ms: number }[]> {
    if (opts.rewrite) this.snapshotGenerations.clear();
    this.clearSnapshotTimer();
    const written: { key: string; generation: number; bytes: number; ms: number }[] = [];
    await mkdir(join(this.folder.dir, SNAPSHOT_DIR), { recursive: true });
    for (const [key, d] of [...this.held]) {
      if (!d.snapshot || this.snapshotGenerations.get(key) === d.generation) continue;
      // What its owner follows changes within a write, ahead of the generation that write moves to.
      if (d.followedByOwner && (this.folder.writing() || d.generation !== this.folder.knownGeneration())) continue;
      const started = performance.now();
      const generation = d.generation;
      // Taken in one synchronous step: no write's follow can run halfway through it.
      const content = await d.value.then(
        async (v) => {
          await d.snapshot!.settled?.(v);
          return d.snapshot!.write(v);
        },
        () => undefined,
      );
      if (!content || d.generation !== generation || (d.followedByOwner && this.folder.writing())) continue;
      const bytes = await writeSnapshot(this.snapshotPath(key), { kind: key, fingerprint: d.snapshot.fingerprint, generation }, content);
      this.snapshotGenerations.set(key, generation);
      written.push({ key, generation, bytes, ms: performance.now() - started });
    }
    if (written.length > 0) {
      // The log is kept back to the oldest snapshot on disk.
      const generations = await Promise.all(
        SNAPSHOT_KEYS.map(async (key) => this.snapshotGenerations.get(key) ?? (await snapshotGeneration(this.snapshotPath(key)))),
      );
      // A structure without a snapshot needs no line of the log.
      const oldest = Math.min(...generations.filter((g) => g !== undefined));
      if (Number.isFinite(oldest)) await forgetChangesThrough(join(this.folder.dir, SNAPSHOT_DIR, CHANGE_LOG), oldest);
    }
    return written;
  }

  private snapshotTimer: NodeJS.Timeout | undefined;

  /** Stops the idle timer. */
  clearSnapshotTimer(): void {
    clearTimeout(this.snapshotTimer);
    this.snapshotTimer = undefined;
  }

  /** After a write: the snapshots are written once writes have paused (SNAPSHOT_AFTER_IDLE_MS). */
  private scheduleSnapshots(): void {
    this.clearSnapshotTimer();
    const whenSmall = async () => {
      if (await this.folder.snapshotsAfterIdle()) await this.writeSnapshots();
    };
    this.snapshotTimer = setTimeout(() => void whenSmall().catch(() => undefined), SNAPSHOT_AFTER_IDLE_MS);
    this.snapshotTimer.unref();
  }

  /**
   * Records a write's change (`all`: every entry moved) for structures held elsewhere (other
   * processes, snapshot files) to follow.
   */
  async logChange(generation: number, change: StoreChange | 'all'): Promise<void> {
    const record: ChangeRecord =
      change === 'all'
        ? { generation, all: true }
        : { generation, upserted: change.upserted.map((s) => s.entry.id), deleted: [...change.deleted] };
    this.wrote = true;
    await mkdir(join(this.folder.dir, SNAPSHOT_DIR), { recursive: true });
    await appendChange(join(this.folder.dir, SNAPSHOT_DIR, CHANGE_LOG), record);
  }

  /** Whether this process wrote the store since it opened it (the writer leaves the snapshots current on close). */
  wrote = false;
  /** Whether one of those writes was a bulk write (ingest, import, import-code): then every snapshot is left current, none to a catch-up. */
  bulkWrote = false;

  /**
   * The structures whose snapshot file a fresh reader could not use as it is or catch up cheaply,
   * and that this process does not hold at the store's generation (those `writeSnapshots` writes
   * anyway): no file, a file past the store or under a gap in the change log, an entry edges or
   * code links file of another generation (the log holds ids, not edges), or more than
   * `maxCatchUpEntries` entries to read again (undefined: any file of another generation). What
   * the writer loads and writes before it exits.
   */
  async snapshotsBehind(maxCatchUpEntries: number | undefined): Promise<SnapshotKey[]> {
    const generation = await this.folder.currentGeneration();
    if (generation === 0) return [];
    const behind: SnapshotKey[] = [];
    for (const key of SNAPSHOT_KEYS) {
      const held = this.held.get(key);
      if (held?.snapshot && held.generation === generation) continue;
      const written = this.snapshotGenerations.get(key) ?? (await snapshotGeneration(this.snapshotPath(key)));
      if (written === generation) continue;
      if (written === undefined || written > generation || OWNER_FOLLOWED_KEYS.has(key) || maxCatchUpEntries === undefined) {
        behind.push(key);
        continue;
      }
      const net = await changesBetween(join(this.folder.dir, SNAPSHOT_DIR, CHANGE_LOG), written, generation);
      if (!net || net.upserted.length + net.deleted.length > maxCatchUpEntries) behind.push(key);
    }
    return behind;
  }

  /** Carries the structures that were current before a write over to the generation after it. */
  followWrite(change: StoreChange, from: number, to: number): void {
    if ([...this.held.values()].some((d) => d.snapshot)) this.scheduleSnapshots();
    for (const [key, d] of this.held) {
      if (d.followedByOwner) {
        d.generation = to; // its owner applied the write in place
        continue;
      }
      if (d.generation === to) continue; // built after the write by a query that saw the new generation first
      if (d.generation !== from || !d.follow) {
        this.held.delete(key);
        continue;
      }
      const follow = d.follow;
      const settled = d.snapshot?.settled;
      d.value = d.value.then(async (v) => {
        await settled?.(v);
        follow(v, change);
        return v;
      });
      d.value.catch(() => this.held.get(key) === d && this.held.delete(key));
      d.generation = to;
    }
  }
}
