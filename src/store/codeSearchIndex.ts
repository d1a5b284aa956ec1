/**
 * The code search index: per imported source file, its path, its symbols' names, signatures and
 * doc comments, what it imports, and its text, searched by BM25 per field (the keyword index's
 * machinery, over identifiers split into words). A thin adapter: it finds candidates and reports
 * each field's BM25; how the fields weigh is decided in retrieve/score.ts.
 *
 * Kept in the database folder as `code-search.json` and `code-search.log` (a base and what imports
 * changed since: see below), read on first use; a process holding the index applies what another
 * appended since. At the size of a repository's source (hono: ~400 files, ~3 MB of text) a load
 * takes tens of milliseconds.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { splitIdentifiers } from '../text/analyze.js';
import { KeywordIndex } from './resident/keywordIndex.js';
import { damagedFile } from './storeFiles.js';

export const CODE_SEARCH_FILE = 'code-search.json';
/** Text of a file past this is not searched (a file this long is data or generated). */
const MAX_TEXT_CHARS = 200_000;

export interface CodeSymbolDocument {
  /** As in the code location id: `name`, `Class.method`. */
  symbol: string;
  kind: string;
  startLine: number;
  endLine: number;
  signature?: string;
  doc?: string;
}

export interface CodeFileDocument {
  codebase: string;
  /** Relative to the codebase's root, `/`-separated. */
  path: string;
  language: string;
  /** Lines of the file. */
  lines: number;
  symbols: CodeSymbolDocument[];
  /** Import specifiers as written (import/importSpecifiers.ts). */
  imports: string[];
  text: string;
}

/** BM25 of a file's fields for a query (0 where a field does not match). */
export interface CodeFieldScores {
  path: number;
  names: number;
  text: number;
}

const keyOf = (codebase: string, path: string) => `${codebase}:${path}`;

/** A path's words: its folders and file name, extension left off. */
const pathWords = (path: string) => path.replace(/\.[^./]+$/, '').replace(/[/._-]+/g, ' ');
const symbolWords = (s: CodeSymbolDocument) => `${s.symbol.replace(/[.~]/g, ' ')} ${s.signature ?? ''} ${s.doc ?? ''}`;

export class CodeSearchIndex {
  private readonly files = new Map<string, CodeFileDocument>();
  private readonly byPath = new KeywordIndex();
  private readonly byNames = new KeywordIndex();
  private readonly byText = new KeywordIndex();
  private readonly bySymbol = new KeywordIndex();

  constructor(documents: Iterable<CodeFileDocument> = []) {
    this.upsert(documents);
  }

  get size(): number {
    return this.files.size;
  }

  documents(): IterableIterator<CodeFileDocument> {
    return this.files.values();
  }

  file(codebase: string, path: string): CodeFileDocument | undefined {
    return this.files.get(keyOf(codebase, path));
  }

  upsert(documents: Iterable<CodeFileDocument>): void {
    for (const d of documents) {
      const key = keyOf(d.codebase, d.path);
      this.remove([key]);
      const doc = { ...d, text: d.text.slice(0, MAX_TEXT_CHARS) };
      this.files.set(key, doc);
      const group = d.codebase;
      this.byPath.upsert([{ id: key, text: pathWords(d.path), group }]);
      this.byNames.upsert([{ id: key, text: splitIdentifiers(d.symbols.map(symbolWords).join('\n')), group }]);
      this.byText.upsert([{ id: key, text: splitIdentifiers(`${d.path}\n${doc.text}`), group }]);
      this.bySymbol.upsert(d.symbols.map((s) => ({ id: `${key}#${s.symbol}`, text: splitIdentifiers(symbolWords(s)), group })));
    }
  }

  /** Removes files by `codebase:path` key. */
  remove(keys: Iterable<string>): void {
    for (const key of keys) {
      const d = this.files.get(key);
      if (!d) continue;
      this.files.delete(key);
      for (const index of [this.byPath, this.byNames, this.byText]) index.remove([key]);
      this.bySymbol.remove(d.symbols.map((s) => `${key}#${s.symbol}`));
    }
  }

  /**
   * The files that match the query in some field (up to `limit` from each field's search), with
   * every field's BM25. `terms`: the query's words with a weight each (score.ts's codeQueryTerms);
   * a field's score is the weighted sum of its BM25 per word. `codebases` scopes the search and
   * its statistics.
   */
  search(
    terms: readonly { word: string; weight: number }[],
    opts: { limit: number; codebases?: readonly string[] },
  ): Map<string, { file: CodeFileDocument; scores: CodeFieldScores }> {
    const words = terms.map((t) => t.word).join(' ');
    const scope = opts.codebases ? { groups: opts.codebases } : {};
    const keys = new Set<string>();
    for (const index of [this.byPath, this.byNames, this.byText])
      for (const hit of index.search(words, { limit: opts.limit, ...scope })) keys.add(hit.id);
    const ids = [...keys];
    const out = new Map<string, { file: CodeFileDocument; scores: CodeFieldScores }>();
    for (const key of ids) out.set(key, { file: this.files.get(key)!, scores: { path: 0, names: 0, text: 0 } });
    const fields = [
      ['path', this.byPath],
      ['names', this.byNames],
      ['text', this.byText],
    ] as const;
    for (const { word, weight } of terms)
      for (const [field, index] of fields)
        for (const [key, score] of index.scoreDocuments(word, ids, scope)) out.get(key)!.scores[field] += weight * score;
    return out;
  }

  /** BM25 of each of a file's symbols for the query (symbols that match only). */
  symbolScores(query: string, file: CodeFileDocument): Map<string, number> {
    const key = keyOf(file.codebase, file.path);
    const scores = this.bySymbol.scoreDocuments(
      splitIdentifiers(query),
      file.symbols.map((s) => `${key}#${s.symbol}`),
      { groups: [file.codebase] },
    );
    return new Map([...scores].map(([id, score]) => [id.slice(key.length + 1), score]));
  }

  /**
   * The files of the same codebase that `file` imports, as far as its specifiers can be resolved:
   * relative paths (`./x`, `../y/z`) with the usual extensions and index files; dotted modules
   * (`click.core`, `.parser`) as `click/core.py` or a package's `__init__`; other specifiers (Go
   * packages) as every file of the folder whose path ends with them.
   */
  importsOf(file: CodeFileDocument): CodeFileDocument[] {
    const out = new Map<string, CodeFileDocument>();
    const here = posix.dirname(file.path);
    const byStem = (stem: string) => {
      for (const ext of ['', '.ts', '.tsx', '.js', '.mjs', '.jsx', '.py', '/index.ts', '/index.tsx', '/index.js', '/__init__.py']) {
        const hit = this.files.get(keyOf(file.codebase, stem + ext));
        if (hit) return hit;
      }
      return undefined;
    };
    for (const spec of file.imports) {
      let found: CodeFileDocument | undefined;
      if (spec.startsWith('./') || spec.startsWith('../'))
        found = byStem(posix.normalize(posix.join(here, spec)).replace(/\.[cm]?js$/, ''));
      else if (/^\.+[\w.]*$/.test(spec) || (file.language === 'python' && /^[\w.]+$/.test(spec))) {
        const dots = /^\.*/.exec(spec)![0].length;
        const rest = spec.slice(dots).replace(/\./g, '/');
        let base = here;
        for (let i = 1; i < dots; i++) base = posix.dirname(base);
        const candidates = dots > 0 ? [posix.join(base, rest)] : [rest, `src/${rest}`];
        for (const c of candidates) if ((found = byStem(c.replace(/^\.\//, '')))) break;
      } else if (file.language === 'go' && spec.includes('/')) {
        const tail = spec.split('/').slice(-1)[0]!;
        for (const d of this.files.values())
          if (d.codebase === file.codebase && d.language === 'go' && posix.dirname(d.path).split('/').slice(-1)[0] === tail)
            out.set(d.path, d);
      }
      if (found && found.path !== file.path) out.set(found.path, found);
    }
    return [...out.values()];
  }
}

/*
 * On disk: `code-search.json` (the base: every file's document, written whole and atomically)
 * and `code-search.log` (what imports changed since: one JSON record a line, appended). The log's
 * first line names the base it follows (the base's `logId`); a log that names another base (a
 * crash between a compaction's rename and the log's removal) is stale and ignored. When the log
 * would outgrow LOG_SHARE of the base (and LOG_MIN_BYTES), both are folded into a new base: a
 * re-import of one changed file appends a few kilobytes instead of rewriting tens of megabytes.
 * A line an interrupted append left half written does not parse and is skipped: the import that
 * wrote it did not reach the stores, so its files are read again next time.
 */
export const CODE_SEARCH_LOG = 'code-search.log';
/** The log is folded into the base when it would grow past this share of the base's size… */
const LOG_SHARE = 0.25;
/** …and past this many bytes (a small base is cheap to rewrite, a small log cheap to replay). */
const LOG_MIN_BYTES = 4 * 2 ** 20;

type LogRecord = { base: string } | { file: CodeFileDocument } | { gone: { codebase: string; path: string } };

const advice = 'it is derived from the code: delete it and run `memcore import-code` again';

const validDocument = (d: unknown) => {
  const f = d as Partial<CodeFileDocument> | null;
  return (
    typeof f?.codebase === 'string' &&
    typeof f.path === 'string' &&
    typeof f.text === 'string' &&
    Array.isArray(f.symbols) &&
    Array.isArray(f.imports)
  );
};

/** The documents of a code-search.json and the id its log names, or a STORE error that names it and says how to rebuild it. */
function readBase(path: string, text: string): { files: CodeFileDocument[]; logId: string | null } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw damagedFile(path, `is not valid JSON (${(e as Error).message})`, advice);
  }
  const { files, logId } = (value ?? {}) as { files?: unknown; logId?: unknown };
  if (!Array.isArray(files) || !files.every(validDocument)) throw damagedFile(path, 'is not a code search index memcore can read', advice);
  // A base written before the log existed has no id: no log follows it.
  return { files: files as CodeFileDocument[], logId: typeof logId === 'string' ? logId : null };
}

/** The base's log id from its first bytes (written first, so a change needs no parse of the whole base). */
async function baseLogId(path: string): Promise<string | null> {
  const head = await readHead(path, 128);
  return /^\{"version":1,"logId":"([0-9a-f]+)"/.exec(head)?.[1] ?? null;
}

/** The base id a log's first line names (null: none, or not a header). */
async function logBase(path: string): Promise<string | null> {
  return /^\{"base":"([0-9a-f]+)"\}\n/.exec(await readHead(path, 64))?.[1] ?? null;
}

async function readHead(path: string, bytes: number, position = 0): Promise<string> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return '';
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, position);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The log's records from byte `from` (0: the whole log, whose first line must name `logId`), up to
 * its last complete line: `consumed` is where the next read starts. `valid` false: the log follows
 * another base (or none), and holds nothing for this one.
 */
async function readLog(
  path: string,
  from: number,
  logId: string | null,
): Promise<{ records: LogRecord[]; consumed: number; valid: boolean }> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return { records: [], consumed: 0, valid: from === 0 };
  let bytes: Buffer;
  try {
    const { size } = await handle.stat();
    bytes = Buffer.alloc(Math.max(0, size - from));
    if (bytes.length > 0) await handle.read(bytes, 0, bytes.length, from);
  } finally {
    await handle.close();
  }
  const end = bytes.lastIndexOf(0x0a) + 1;
  const records: LogRecord[] = [];
  for (const line of bytes.subarray(0, end).toString('utf8').split('\n')) {
    if (line === '') continue;
    let record: LogRecord;
    try {
      record = JSON.parse(line) as LogRecord;
    } catch {
      continue; // half written by an interrupted append
    }
    records.push(record);
  }
  if (from === 0) {
    const header = records.shift();
    if (logId === null || !header || !('base' in header) || header.base !== logId) return { records: [], consumed: 0, valid: false };
  }
  for (const r of records)
    if (!('file' in r ? validDocument(r.file) : 'gone' in r && typeof r.gone?.codebase === 'string' && typeof r.gone.path === 'string'))
      throw damagedFile(path, 'holds a record that is not a code search change', advice);
  return { records, consumed: from + end, valid: true };
}

/** A folder's base and log as the file system has them now. */
interface DiskState {
  baseMtimeMs: number;
  baseBytes: number;
  logBytes: number;
}

async function diskState(dir: string): Promise<DiskState> {
  const [base, log] = await Promise.all([
    stat(join(dir, CODE_SEARCH_FILE)).catch(() => null),
    stat(join(dir, CODE_SEARCH_LOG)).catch(() => null),
  ]);
  return { baseMtimeMs: base?.mtimeMs ?? 0, baseBytes: base?.size ?? 0, logBytes: log?.size ?? 0 };
}

/** The documents of a folder's base with its log applied, in the order the index holds them (a replaced file moves to the end). */
interface Loaded {
  documents: Map<string, CodeFileDocument>;
  disk: DiskState;
  logId: string | null;
  /** Bytes of the log applied; meaningful when `logValid`. */
  logConsumed: number;
  logValid: boolean;
}

function applyRecords(documents: Map<string, CodeFileDocument>, records: readonly LogRecord[]): void {
  for (const r of records) {
    if ('file' in r) {
      const key = keyOf(r.file.codebase, r.file.path);
      documents.delete(key);
      documents.set(key, r.file);
    } else if ('gone' in r) documents.delete(keyOf(r.gone.codebase, r.gone.path));
  }
}

async function loadDocuments(dir: string): Promise<Loaded> {
  const path = join(dir, CODE_SEARCH_FILE);
  const disk = await diskState(dir);
  const base = disk.baseMtimeMs === 0 ? { files: [], logId: null } : readBase(path, await readFile(path, 'utf8'));
  const documents = new Map(base.files.map((d) => [keyOf(d.codebase, d.path), d]));
  const log = await readLog(join(dir, CODE_SEARCH_LOG), 0, base.logId);
  applyRecords(documents, log.records);
  return { documents, disk, logId: base.logId, logConsumed: log.consumed, logValid: log.valid };
}

/** Indexes by database folder, with the state of the files they were read at. */
const loaded = new Map<string, { index: CodeSearchIndex; disk: DiskState; logId: string | null; logConsumed: number; logValid: boolean }>();

/**
 * The loaded index of a folder, brought up to date: the records another process appended to the
 * log since are applied; a rewritten base is read again (null then, and when none is loaded).
 */
async function held(dir: string): Promise<{ index: CodeSearchIndex | null; disk: DiskState }> {
  const disk = await diskState(dir);
  const entry = loaded.get(dir);
  if (!entry || entry.disk.baseMtimeMs !== disk.baseMtimeMs || entry.disk.baseBytes !== disk.baseBytes) return { index: null, disk };
  if (entry.disk.logBytes === disk.logBytes) return { index: entry.index, disk };
  if (!entry.logValid || disk.logBytes < entry.disk.logBytes) return { index: null, disk };
  const tail = await readLog(join(dir, CODE_SEARCH_LOG), entry.logConsumed, entry.logId);
  if (!tail.valid) return { index: null, disk };
  applyToIndex(entry.index, tail.records);
  loaded.set(dir, { ...entry, disk, logConsumed: tail.consumed });
  return { index: entry.index, disk };
}

/**
 * What the folder's code search files are now (`''`: none): it changes with every write of the
 * index, so import-code's file stamps can tell whether the index is still as they last saw it.
 */
export async function codeSearchState(dir: string): Promise<string> {
  const disk = await diskState(dir);
  return disk.baseMtimeMs === 0 ? '' : `${disk.baseMtimeMs}:${disk.baseBytes}:${disk.logBytes}`;
}

/** The code search index of a database folder (empty when nothing was imported), brought up to date with what other processes wrote. */
export async function openCodeSearch(dir: string): Promise<CodeSearchIndex> {
  const { index } = await held(dir);
  if (index) return index;
  const l = await loadDocuments(dir);
  const built = new CodeSearchIndex(l.documents.values());
  loaded.set(dir, { index: built, disk: l.disk, logId: l.logId, logConsumed: l.logConsumed, logValid: l.logValid });
  return built;
}

/**
 * The paths of a codebase's files the index holds. Reads the files without indexing them when this
 * process has not loaded them: import-code needs the paths, and building the index costs seconds
 * at thousands of files.
 */
export async function codeSearchPaths(dir: string, codebase: string): Promise<Set<string>> {
  const { index } = await held(dir);
  const documents = index ? index.documents() : (await loadDocuments(dir)).documents.values();
  return new Set([...documents].filter((d) => d.codebase === codebase).map((d) => d.path));
}

/**
 * Replaces a codebase's files (`upserted`, and `removed` paths) in the index and its files. Called
 * by import-code after its write to the stores succeeded. Writes nothing when there is nothing to
 * change; appends the change to the log, or folds base, log and change into a new base when the
 * log would grow past its share. Updates the loaded index when this process holds it.
 */
export async function updateCodeSearch(
  dir: string,
  codebase: string,
  upserted: readonly CodeFileDocument[],
  removed: readonly string[],
): Promise<void> {
  if (upserted.length === 0 && removed.length === 0) return;
  const changes: LogRecord[] = [
    ...removed.map((path) => ({ gone: { codebase, path } })),
    ...upserted.map((d) => ({ file: { ...d, text: d.text.slice(0, MAX_TEXT_CHARS) } })),
  ];
  const lines = changes.map((r) => `${JSON.stringify(r)}\n`).join('');
  const { index, disk } = await held(dir);
  const basePath = join(dir, CODE_SEARCH_FILE);
  const logPath = join(dir, CODE_SEARCH_LOG);
  const logId = disk.baseMtimeMs === 0 ? null : index ? loaded.get(dir)!.logId : await baseLogId(basePath);
  const logValid = logId !== null && disk.logBytes > 0 && (await logBase(logPath)) === logId;
  const logBytes = (logValid ? disk.logBytes : 0) + Buffer.byteLength(lines);
  if (logId !== null && logBytes <= Math.max(LOG_MIN_BYTES, disk.baseBytes * LOG_SHARE)) {
    if (logValid) {
      // A line an interrupted append left unfinished is ended first, so the next record parses.
      const last = await readHead(logPath, 1, disk.logBytes - 1);
      await appendFile(logPath, last === '\n' ? lines : `\n${lines}`);
    } else await writeAtomically(logPath, `${JSON.stringify({ base: logId })}\n${lines}`);
    if (index) {
      applyToIndex(index, changes);
      const after = await diskState(dir);
      loaded.set(dir, { index, disk: after, logId, logConsumed: after.logBytes, logValid: true });
    }
    return;
  }
  // Fold: the base, its log and the change, written as a new base the log starts over from.
  let documents: CodeFileDocument[];
  if (index) {
    applyToIndex(index, changes);
    documents = [...index.documents()];
  } else {
    const l = await loadDocuments(dir);
    applyRecords(l.documents, changes);
    documents = [...l.documents.values()];
  }
  const newId = randomBytes(8).toString('hex');
  await writeAtomically(basePath, `{"version":1,"logId":"${newId}","files":${JSON.stringify(documents)}}`);
  await rm(logPath, { force: true });
  if (index) loaded.set(dir, { index, disk: await diskState(dir), logId: newId, logConsumed: 0, logValid: true });
  else loaded.delete(dir);
}

function applyToIndex(index: CodeSearchIndex, changes: readonly LogRecord[]): void {
  for (const r of changes) {
    if ('file' in r) index.upsert([r.file]);
    else if ('gone' in r) index.remove([keyOf(r.gone.codebase, r.gone.path)]);
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}
