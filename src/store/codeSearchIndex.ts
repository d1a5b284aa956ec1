/**
 * The code search index: per imported source file, its path, its symbols' names, signatures and
 * doc comments, what it imports, and its text, searched by BM25 per field (the keyword index's
 * machinery, over identifiers split into words). A thin adapter: it finds candidates and reports
 * each field's BM25; how the fields weigh is decided in retrieve/score.ts.
 *
 * Kept in `code-search.json` in the database folder, written whole (atomically) by import-code and
 * read on first use; a process sees another's import by the file's modification time. At the size
 * of a repository's source (hono: ~400 files, ~3 MB of text) a load takes tens of milliseconds.
 */
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
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

/** The documents of a code-search.json, or a STORE error that names it and says how to rebuild it. */
function readDocuments(path: string, text: string): CodeFileDocument[] {
  const advice = 'it is derived from the code: delete it and run `memcore import-code` again';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw damagedFile(path, `is not valid JSON (${(e as Error).message})`, advice);
  }
  const files = (value as { files?: unknown } | null)?.files;
  const valid = (d: unknown) => {
    const f = d as Partial<CodeFileDocument> | null;
    return (
      typeof f?.codebase === 'string' &&
      typeof f.path === 'string' &&
      typeof f.text === 'string' &&
      Array.isArray(f.symbols) &&
      Array.isArray(f.imports)
    );
  };
  if (!Array.isArray(files) || !files.every(valid)) throw damagedFile(path, 'is not a code search index memcore can read', advice);
  return files as CodeFileDocument[];
}

/** Indexes by database folder, with the file modification time they were read at. */
const loaded = new Map<string, { mtimeMs: number; index: CodeSearchIndex }>();

/** The loaded index of a folder if the file has not changed since, and the file's modification time (0: none). */
async function held(dir: string): Promise<{ index: CodeSearchIndex | null; mtimeMs: number }> {
  const info = await stat(join(dir, CODE_SEARCH_FILE)).catch(() => null);
  const mtimeMs = info?.mtimeMs ?? 0;
  const index = loaded.get(dir);
  return { index: index && index.mtimeMs === mtimeMs ? index.index : null, mtimeMs };
}

/** The modification time of a folder's code search file (0: none). */
export async function codeSearchMtime(dir: string): Promise<number> {
  return (await held(dir)).mtimeMs;
}

/** The file's documents, without building the keyword indexes (none when the file is missing). */
async function fileDocuments(dir: string, mtimeMs: number): Promise<CodeFileDocument[]> {
  const path = join(dir, CODE_SEARCH_FILE);
  return mtimeMs === 0 ? [] : readDocuments(path, await readFile(path, 'utf8'));
}

/** The code search index of a database folder (empty when nothing was imported), reloaded when another process rewrote it. */
export async function openCodeSearch(dir: string): Promise<CodeSearchIndex> {
  const { index, mtimeMs } = await held(dir);
  if (index) return index;
  const built = new CodeSearchIndex(await fileDocuments(dir, mtimeMs));
  loaded.set(dir, { mtimeMs, index: built });
  return built;
}

/**
 * The paths of a codebase's files the index holds. Reads the file without indexing it when this
 * process has not loaded it: import-code needs the paths, and building the index costs seconds
 * at thousands of files.
 */
export async function codeSearchPaths(dir: string, codebase: string): Promise<Set<string>> {
  const { index, mtimeMs } = await held(dir);
  const documents = index ? [...index.documents()] : await fileDocuments(dir, mtimeMs);
  return new Set(documents.filter((d) => d.codebase === codebase).map((d) => d.path));
}

/**
 * Replaces a codebase's files (`upserted`, and `removed` paths) in the index and its file. Called
 * by import-code after its write to the stores succeeded. Writes nothing when there is nothing to
 * change; updates the loaded index when this process holds it, else only the file (the next
 * search loads it).
 */
export async function updateCodeSearch(
  dir: string,
  codebase: string,
  upserted: readonly CodeFileDocument[],
  removed: readonly string[],
): Promise<void> {
  if (upserted.length === 0 && removed.length === 0) return;
  const { index, mtimeMs } = await held(dir);
  let documents: CodeFileDocument[];
  if (index) {
    index.remove(removed.map((p) => keyOf(codebase, p)));
    index.upsert(upserted);
    documents = [...index.documents()];
  } else {
    // As the index orders them: a replaced file moves to the end.
    const replaced = new Set([...removed.map((p) => keyOf(codebase, p)), ...upserted.map((d) => keyOf(d.codebase, d.path))]);
    documents = [
      ...(await fileDocuments(dir, mtimeMs)).filter((d) => !replaced.has(keyOf(d.codebase, d.path))),
      ...upserted.map((d) => ({ ...d, text: d.text.slice(0, MAX_TEXT_CHARS) })),
    ];
  }
  const path = join(dir, CODE_SEARCH_FILE);
  const tmp = join(dirname(path), `${CODE_SEARCH_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify({ version: 1, files: documents }));
  await rename(tmp, path);
  if (index) loaded.set(dir, { mtimeMs: (await stat(path)).mtimeMs, index });
  else loaded.delete(dir);
}
