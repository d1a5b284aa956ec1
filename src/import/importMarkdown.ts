/**
 * Markdown as memory: every heading section of a document becomes an entry (a decision record
 * becomes one), front matter sets entry fields, links between imported documents and
 * "Superseded by ADR-N" become edges. Each file is a source of its own (`import:<path>`), and an
 * import makes the store follow the files: a changed section is updated, a section or file that is
 * gone is removed, an unchanged one costs no embedding.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, posix, resolve, sep } from 'node:path';
import GithubSlugger from 'github-slugger';
import type { Root } from 'mdast';
import type { Embedder } from '../embed/embedder.js';
import { indexDocument, type IngestReport } from '../ingest/indexer.js';
import { sourceKeyOf } from '../ingest/sourceKey.js';
import type { SourcePart } from '../ingest/syncSource.js';
import { invalidInput, MemcoreError, throwIfAborted } from '../model/errors.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import { checkId } from '../model/ids.js';
import { validateMemoryDocument, type EntryRecord, type MemoryDocument, type RelationRecord } from '../model/memoryFile.js';
import { readManifests } from '../store/sourceManifests.js';
import type { Stores } from '../store/stores.js';
import { adrNumber, documentKind, type DocumentKind } from './conventions.js';
import { decisionRecordMeta, outOfEffect, type RecordRef } from './decisionRecord.js';
import { MarkdownParser } from './markdownParser.js';
import { MarkdownError, refuseDeepNesting, sectionsOfTree, type MarkdownSection } from './markdownSections.js';
import { documentSkipRule } from './skipRules.js';
import { leavingLinkReason, walkDocuments, type LeavingLink } from './walkFiles.js';

export interface ImportMarkdownOptions {
  /** Memory core of the entries; front matter `core` overrides it per file. Default `default`. */
  core?: string;
  /** Entry type of sections no convention or front matter types. Default `fact`. */
  type?: string;
  /** Type decision records and rules files by their names (docs/import.md). Default true. */
  conventions?: boolean;
  /** Link entries to the titles, code symbols and paths their text names. Default true. */
  autoLink?: boolean;
  /** Milliseconds one file may take to parse before it is skipped. Default 30,000. */
  parseTimeoutMs?: number;
  /** Globs (.gitignore syntax, from each folder imported) of files and folders to leave out. */
  exclude?: string[];
  /** Import changelogs (CHANGELOG.md, HISTORY.md, …), which a folder's import leaves out by default. */
  changelogs?: boolean;
  signal?: AbortSignal;
  /** Hears how far the import has come (files read, then texts embedded). */
  onProgress?: (message: string) => void;
}

export interface ImportReport extends IngestReport {
  files: {
    /** Documents found and read without error. */
    imported: number;
    /** Documents an earlier import read that are gone (deleted, or now ignored): their records removed. */
    removed: number;
  };
  /** Documents skipped because they could not be read; what they wrote before is kept. */
  failed: { file: string; error: string }[];
  /**
   * Documents a folder's walk left out, with the reason: templates, test fixtures, vendored or
   * generated folders, changelogs, `exclude` globs (docs/import.md). What they wrote before goes.
   */
  skipped: { file: string; reason: string }[];
}

/** Files larger than this are skipped: a document that size is data, not prose. */
export const MAX_DOCUMENT_BYTES = 4 * 2 ** 20;

const SOURCE_PREFIX = 'import:';

/** The end of validity of an undated record whose status says it is not in effect. */
const NEVER_IN_EFFECT = '1970-01-01T00:00:00.000Z';

/** One parsed document, before links between documents are resolved. */
interface ParsedDocument {
  path: string;
  /** Its source key without the prefix (path from the project, posix). */
  key: string;
  kind: DocumentKind;
  entries: (EntryRecord & { id: string; title: string })[];
  /** Section anchors to entry ids; '' is the document's first entry. */
  anchors: Map<string, string>;
  links: { from: string; url: string }[];
  supersession: { from: string; supersededBy: RecordRef[]; supersedes: RecordRef[] }[];
  adr: number | null;
  /** A decision record's status says it is not in effect (superseded, deprecated, rejected …). */
  outOfEffect: boolean;
  /** Titles to make unique: heading, then with parents, then with the document. */
  titleChoices: string[][];
}

const sectionId = (core: string, key: string, anchor: string) =>
  `md_${createHash('sha256').update(`${core}\u0000${key}\u0000${anchor}`).digest('hex').slice(0, 16)}`;

/** Entry fields a document's front matter may set, with the names docs tools use for them. */
function frontMatterFields(file: string, fm: Record<string, unknown>): Partial<EntryRecord> & { title?: string } {
  const out: Record<string, unknown> = {};
  const date = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
  const list = (v: unknown) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : v;
  const names: [string[], string, (v: unknown) => unknown][] = [
    [['title'], 'title', (v) => v],
    [['type', 'entry_type'], 'entry_type', (v) => v],
    [['confidence'], 'confidence', (v) => v],
    [['importance'], 'importance', (v) => v],
    [['tags', 'keywords'], 'tags', list],
    [['aliases'], 'aliases', list],
    [['sensitivity'], 'sensitivity', (v) => v],
    [['pinned', 'alwaysApply'], 'pinned', (v) => v],
    [['core', 'core_id'], 'core_id', (v) => v],
    [['created_at', 'date', 'created'], 'created_at', date],
    [['updated_at', 'updated', 'last_updated'], 'updated_at', date],
    [['valid_from'], 'valid_from', date],
    [['valid_to'], 'valid_to', date],
  ];
  for (const [keys, field, convert] of names) {
    const key = keys.find((k) => fm[k] !== undefined && fm[k] !== null);
    if (key !== undefined) out[field] = convert(fm[key]);
  }
  if (out.title !== undefined && typeof out.title !== 'string') throw new MarkdownError(`${file}: front matter title must be a string`);
  if (Array.isArray(out.tags)) out.tags = [...new Set(out.tags as unknown[])];
  return out as Partial<EntryRecord> & { title?: string };
}

function parseDocument(
  path: string,
  key: string,
  text: string,
  tree: Root,
  options: Required<Pick<ImportMarkdownOptions, 'core' | 'type' | 'conventions'>>,
): ParsedDocument {
  const { frontMatter, title: headingTitle, sections } = sectionsOfTree(path, text, tree);
  const fields = frontMatterFields(path, frontMatter);
  const kind = options.conventions ? documentKind(key) : 'doc';
  const core = typeof fields.core_id === 'string' ? fields.core_id : options.core;
  const entryType = fields.entry_type ?? (kind === 'adr' ? 'decision' : kind === 'rules' ? 'convention' : options.type);
  const { title: docTitle, ...shared } = fields;
  const name = posix.basename(key);
  const doc: ParsedDocument = {
    path,
    key,
    kind,
    entries: [],
    anchors: new Map(),
    links: [],
    supersession: [],
    adr: kind === 'adr' ? adrNumber(key) : null,
    outOfEffect: false,
    titleChoices: [],
  };
  const add = (anchor: string, title: string[], content: string, section: MarkdownSection | null, links: string[]) => {
    const id = sectionId(core, key, anchor);
    doc.entries.push({
      ...shared,
      id,
      core_id: core,
      entry_type: entryType,
      title: title[0]!,
      content,
      source: anchor === '' ? key : `${key}#${anchor}`,
    });
    doc.titleChoices.push(title);
    if (!doc.anchors.has('')) doc.anchors.set('', id);
    if (section) doc.anchors.set(section.anchor, id);
    for (const url of links) doc.links.push({ from: id, url });
  };

  if (kind === 'adr') {
    // A decision record is one decision: its Context, Decision and Consequences belong together.
    const meta = decisionRecordMeta(key, frontMatter, tree);
    // Its date is when the decision was taken: recency runs from it, not from the import.
    if (shared.created_at === undefined && meta.date !== null) shared.created_at = meta.date;
    // The status stays visible on the entry, as a tag (`status:superseded`).
    const tags = [...(shared.tags ?? []), ...meta.tags, ...(meta.status ? [`status:${meta.status.replace(/ /g, '-')}`] : [])];
    if (tags.length > 0) shared.tags = [...new Set(tags)];
    doc.outOfEffect = outOfEffect(meta.status);
    const title = docTitle ?? headingTitle ?? name;
    const content = sections
      .map((s) => (s.heading === null || s.heading === headingTitle ? s.content : `${'#'.repeat(s.depth)} ${s.heading}\n\n${s.content}`))
      .join('\n\n');
    if (content.trim() === '') return doc;
    add(
      '',
      [title, `${key} › ${title}`],
      content,
      null,
      sections.flatMap((s) => s.links),
    );
    for (const s of sections) if (s.anchor !== '') doc.anchors.set(s.anchor, doc.entries[0]!.id);
    if (meta.supersededBy.length + meta.supersedes.length > 0)
      doc.supersession.push({ from: doc.entries[0]!.id, supersededBy: meta.supersededBy, supersedes: meta.supersedes });
    return doc;
  }
  for (const s of sections) {
    if (s.heading === null) {
      const described =
        typeof frontMatter.description === 'string' && frontMatter.description.length <= 200 ? frontMatter.description : undefined;
      add('', [docTitle ?? described ?? headingTitle ?? key, key], s.content, s, s.links);
      continue;
    }
    const withParents = [...s.parents, s.heading].join(' › ');
    add(s.anchor, [s.heading, withParents, `${key} › ${withParents}`], s.content, s, s.links);
  }
  return doc;
}

/**
 * Gives each title the shortest form no other entry of its core has: the heading, then with its
 * parents, then with its path; titles still shared (the same heading twice under one parent, or
 * headings alike in their first 200 characters) are numbered in the documents' order: `… (2)`.
 */
function uniqueTitles(docs: ParsedDocument[]): void {
  const all = docs.flatMap((d) => d.entries.map((e, i) => ({ e, choices: d.titleChoices[i]! })));
  const keyOf = (e: ParsedDocument['entries'][number]) => `${e.core_id}\u0000${e.title}`;
  for (let level = 0; level < 3; level++) {
    const count = new Map<string, number>();
    for (const { e } of all) count.set(keyOf(e), (count.get(keyOf(e)) ?? 0) + 1);
    for (const item of all) {
      if (count.get(keyOf(item.e))! > 1) item.e.title = item.choices[Math.min(level + 1, item.choices.length - 1)]!;
    }
  }
  const taken = new Set(all.map(({ e }) => keyOf(e)));
  // The next number to try for each shared title (not from 2 each time: 100,000 alike headings).
  const next = new Map<string, number>();
  for (const { e } of all) {
    const key = keyOf(e);
    if (!next.has(key)) {
      next.set(key, 2);
      continue;
    }
    let n = next.get(key)!;
    while (taken.has(`${key} (${n})`)) n++;
    next.set(key, n + 1);
    e.title = `${e.title} (${n})`;
    taken.add(keyOf(e));
  }
}

/** The imported document and anchor a link from `doc` points at, when it points into the import. */
function linkedDocument(
  doc: ParsedDocument,
  url: string,
  byPath: Map<string, ParsedDocument>,
): { target: ParsedDocument; anchor: string } | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')) return null;
  const hash = url.indexOf('#');
  let file = hash < 0 ? url : url.slice(0, hash);
  let anchor = hash < 0 ? '' : url.slice(hash + 1);
  try {
    file = decodeURIComponent(file.split('?')[0]!);
    anchor = decodeURIComponent(anchor);
  } catch {
    return null;
  }
  const target = file === '' ? doc : byPath.get(resolve(dirname(doc.path), file));
  return target ? { target, anchor } : null;
}

/** The entry a link from `doc` points at, when it points into the import. */
function linkTarget(doc: ParsedDocument, url: string, byPath: Map<string, ParsedDocument>): string | null {
  const linked = linkedDocument(doc, url, byPath);
  if (!linked) return null;
  const { target, anchor } = linked;
  return target.anchors.get(anchor.toLowerCase()) ?? target.anchors.get(new GithubSlugger().slug(anchor)) ?? target.anchors.get('') ?? null;
}

function relationsOf(doc: ParsedDocument, byPath: Map<string, ParsedDocument>, adrs: Map<number, string>): RelationRecord[] {
  const out = new Map<string, RelationRecord>();
  for (const { from, url } of doc.links) {
    const to = linkTarget(doc, url, byPath);
    if (to && to !== from) out.set(`RELATED\u0000${from}\u0000${to}`, { type: 'RELATED', from, to, kind: 'link' });
  }
  // A record is named by its number (`ADR-12`, `0012-…`) or by a link to its file.
  const record = (ref: RecordRef) => {
    if ('number' in ref) return adrs.get(ref.number);
    const linked = linkedDocument(doc, ref.url, byPath)?.target;
    return linked?.kind === 'adr' ? linked.entries[0]?.id : undefined;
  };
  for (const s of doc.supersession) {
    for (const id of s.supersededBy.map(record))
      if (id && id !== s.from) out.set(`SUPERSEDES\u0000${id}\u0000${s.from}`, { type: 'SUPERSEDES', from: id, to: s.from });
    for (const id of s.supersedes.map(record))
      if (id && id !== s.from) out.set(`SUPERSEDES\u0000${s.from}\u0000${id}`, { type: 'SUPERSEDES', from: s.from, to: id });
  }
  return [...out.values()];
}

async function readDocument(path: string): Promise<string> {
  const size = (await stat(path)).size;
  if (size > MAX_DOCUMENT_BYTES)
    throw new MarkdownError(
      `${path}: ${(size / 2 ** 20).toFixed(1)} MiB; documents are read up to ${MAX_DOCUMENT_BYTES / 2 ** 20} MiB (split it, or ingest it as a memory file)`,
    );
  return textOf(path, await readFile(path));
}

/** The file's text, or a MarkdownError when it is not text: NUL bytes, or bytes that are not UTF-8. */
function textOf(path: string, bytes: Buffer): string {
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw new MarkdownError(`${path}: not a text file (a NUL byte at offset ${nul}); skipped`);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new MarkdownError(`${path}: not UTF-8 text (convert it to UTF-8 to import it); skipped`);
  }
}

/** Imports the documents under `paths` into the stores (the engine serialises the call). */
export async function importMarkdown(
  stores: Stores,
  embedder: Embedder,
  paths: string[],
  options: ImportMarkdownOptions = {},
): Promise<ImportReport> {
  const settings = { core: options.core ?? 'default', type: options.type ?? 'fact', conventions: options.conventions ?? true };
  const skipped: ImportReport['skipped'] = [];
  const rule = documentSkipRule({
    ...(options.exclude ? { exclude: options.exclude } : {}),
    ...(options.changelogs ? { changelogs: true } : {}),
  });
  const links: LeavingLink[] = [];
  const files = await walkDocuments(paths, [stores.dir], { leaving: { rule, left: skipped }, links });
  const parser = new MarkdownParser(options.parseTimeoutMs);
  const docs: ParsedDocument[] = [];
  // A link out of the repository is left out like any other file a person would not import.
  skipped.push(...links.map((l) => ({ file: l.path, reason: leavingLinkReason(l) })));
  const failed: ImportReport['failed'] = [];
  try {
    for (const [i, path] of files.entries()) {
      throwIfAborted(options.signal);
      const key = sourceKeyOf(path, stores.dir);
      try {
        const text = await readDocument(path);
        refuseDeepNesting(path, text);
        const doc = parseDocument(path, key, text, await parser.parse(path, text), settings);
        // Checked file by file, so that one bad front matter skips its file, not the import.
        validateMemoryDocument(path, { entries: doc.entries }, (_, j) => `section "${doc.entries[j]?.title ?? j}"`);
        docs.push(doc);
      } catch (e) {
        if (!(e instanceof MarkdownError || e instanceof MemcoreError || (e as NodeJS.ErrnoException).code)) throw e;
        failed.push({ file: path, error: (e as Error).message });
      }
      if ((i + 1) % 50 === 0 || i + 1 === files.length) options.onProgress?.(`read ${i + 1}/${files.length} documents`);
    }
  } finally {
    await parser.close();
  }

  uniqueTitles(docs);
  const byPath = new Map(docs.map((d) => [d.path, d]));
  const adrs = new Map(docs.filter((d) => d.adr !== null && d.entries.length > 0).map((d) => [d.adr!, d.entries[0]!.id]));
  const records = docs.map((d) => ({ doc: d, relations: relationsOf(d, byPath, adrs) }));
  // Two records that each say they replace the other: neither claim is kept.
  const supersedes = new Set(
    records.flatMap((r) => r.relations.filter((x) => x.type === 'SUPERSEDES').map((x) => `${x.from}\u0000${x.to}`)),
  );
  for (const r of records) r.relations = r.relations.filter((x) => x.type !== 'SUPERSEDES' || !supersedes.has(`${x.to}\u0000${x.from}`));

  // A record whose status says it no longer holds leaves what is in effect: through its
  // successor's SUPERSEDES edge when the import found one (asOf then works from the successor's
  // date), else by ending its validity at its own date (1970-01-01 without one: never in effect).
  const superseded = new Set(records.flatMap((r) => r.relations.filter((x) => x.type === 'SUPERSEDES').map((x) => x.to)));
  for (const d of docs) {
    const e = d.entries[0];
    if (!d.outOfEffect || !e || superseded.has(e.id) || e.valid_to !== undefined) continue;
    const end = e.created_at === undefined ? NEVER_IN_EFFECT : String(e.created_at);
    if (e.valid_from === undefined || Date.parse(String(e.valid_from)) < Date.parse(end)) e.valid_to = end;
  }

  // Both records of a supersession say so: the edge is written once, and each file's manifest claims it.
  const relations = [...new Map(records.flatMap((r) => r.relations).map((x) => [`${x.type}\u0000${x.from}\u0000${x.to}`, x])).values()];
  const { document } = validateMemoryDocument('import', { entries: records.flatMap((r) => r.doc.entries), relations });
  const entryById = new Map(document.entries.map((e) => [e.id, e]));
  const parts: SourcePart[] = records.map((r) => ({
    source: SOURCE_PREFIX + r.doc.key,
    doc: {
      entries: r.doc.entries.map((e) => entryById.get(e.id)!),
      codeLocations: [],
      goldenPaths: [],
      relations: document.relations.filter((x) => r.relations.some((y) => y.type === x.type && y.from === x.from && y.to === x.to)),
    },
  }));
  const removed = await goneDocuments(
    stores,
    paths,
    new Set([...docs.map((d) => d.key), ...failed.map((f) => sourceKeyOf(f.file, stores.dir))]),
  );
  for (const source of removed) parts.push({ source, doc: { entries: [], codeLocations: [], goldenPaths: [], relations: [] } });

  const label = SOURCE_PREFIX + paths.map((p) => sourceKeyOf(p, stores.dir)).join(',');
  const report = await indexDocument(stores, embedder, label, document as MemoryDocument, [], {
    parts,
    recordSource: true,
    sync: true,
    autoLink: options.autoLink ?? true,
    inputName: 'import',
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  return { ...report, files: { imported: docs.length, removed: removed.length }, failed, skipped };
}

/**
 * Sources of earlier imports under the folders of `paths` whose document was not found this time
 * (deleted, renamed, or now ignored). Documents that failed to read are not among them.
 */
async function goneDocuments(stores: Stores, paths: string[], present: Set<string>): Promise<string[]> {
  const folders: string[] = [];
  for (const p of paths) if ((await stat(p)).isDirectory()) folders.push(resolve(p));
  if (folders.length === 0) return [];
  const project = dirname(resolve(stores.dir));
  const under = (key: string) => folders.some((f) => resolve(project, key).startsWith(f + sep));
  return (await readManifests(stores.dir))
    .map((m) => m.source)
    .filter((s) => s.startsWith(SOURCE_PREFIX) && under(s.slice(SOURCE_PREFIX.length)) && !present.has(s.slice(SOURCE_PREFIX.length)));
}

export const IMPORT_MARKDOWN_OPTIONS = optionNames<ImportMarkdownOptions>()([
  'core',
  'type',
  'conventions',
  'autoLink',
  'parseTimeoutMs',
  'exclude',
  'changelogs',
  'signal',
  'onProgress',
]);

/** importMarkdown's arguments checked before anything is read. */
export function checkImportMarkdown(paths: unknown, options: ImportMarkdownOptions): void {
  if (!Array.isArray(paths) || paths.length === 0 || paths.some((p) => typeof p !== 'string' || p === ''))
    throw invalidInput('importMarkdown needs a list of file or folder paths');
  checkOptionNames('importMarkdown', options, IMPORT_MARKDOWN_OPTIONS);
  if (options.core !== undefined) checkId('importMarkdown: core', options.core);
  if (options.type !== undefined && (typeof options.type !== 'string' || !/^[a-z][a-z0-9_-]{0,39}$/.test(options.type))) {
    throw invalidInput(
      `importMarkdown: type must be lowercase letters, digits, _ or - (an entry type like fact or decision), got ${JSON.stringify(options.type)}`,
    );
  }
  documentSkipRule(options);
  for (const flag of ['conventions', 'autoLink', 'changelogs'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean')
      throw invalidInput(`importMarkdown: ${flag} must be true or false`);
  }
  const timeout = options.parseTimeoutMs;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 100))
    throw invalidInput('importMarkdown: parseTimeoutMs must be an integer of at least 100');
}
