/**
 * One memory entry (or golden path) as a markdown file with YAML front matter, the unit a team
 * reviews and merges: `memory/<core>/<id>.md`, `memory/<core>/paths/<id>.md`. Parsed into a memory
 * document (the format `ingest` reads), so that every rule of a memory file holds for it too;
 * problems name the file and the line. See docs/memory-file.md, "Memory as files".
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { isMap, isScalar, parseDocument, stringify } from 'yaml';
import { MemoryFileError } from '../model/errors.js';
import { idProblem } from '../model/ids.js';
import {
  deriveCodeLocationId,
  schemaProblem,
  validateMemoryDocument,
  type CodeLocationRecord,
  type EntryRecord,
  type MemoryDocument,
  type MemoryDocumentRecord,
  type RelationRecord,
} from '../model/memoryFile.js';
import type { CodeLocation, GoldenPath, MemoryEntry, Relation } from '../model/types.js';
import { fileNameOf } from './teamPaths.js';

export { fileNameOf };

/** Version of the file format, written as `memcore: 1` in every file. */
export const ENTRY_FILE_VERSION = 1;

/** A file of the folder that could not be used, and why: what doctor, check and bundle notes say. */
export interface FileProblem {
  /** Path from the repository root, with forward slashes. */
  file: string;
  /** 1-based line of the problem, when known. */
  line: number | null;
  message: string;
}

export class EntryFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly problem: string,
  ) {
    super(`${file}${line !== null ? `:${line}` : ''}: ${problem}`);
    this.name = 'EntryFileError';
  }
}

const schemaUrl = new URL('../../schema/memory-entry-file.schema.json', import.meta.url);
let validators: { entry: ValidateFunction; path: ValidateFunction } | undefined;
function validatorsOf(): { entry: ValidateFunction; path: ValidateFunction } {
  if (!validators) {
    const ajv = new Ajv({ allErrors: false, strict: false });
    const schema = JSON.parse(readFileSync(schemaUrl, 'utf8')) as { $id: string };
    ajv.addSchema(schema);
    validators = {
      entry: ajv.getSchema(`${schema.$id}#/definitions/entry`)!,
      path: ajv.getSchema(`${schema.$id}#/definitions/goldenPath`)!,
    };
  }
  return validators;
}

const CONFLICT_MARKER = /^(<{7}|={7}|>{7}|\|{7})(?: |$)/;

/** The front matter text and the body of a file, with the line the body starts on. */
function split(file: string, text: string): { yaml: string; body: string } {
  const lines = text.split('\n');
  const conflict = lines.findIndex((l) => CONFLICT_MARKER.test(l.replace(/\r$/, '')));
  if (conflict >= 0) throw new EntryFileError(file, conflict + 1, 'merge conflict markers: resolve the conflict, then commit the file');
  if (lines[0]?.replace(/\r$/, '').replace(/^\uFEFF/, '') !== '---')
    throw new EntryFileError(file, 1, 'must start with a front matter block (a line "---")');
  const end = lines.findIndex((l, i) => i > 0 && l.replace(/\r$/, '') === '---');
  if (end < 0) throw new EntryFileError(file, 1, 'the front matter block is not closed (a second line "---")');
  const body = lines
    .slice(end + 1)
    .join('\n')
    .replace(/^\r?\n/, '')
    // The file's last line break is not the content's: a content ending in one is written with two.
    .replace(/\r?\n$/, '');
  return { yaml: lines.slice(1, end).join('\n'), body };
}

/** The 1-based line of a top-level key of the front matter (the block starts on line 2). */
function lineOfKey(yaml: string, key: string | null): number | null {
  if (key === null) return 2;
  const top = key.split('.')[0]!;
  const i = yaml.split('\n').findIndex((l) => l.startsWith(`${top}:`) || l.startsWith(`"${top}":`));
  return i < 0 ? 2 : i + 2;
}

/** A schema error as the front matter key it is about and a message naming the field. */
function frontMatterProblem(err: ErrorObject): { key: string | null; message: string } {
  const { field, problem } = schemaProblem(err, err.instancePath.split('/').slice(1).join('.') || null);
  return { key: field, message: `field "${field ?? '(front matter)'}" ${problem}` };
}

interface CodeRef {
  path: string;
  symbol?: string;
  lines?: number | string;
  codebase?: string;
  language?: string;
  relevance?: number;
  description?: string;
  key_concepts?: string[];
}
interface LinkRef {
  type: 'RELATED' | 'DEPENDS_ON' | 'SUPERSEDES' | 'IMPLEMENTS';
  to: string;
  weight?: number;
}

function codeRecord(c: CodeRef): CodeLocationRecord {
  const [start, end] = c.lines === undefined ? [] : String(c.lines).split('-').map(Number);
  return {
    codebase_id: c.codebase ?? 'default',
    file_path: c.path,
    ...(c.symbol !== undefined ? { symbol: c.symbol } : {}),
    ...(start !== undefined ? { start_line: start, end_line: end ?? start } : {}),
    ...(c.language !== undefined ? { language: c.language } : {}),
  };
}

/** What one file holds: the memory document it stands for, and the ids it defines and points at. */
export interface ParsedEntryFile {
  kind: 'entry' | 'path';
  id: string;
  /** Validated, ready to index; its relations start at this file's entry or golden path. */
  document: MemoryDocument;
  /** Ids of entries and golden paths this file's links point at (checked against the folder and the store). */
  targets: { id: string; kind: 'entry' | 'path'; line: number | null }[];
  sensitivity: string;
}

/**
 * Parses one file: `kind` and `core` come from where it lies (`<core>/<id>.md`, `<core>/paths/<id>.md`),
 * `name` is its file name without `.md`. Throws EntryFileError naming the file and line.
 */
export function parseEntryFile(file: string, text: string, where: { kind: 'entry' | 'path'; core: string; name: string }): ParsedEntryFile {
  const { yaml, body } = split(file, text);
  const parsed = parseDocument(yaml, { prettyErrors: false, uniqueKeys: true });
  const yamlError = parsed.errors[0];
  if (yamlError)
    throw new EntryFileError(
      file,
      (yamlError.linePos?.[0].line ?? 0) + 1,
      `front matter is not valid YAML: ${yamlError.message.split('\n')[0]}`,
    );
  if (!isMap(parsed.contents)) throw new EntryFileError(file, 2, 'the front matter must be a map of fields (key: value)');
  // Dates stay text: the memory file rules check them as written.
  const fm = parsed.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
  for (const pair of parsed.contents.items) {
    if (isScalar(pair.value) && pair.value.value instanceof Date) fm[String((pair.key as { value: unknown }).value)] = pair.value.source;
  }
  const validate = validatorsOf()[where.kind];
  if (!validate(fm)) {
    const { key, message } = frontMatterProblem(validate.errors![0]!);
    throw new EntryFileError(file, lineOfKey(yaml, key), message);
  }
  if (fm.memcore !== ENTRY_FILE_VERSION)
    throw new EntryFileError(file, lineOfKey(yaml, 'memcore'), `field "memcore" must be ${ENTRY_FILE_VERSION} (the format version)`);
  const id = fm.id as string;
  const bad = idProblem(id) ?? idProblem(where.core);
  if (bad) throw new EntryFileError(file, lineOfKey(yaml, 'id'), `field "id" ${JSON.stringify(id)} ${bad}`);
  if (fileNameOf(id) !== where.name)
    throw new EntryFileError(file, lineOfKey(yaml, 'id'), `the file of id ${JSON.stringify(id)} is named "${fileNameOf(id)}.md"`);

  const record: MemoryDocumentRecord = {};
  const targets: ParsedEntryFile['targets'] = [];
  if (where.kind === 'entry') {
    const content = body;
    if (content.trim() === '') throw new EntryFileError(file, null, 'the entry has no content (the markdown after the front matter)');
    const entry: EntryRecord = { id, core_id: where.core, title: fm.title as string, content };
    const copy = (from: string, to: keyof EntryRecord = from as keyof EntryRecord) => {
      if (fm[from] !== undefined) (entry as unknown as Record<string, unknown>)[to] = fm[from];
    };
    copy('type', 'entry_type');
    for (const k of ['confidence', 'importance', 'tags', 'aliases', 'sensitivity', 'pinned', 'source'] as const) copy(k);
    for (const k of ['created_at', 'updated_at', 'valid_from', 'valid_to'] as const) copy(k);
    const code = ((fm.code as CodeRef[] | undefined) ?? []).map((c) => ({ ref: c, record: codeRecord(c) }));
    const links = (fm.links as LinkRef[] | undefined) ?? [];
    const relations: RelationRecord[] = [
      ...links.map((l): RelationRecord => ({ type: l.type, from: id, to: l.to, ...(l.weight !== undefined ? { weight: l.weight } : {}) })),
      ...code.map((c): RelationRecord => ({
        type: 'REFERENCES_CODE',
        from: id,
        to: deriveCodeLocationId(c.record),
        relevance: c.ref.relevance ?? 1,
      })),
    ];
    for (const l of links) targets.push({ id: l.to, kind: l.type === 'IMPLEMENTS' ? 'path' : 'entry', line: lineOfKey(yaml, 'links') });
    const locations = [...new Map(code.map((c) => [deriveCodeLocationId(c.record), c.record])).values()];
    Object.assign(record, { entries: [entry], code_locations: locations, relations });
  } else {
    const steps = (fm.steps as CodeRef[] | undefined) ?? [];
    const locations = [...new Map(steps.map((s) => [deriveCodeLocationId(codeRecord(s)), codeRecord(s)])).values()];
    const description = body;
    Object.assign(record, {
      code_locations: locations,
      golden_paths: [
        {
          id,
          name: fm.name as string,
          ...(fm.concept !== undefined ? { concept: fm.concept } : {}),
          ...(description !== '' ? { description } : {}),
          steps: steps.map((s) => ({
            code: deriveCodeLocationId(codeRecord(s)),
            ...(s.description !== undefined ? { description: s.description } : {}),
            ...(s.key_concepts !== undefined ? { key_concepts: s.key_concepts } : {}),
          })),
        },
      ],
    });
  }
  try {
    const { document } = validateMemoryDocument(file, record);
    return { kind: where.kind, id, document, targets, sensitivity: (fm.sensitivity as string | undefined) ?? 'internal' };
  } catch (e) {
    if (!(e instanceof MemoryFileError)) throw e;
    const key = e.field === null ? null : e.field.replace(/^entry_type$/, 'type').replace(/^(core_id|content)$/, 'id');
    throw new EntryFileError(file, lineOfKey(yaml, e.record?.startsWith('relations') ? 'links' : key), e.message.slice(file.length + 2));
  }
}

const iso = (d: Date | null) => (d === null ? undefined : d.toISOString());

/** The text of an entry's file: front matter (only the fields that differ from the defaults) and the content as the body. */
export function entryFileText(
  entry: Pick<
    MemoryEntry,
    'id' | 'title' | 'content' | 'entryType' | 'confidence' | 'importance' | 'tags' | 'aliases' | 'sensitivity' | 'pinned' | 'source'
  > & { createdAt?: Date | null; validFrom?: Date | null; validTo?: Date | null },
  links: Pick<Relation, 'type' | 'to' | 'weight'>[] = [],
  code: (Pick<CodeLocation, 'filePath' | 'symbol' | 'startLine' | 'endLine' | 'codebaseId' | 'language'> & { relevance?: number })[] = [],
): string {
  const fm: Record<string, unknown> = { memcore: ENTRY_FILE_VERSION, id: entry.id, title: entry.title };
  if (entry.entryType !== 'fact') fm.type = entry.entryType;
  if (entry.confidence !== 'medium') fm.confidence = entry.confidence;
  if (entry.importance !== 5) fm.importance = entry.importance;
  if (entry.tags.length) fm.tags = entry.tags;
  if (entry.aliases.length) fm.aliases = entry.aliases;
  if (entry.sensitivity !== 'internal') fm.sensitivity = entry.sensitivity;
  if (entry.pinned) fm.pinned = true;
  if (entry.source !== null) fm.source = entry.source;
  for (const [k, v] of [
    ['created_at', entry.createdAt],
    ['valid_from', entry.validFrom],
    ['valid_to', entry.validTo],
  ] as const)
    if (v) fm[k] = iso(v);
  if (code.length) fm.code = code.map(codeRef);
  if (links.length)
    fm.links = links.map((l) => ({
      type: l.type,
      to: l.to,
      ...(l.type === 'RELATED' && l.weight !== undefined && l.weight !== 1 ? { weight: l.weight } : {}),
    }));
  return `---\n${stringify(fm, { lineWidth: 0 })}---\n\n${entry.content}\n`;
}

function codeRef(
  c: Pick<CodeLocation, 'filePath' | 'symbol' | 'startLine' | 'endLine' | 'codebaseId' | 'language'> & { relevance?: number },
): CodeRef {
  return {
    path: c.filePath,
    ...(c.symbol !== null ? { symbol: c.symbol } : {}),
    ...(c.startLine !== null
      ? { lines: c.endLine !== null && c.endLine !== c.startLine ? `${c.startLine}-${c.endLine}` : c.startLine }
      : {}),
    ...(c.codebaseId !== 'default' ? { codebase: c.codebaseId } : {}),
    ...(c.language !== null ? { language: c.language } : {}),
    ...(c.relevance !== undefined && c.relevance !== 1 ? { relevance: c.relevance } : {}),
  };
}

/** The text of a golden path's file: its steps as code references, its description as the body. */
export function pathFileText(path: Pick<GoldenPath, 'id' | 'name' | 'concept' | 'description' | 'steps'>): string {
  const fm: Record<string, unknown> = { memcore: ENTRY_FILE_VERSION, id: path.id, name: path.name };
  if (path.concept) fm.concept = path.concept;
  if (path.steps.length)
    fm.steps = path.steps.map((s) => ({
      ...codeRef(s.code),
      ...(s.description ? { description: s.description } : {}),
      ...(s.keyConcepts.length ? { key_concepts: s.keyConcepts } : {}),
    }));
  return `---\n${stringify(fm, { lineWidth: 0 })}---\n${path.description ? `\n${path.description}\n` : ''}`;
}
