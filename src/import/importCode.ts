/**
 * A codebase's symbols as code locations: every function, class, method, interface, type, enum,
 * namespace and exported variable of its files in the languages src/code/languages/ reads (TS/JS,
 * Python, Go, Rust, Java, C#, C, C++, Ruby, PHP, Bash), with lines, kind and a fingerprint of its
 * text, and one location per file (code in other languages gets that one only). A file's imports
 * are IMPORTS links between file locations. Each file read is also handed to the code search index
 * (codeSearchHook.ts), which findCode and the code channel rank. Ids name the symbol, not its lines
 * (`codebase:path#Class.method`), so a moved symbol keeps its id and its links and gets new lines.
 * Each file is a source of its own (`code:<codebase>:<path>`) whose manifest keeps the file's hash:
 * an unchanged file is not read again, a changed one is re-read, a gone one is removed. A file whose
 * size and mtime match what the last import recorded (fileStamps.ts) is not even read to be hashed.
 * Stored entries that name an imported symbol or path are linked to it.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { findLinks } from '../ingest/autoLink.js';
import { indexDocument, type IngestReport } from '../ingest/indexer.js';
import type { SourcePart } from '../ingest/syncSource.js';
import { invalidInput, requireFolder, throwIfAborted } from '../model/errors.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import { checkId, idProblem } from '../model/ids.js';
import { deriveCodeLocationId, validateMemoryDocument, type CodeLocationRecord, type RelationRecord } from '../model/memoryFile.js';
import type { CodeLocation } from '../model/types.js';
import type { Stores } from '../store/stores.js';
import { revisionOf } from '../code/git.js';
import {
  extractCode,
  fileSymbol,
  hasExtractor,
  languageOf,
  NestingError,
  resolveImports,
  type Extraction,
  type ImportRef,
  type RepoFacts,
} from '../code/languages/index.js';
import { CodeSearchHook } from './codeSearchHook.js';
import { FileStamps } from './fileStamps.js';
import { leavingLinkReason, walkFiles, type LeavingLink } from './walkFiles.js';

export interface ImportCodeOptions {
  /** The codebase the locations belong to: the first part of their ids, and what `--codebase` filters on. */
  codebase: string;
  /** Link stored entries that name an imported symbol or file path to it. Default true. */
  autoLink?: boolean;
  signal?: AbortSignal;
  /** Hears how far the import has come. */
  onProgress?: (message: string) => void;
}

export interface ImportCodeReport extends IngestReport {
  files: {
    /** Files read because they are new or changed. */
    read: number;
    /** Files whose hash matched the last import: not read. */
    unchanged: number;
    /** Files an earlier import read that are gone: their locations removed (kept where entries still reference them). */
    removed: number;
  };
  /** Files read this time, by language (`python`, `go`, …). */
  languages: Record<string, number>;
  /** Files not read, with why (too large: generated or bundled code; not UTF-8; nested too deep; a name no id can hold). */
  skipped: { file: string; reason: string }[];
  /** Files read in part: the parser met text it could not read, and kept what parsed around it. */
  partial: { file: string; reason: string }[];
  /** Files of languages memcore reads no symbols of (or whose grammar is not installed), by language: one file-level location each. */
  fileOnly: Record<string, number>;
  /** IMPORTS links written between the files read and the files they import. */
  imports: number;
}

/** Source files larger than this are generated or bundled, not written: skipped. */
export const MAX_CODE_FILE_BYTES = 2 * 2 ** 20;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Imports the code under `repo` (the engine serialises the call). */
export async function importCode(stores: Stores, embedder: Embedder, repo: string, options: ImportCodeOptions): Promise<ImportCodeReport> {
  const root = await requireFolder('import-code', repo);
  const prefix = `code:${options.codebase}:`;
  const links: LeavingLink[] = [];
  const walked = await walkFiles([root], (name) => languageOf(name) !== null || REPO_FACT_FILES.has(name), [stores.dir], { links });
  const pathOf = (file: string) => relative(root, file).split(sep).join('/');
  const files = walked.filter((f) => languageOf(f) !== null);
  const facts = await repoFacts(root, walked.filter((f) => !languageOf(f)).map(pathOf));
  const stamps = await FileStamps.open(stores.dir, options.codebase);
  const known = await stamps.known();

  const search = CodeSearchHook.open(stores.dir, options.codebase);
  const stampsIndexed = stamps.indexUnchanged(await search.state());
  const parts: SourcePart[] = [];
  const skipped: ImportCodeReport['skipped'] = links.map((l) => ({ file: pathOf(l.path), reason: leavingLinkReason(l) }));
  const partial: ImportCodeReport['partial'] = [];
  const fileOnly: Record<string, number> = {};
  const languages: Record<string, number> = {};
  const present = new Set<string>();
  const importsOf = new Map<string, { part: SourcePart; refs: ImportRef[] }>();
  /** Files read anew: their records are made once git said which differ from HEAD. */
  const read: { file: string; path: string; hash: string; language: string; symbols: Extraction['symbols']; imports: ImportRef[] }[] = [];
  const declaring = new Map<string, string[]>();
  let unchanged = 0;
  for (const [i, file] of files.entries()) {
    throwIfAborted(options.signal);
    const path = pathOf(file);
    // Sync: a re-run stats every file, and 5,000 async stats cost ~0.25 s of CPU in promises and
    // thread hops where sync ones cost ~20 ms (the disk answers from its cache either way).
    const { size, mtimeMs } = statSync(file);
    // A file not read this time keeps what it gave before.
    const keep = () => {
      if (known.has(path)) present.add(path);
      else present.delete(path);
    };
    if (size > MAX_CODE_FILE_BYTES) {
      skipped.push({
        file: path,
        reason: `${(size / 2 ** 20).toFixed(1)} MiB; files over ${MAX_CODE_FILE_BYTES / 2 ** 20} MiB are taken for generated code`,
      });
      keep();
      continue;
    }
    const fileId = deriveCodeLocationId({ codebase_id: options.codebase, file_path: path });
    const badName = idProblem(fileId);
    if (badName) {
      skipped.push({ file: JSON.stringify(path), reason: `its name cannot be part of a code location id: the id ${badName}` });
      continue;
    }
    present.add(path);
    // Size and mtime as the last import recorded them: the file is not read (fileStamps.ts says when that holds).
    const seen = stamps.match(path, size, mtimeMs, known.get(path)?.hash);
    if (seen && (stampsIndexed || !(await search.lacks(path)))) {
      for (const ns of seen.declares ?? []) declaring.set(ns, [...(declaring.get(ns) ?? []), path]);
      stamps.record(path, size, mtimeMs, seen.hash, seen.declares ?? [], known.get(path)?.manifest);
      unchanged++;
      continue;
    }
    const bytes = await readFile(file);
    const hash = sha256(bytes);
    const same = known.get(path)?.hash === hash;
    // Asked of the index only when it matters (a changed file is indexed anew either way), and
    // when the stamps cannot vouch for it: asking reads the whole index.
    const indexed = same && (stamps.vouchesIndexed(path, hash) || !(await search.lacks(path)));
    // An unchanged file is decoded only when other files' imports need what it declares (Java, C#),
    // or the code search index lacks it (a folder imported before the index existed).
    if (same && indexed && !DECLARING.has(languageOf(path)!)) {
      stamps.record(path, size, mtimeMs, hash, [], known.get(path)?.manifest);
      unchanged++;
      continue;
    }
    let text: string;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      skipped.push({ file: path, reason: 'not valid UTF-8 (save it as UTF-8 to import it)' });
      keep();
      continue;
    }
    const declares = declaresOf(path, text);
    for (const ns of declares) declaring.set(ns, [...(declaring.get(ns) ?? []), path]);
    const language = languageOf(path)!;
    if (same && indexed) {
      stamps.record(path, size, mtimeMs, hash, declares, known.get(path)?.manifest);
      unchanged++;
      continue;
    }
    let extraction: Extraction | null;
    try {
      extraction = hasExtractor(path) ? await extractCode(path, text, facts) : null;
    } catch (error) {
      if (!(error instanceof NestingError)) throw error;
      skipped.push({ file: path, reason: error.message });
      keep();
      continue;
    }
    const symbols = extraction?.symbols ?? [fileSymbol(text)];
    search.add(path, language, text, symbols);
    // Its manifest is rewritten unless the file is unchanged (read for the code search index only).
    stamps.record(path, size, mtimeMs, hash, declares, same ? known.get(path)?.manifest : undefined);
    if (same) {
      unchanged++;
      continue;
    }
    if (!extraction) fileOnly[language] = (fileOnly[language] ?? 0) + 1;
    else if (extraction.syntaxErrors)
      partial.push({ file: path, reason: 'the parser met text it could not read; kept the symbols around it' });
    languages[language] = (languages[language] ?? 0) + 1;
    read.push({ file, path, hash, language, symbols, imports: extraction?.imports ?? [] });
    if ((i + 1) % 200 === 0 || i + 1 === files.length) options.onProgress?.(`read ${i + 1}/${files.length} files`);
  }
  // Fingerprints of files unchanged since HEAD were taken at HEAD: check can then say what changed
  // since. git is asked once the files are read, and of those files only when they are few (a run
  // with nothing changed asks nothing; one with one file changed does not make git stat them all).
  const stamp = read.length === 0 ? null : await revisionOf(root, read.length <= GIT_PATHS_MAX ? read.map((r) => r.path) : undefined);
  for (const { file, path, hash, language, symbols, imports } of read) {
    const revision = stamp && !stamp.changed.has(path) ? { revision: stamp.revision } : {};
    const codeLocations = symbols.flatMap((s): CodeLocationRecord[] => {
      const record = { codebase_id: options.codebase, file_path: path, ...(s.symbol ? { symbol: s.symbol } : {}) };
      const id = deriveCodeLocationId(record);
      if (idProblem(id)) return []; // a symbol whose name no id can carry (too long): the file keeps the rest
      return [
        {
          id,
          ...record,
          start_line: s.startLine,
          end_line: s.endLine,
          language,
          kind: s.kind,
          fingerprint: s.fingerprint,
          ...revision,
        },
      ];
    });
    const part: SourcePart = { source: prefix + path, hash, doc: validateMemoryDocument(file, { code_locations: codeLocations }).document };
    parts.push(part);
    if (imports.length > 0) importsOf.set(path, { part, refs: imports });
  }
  const gone = [...known.keys()].filter((path) => !present.has(path));
  for (const path of gone) parts.push({ source: prefix + path, doc: { entries: [], codeLocations: [], goldenPaths: [], relations: [] } });

  // A file's imports link its file-level location to theirs; the link belongs to the importing file.
  const imports: RelationRecord[] = [];
  const lookup = repoLookup([...present], declaring);
  for (const [path, { refs }] of importsOf) {
    for (const target of resolveImports(path, refs, lookup)) {
      imports.push({
        type: 'IMPORTS',
        from: deriveCodeLocationId({ codebase_id: options.codebase, file_path: path }),
        to: deriveCodeLocationId({ codebase_id: options.codebase, file_path: target }),
      });
    }
  }

  const codeLocations = parts.flatMap((p) => p.doc.codeLocations);
  const { document, external } = validateMemoryDocument('import-code', {
    code_locations: codeLocations.map((c) => ({
      id: c.id,
      codebase_id: c.codebaseId,
      file_path: c.filePath,
      ...(c.symbol ? { symbol: c.symbol } : {}),
      start_line: c.startLine!,
      end_line: c.endLine!,
      language: c.language!,
      kind: c.kind!,
      fingerprint: c.fingerprint!,
      ...(c.revision ? { revision: c.revision } : {}),
    })),
    relations: [...(options.autoLink === false ? [] : await mentionsOf(stores, codeLocations)), ...imports],
  });
  // A mention belongs to the file of the code it points at, an import to the importing file:
  // re-reading the file finds it again, or drops it.
  const partOf = new Map(parts.flatMap((p, i) => p.doc.codeLocations.map((c) => [c.id, i] as const)));
  for (const r of document.relations) parts[partOf.get(r.type === 'IMPORTS' ? r.from : r.to)!]!.doc.relations.push(r);
  // Before the stores' write: its generation bump then invalidates bundles cached with the old code.
  await search.commit(gone);
  const report = await indexDocument(stores, embedder, prefix.slice(0, -1), document, external, {
    parts,
    recordSource: true,
    sync: true,
    inputName: 'import-code',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  await stamps.commit(await search.state());
  return {
    ...report,
    files: { read: parts.length - gone.length, unchanged, removed: gone.length },
    languages,
    skipped,
    partial,
    fileOnly,
    imports: imports.length,
  };
}

/** Files read past this many, git's status is asked of the whole repository rather than of each. */
const GIT_PATHS_MAX = 100;

/** Files that tell how imports resolve: Go's module path, PHP's PSR-4 map. */
const REPO_FACT_FILES = new Set(['go.mod', 'composer.json']);

async function repoFacts(root: string, paths: string[]): Promise<RepoFacts> {
  const facts: RepoFacts = { goModules: [], psr4: [] };
  for (const path of paths) {
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    const text = await readFile(join(root, path), 'utf8').catch(() => '');
    if (path.endsWith('go.mod')) {
      const module = /^module\s+(\S+)/m.exec(text)?.[1];
      if (module) facts.goModules.push({ dir, module: module.replace(/^"|"$/g, '') });
    } else {
      try {
        const psr4 = (JSON.parse(text) as { autoload?: { 'psr-4'?: Record<string, string | string[]> } }).autoload?.['psr-4'] ?? {};
        for (const [prefix, dirs] of Object.entries(psr4)) {
          const list = (Array.isArray(dirs) ? dirs : [dirs]).filter((d): d is string => typeof d === 'string');
          facts.psr4.push({ prefix, dirs: list.map((d) => [dir, d.replace(/\/$/, '')].filter((p) => p !== '').join('/')) });
        }
      } catch {
        // a composer.json that does not parse resolves nothing
      }
    }
  }
  return facts;
}

/** Languages whose imports name a namespace or package that files declare. */
const DECLARING = new Set(['java', 'csharp', 'kotlin']);

/** Namespaces and packages a Java, Kotlin or C# file declares (a wildcard import or a `using` names them). */
function declaresOf(path: string, text: string): string[] {
  if (!DECLARING.has(languageOf(path)!)) return [];
  return [...text.matchAll(/^\s*(?:package|namespace)\s+([\w.]+)\s*[;{]?/gm)].map((m) => m[1]!);
}

/** Paths by their last segment, for imports that name a path's end (a package under `src/`). */
function repoLookup(paths: string[], declaring: Map<string, string[]>) {
  const files = new Set(paths);
  const byName = new Map<string, string[]>();
  for (const p of paths) {
    const name = p.slice(p.lastIndexOf('/') + 1);
    byName.set(name, [...(byName.get(name) ?? []), p]);
  }
  return {
    files,
    bySuffix: (suffix: string) =>
      (byName.get(suffix.slice(suffix.lastIndexOf('/') + 1)) ?? [])
        .filter((p) => p === suffix || p.endsWith(`/${suffix}`))
        .sort((a, b) => a.length - b.length)[0] ?? null,
    declaring: (namespace: string) => declaring.get(namespace) ?? [],
  };
}

/** REFERENCES_CODE links from stored entries to the new locations they name. */
async function mentionsOf(stores: Stores, code: CodeLocation[]): Promise<RelationRecord[]> {
  if (code.length === 0) return [];
  const entries = (await stores.table.read({})).map((s) => ({
    id: s.entry.id,
    title: s.entry.title,
    aliases: s.entry.aliases,
    content: s.entry.content,
  }));
  return findLinks(entries, code, new Set(entries.map((e) => e.id)))
    .filter((r) => r.type === 'REFERENCES_CODE')
    .map((r) => ({ type: 'REFERENCES_CODE', from: r.from, to: r.to, relevance: r.relevance ?? 0.5 }));
}

export const IMPORT_CODE_OPTIONS = optionNames<ImportCodeOptions>()(['codebase', 'autoLink', 'signal', 'onProgress']);

/** importCode's arguments checked before anything is read. */
export function checkImportCode(repo: unknown, options: ImportCodeOptions): void {
  if (typeof repo !== 'string' || repo === '') throw invalidInput('importCode needs the path of a folder of code');
  checkOptionNames('importCode', options, IMPORT_CODE_OPTIONS);
  checkId('importCode: codebase', options?.codebase);
  if (options.autoLink !== undefined && typeof options.autoLink !== 'boolean')
    throw invalidInput('importCode: autoLink must be true or false');
}
