/**
 * A codebase's symbols as code locations: every function, class, method, interface, type, enum,
 * namespace and exported variable of its TypeScript and JavaScript files, with lines, kind and a
 * fingerprint of its text, and one location per file (per source file of other languages too,
 * sourceFiles.ts). Each file read is also handed to the code search index (codeSearchHook.ts). Ids name the symbol, not its lines
 * (`codebase:path#Class.method`), so a moved symbol keeps its id and its links and gets new lines.
 * Each file is a source of its own (`code:<codebase>:<path>`) whose manifest keeps the file's hash:
 * an unchanged file is not read again, a changed one is re-read, a gone one is removed. Stored
 * entries that name an imported symbol or path are linked to it.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import type { Embedder } from '../embed/embedder.js';
import { findLinks } from '../ingest/autoLink.js';
import { indexDocument, type IngestReport } from '../ingest/indexer.js';
import type { SourcePart } from '../ingest/syncSource.js';
import { invalidInput, requireFolder, throwIfAborted } from '../model/errors.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import { checkId } from '../model/ids.js';
import { deriveCodeLocationId, validateMemoryDocument, type CodeLocationRecord, type RelationRecord } from '../model/memoryFile.js';
import type { CodeLocation } from '../model/types.js';
import { readManifests } from '../store/sourceManifests.js';
import type { Stores } from '../store/stores.js';
import { revisionOf } from '../code/git.js';
import { CodeSearchHook } from './codeSearchHook.js';
import { sourceLanguage, sourceSymbols } from './sourceFiles.js';
import { walkFiles } from './walkFiles.js';

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
  /** Files not read, with why (too large: generated or bundled code). */
  skipped: { file: string; reason: string }[];
}

/** Source files larger than this are generated or bundled, not written: skipped. */
export const MAX_CODE_FILE_BYTES = 2 * 2 ** 20;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Imports the code under `repo` (the engine serialises the call). */
export async function importCode(stores: Stores, embedder: Embedder, repo: string, options: ImportCodeOptions): Promise<ImportCodeReport> {
  const root = await requireFolder('import-code', repo);
  const prefix = `code:${options.codebase}:`;
  const files = await walkFiles([root], (name) => sourceLanguage(name) !== null, [stores.dir]);
  const search = await CodeSearchHook.open(stores.dir, options.codebase);
  // Fingerprints of files unchanged since HEAD were taken at HEAD: check can then say what changed since.
  const stamp = await revisionOf(root);
  const known = new Map(
    (await readManifests(stores.dir)).filter((m) => m.source.startsWith(prefix)).map((m) => [m.source.slice(prefix.length), m]),
  );

  const parts: SourcePart[] = [];
  const skipped: ImportCodeReport['skipped'] = [];
  const present = new Set<string>();
  let unchanged = 0;
  for (const [i, file] of files.entries()) {
    throwIfAborted(options.signal);
    const path = relative(root, file).split(sep).join('/');
    const size = (await stat(file)).size;
    if (size > MAX_CODE_FILE_BYTES) {
      skipped.push({
        file: path,
        reason: `${(size / 2 ** 20).toFixed(1)} MiB; files over ${MAX_CODE_FILE_BYTES / 2 ** 20} MiB are taken for generated code`,
      });
      if (known.has(path)) present.add(path); // what it gave before stays
      continue;
    }
    present.add(path);
    const bytes = await readFile(file);
    const hash = sha256(bytes);
    const language = sourceLanguage(path) ?? 'typescript';
    const text = bytes.toString('utf8');
    if (known.get(path)?.hash === hash) {
      unchanged++;
      if (search.lacks(path)) search.add(path, language, text, sourceSymbols(path, text));
      continue;
    }
    const symbols = sourceSymbols(path, text);
    search.add(path, language, text, symbols);
    const codeLocations = symbols.map((s): CodeLocationRecord => {
      const record = { codebase_id: options.codebase, file_path: path, ...(s.symbol ? { symbol: s.symbol } : {}) };
      const revision = stamp && !stamp.changed.has(path) ? { revision: stamp.revision } : {};
      return {
        id: deriveCodeLocationId(record),
        ...record,
        start_line: s.startLine,
        end_line: s.endLine,
        language,
        kind: s.kind,
        fingerprint: s.fingerprint,
        ...revision,
      };
    });
    parts.push({ source: prefix + path, hash, doc: validateMemoryDocument(file, { code_locations: codeLocations }).document });
    if ((i + 1) % 200 === 0 || i + 1 === files.length) options.onProgress?.(`read ${i + 1}/${files.length} files`);
  }
  const gone = [...known.keys()].filter((path) => !present.has(path));
  for (const path of gone) parts.push({ source: prefix + path, doc: { entries: [], codeLocations: [], goldenPaths: [], relations: [] } });

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
    relations: options.autoLink === false ? [] : await mentionsOf(stores, codeLocations),
  });
  // A link belongs to the file of the code it points at: re-reading the file finds it again, or drops it.
  const partOf = new Map(parts.flatMap((p, i) => p.doc.codeLocations.map((c) => [c.id, i] as const)));
  for (const r of document.relations) parts[partOf.get(r.to)!]!.doc.relations.push(r);
  // Before the stores' write: its generation bump then invalidates bundles cached with the old code.
  await search.commit(gone);
  const report = await indexDocument(stores, embedder, prefix.slice(0, -1), document, external, {
    parts,
    recordSource: true,
    sync: true,
    inputName: 'import-code',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { ...report, files: { read: parts.length - gone.length, unchanged, removed: gone.length }, skipped };
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
