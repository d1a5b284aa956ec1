import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { MemoryFileError } from './errors.js';
import type { CodeLocation, Confidence, Relation, RelationType, Sensitivity } from './types.js';
import { idProblem, quoted } from './ids.js';

/** An entry as a file states it, before the store adds timestamps and hashes. */
export interface EntryInput {
  id: string;
  coreId: string;
  title: string;
  aliases: string[];
  content: string;
  entryType: string;
  confidence: Confidence;
  importance: number;
  tags: string[];
  source: string | null;
  sensitivity: Sensitivity;
  pinned: boolean;
  createdAt: Date | null;
  /** As exported: when the text last changed. Null: worked out at ingest. */
  updatedAt: Date | null;
  validFrom: Date | null;
  validTo: Date | null;
}

export interface GoldenPathInput {
  id: string;
  name: string;
  concept: string | null;
  description: string | null;
}

/** A validated memory file. PATH_STEP relations include the steps written inside golden paths. */
export interface MemoryDocument {
  entries: EntryInput[];
  codeLocations: CodeLocation[];
  goldenPaths: GoldenPathInput[];
  relations: Relation[];
  /** Ratings of entries (`feedback` in the file). */
  feedback?: FeedbackInput[];
}

/** A rating as a memory file states it, validated. */
export interface FeedbackInput {
  entryId: string;
  useful: number;
  at: Date | null;
  bundleId: string | null;
  note: string | null;
  key: string | null;
}

/** Where a relation endpoint must live. */
export type EndpointKind = 'entry' | 'code' | 'path';

export const RELATION_ENDPOINTS: Record<RelationType, [EndpointKind, EndpointKind]> = {
  RELATED: ['entry', 'entry'],
  DEPENDS_ON: ['entry', 'entry'],
  SUPERSEDES: ['entry', 'entry'],
  REFERENCES_CODE: ['entry', 'code'],
  IMPLEMENTS: ['entry', 'path'],
  PATH_STEP: ['path', 'code'],
  IMPORTS: ['code', 'code'],
};

/** Fields a relation may carry, by type; anything else is a mistake worth reporting. */
const RELATION_FIELDS: Record<RelationType, string[]> = {
  RELATED: ['weight', 'kind'],
  DEPENDS_ON: [],
  SUPERSEDES: [],
  REFERENCES_CODE: ['relevance'],
  IMPLEMENTS: [],
  PATH_STEP: ['step_order', 'description', 'key_concepts'],
  IMPORTS: [],
};

/** A relation whose endpoint the file does not define: the indexer checks it against the stores. */
export interface ExternalReference {
  id: string;
  kind: EndpointKind;
  record: string;
  field: 'from' | 'to' | 'code' | 'entry_id';
}

const schemaUrl = new URL('../../schema/memory-file.schema.json', import.meta.url);
let validator: ValidateFunction | undefined;

function schemaValidator(): ValidateFunction {
  if (!validator) {
    const ajv = new Ajv({ allErrors: false, strict: false });
    validator = ajv.compile(JSON.parse(readFileSync(schemaUrl, 'utf8')) as object);
  }
  return validator;
}

/** A memory file is read whole into memory. */
export const MAX_FILE_BYTES = 512 * 2 ** 20;
/** Records one write (a file, or one ingestDocument / upsert / link call) may hold: it is validated, embedded and journaled as one. */
export const MAX_RECORDS = {
  entries: 250_000,
  code_locations: 250_000,
  golden_paths: 50_000,
  relations: 2_500_000,
  feedback: 1_000_000,
} as const;

/** Default entry id: stable across re-ingests of the same core and title. */
export function deriveEntryId(coreId: string, title: string): string {
  return 'e_' + createHash('sha256').update(`${coreId}\u0000${title}`).digest('hex').slice(0, 16);
}

export function deriveCodeLocationId(c: {
  codebase_id: string;
  file_path: string;
  symbol?: string;
  start_line?: number;
  end_line?: number;
}): string {
  let id = `${c.codebase_id}:${c.file_path}`;
  if (c.symbol) id += `#${c.symbol}`;
  if (c.start_line !== undefined) id += `:${c.start_line}-${c.end_line ?? c.start_line}`;
  return id;
}

/** Names a record for error messages: JSONL records by line, others by position and id. */
export type RecordNamer = (section: string, index: number, id?: string) => string;

const defaultNamer: RecordNamer = (section, index, id) => `${section}[${index}]${id ? ` (id ${quoted(id)})` : ''}`;

/** An entry as a memory file (or `upsert`) states it; see docs/memory-file.md for each field. */
export interface EntryRecord {
  /** Default: derived from core_id + title. */
  id?: string;
  /** Default: the document's core_id. */
  core_id?: string;
  title: string;
  aliases?: string[];
  content: string;
  /** Default `fact`. */
  entry_type?: string;
  /** Default `medium`. */
  confidence?: Confidence;
  /** 1–10, default 5. */
  importance?: number;
  tags?: string[];
  source?: string;
  /** Default `internal`. */
  sensitivity?: Sensitivity;
  /** Part of its core's static layer (core memory). Default false. */
  pinned?: boolean;
  /** ISO 8601 dates. */
  created_at?: string;
  updated_at?: string;
  valid_from?: string;
  valid_to?: string;
}
export interface CodeLocationRecord {
  id?: string;
  codebase_id: string;
  file_path: string;
  symbol?: string;
  start_line?: number;
  end_line?: number;
  language?: string;
  kind?: string;
  fingerprint?: string;
  revision?: string;
}
export interface GoldenPathStepRecord {
  code: string;
  step_order?: number;
  description?: string;
  key_concepts?: string[];
}
export interface GoldenPathRecord {
  id: string;
  name: string;
  concept?: string;
  description?: string;
  steps?: GoldenPathStepRecord[];
}
/** A relation as a memory file (or `link`) states it: `{ type, from, to }` plus the fields its type allows. */
export interface RelationRecord {
  type: RelationType;
  from: string;
  to: string;
  weight?: number;
  kind?: string;
  relevance?: number;
  step_order?: number;
  description?: string;
  key_concepts?: string[];
}
/** A memory file's content as an object (`ingestDocument`). */
export interface MemoryDocumentRecord {
  version?: 1;
  core_id?: string;
  entries?: EntryRecord[];
  code_locations?: CodeLocationRecord[];
  golden_paths?: GoldenPathRecord[];
  relations?: RelationRecord[];
  feedback?: FeedbackRecord[];
}
/** A rating as a memory file holds it (`memcore export` writes them). */
export interface FeedbackRecord {
  entry_id: string;
  useful: number;
  at?: string;
  bundle_id?: string;
  note?: string;
  key?: string;
}
type RawDocument = MemoryDocumentRecord;

function describeSchemaError(file: string, doc: unknown, err: ErrorObject, name: RecordNamer): MemoryFileError {
  const parts = err.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const { record, field } = locate(doc, parts, name);
  const { field: fieldName, problem } = schemaProblem(err, field);
  return new MemoryFileError(file, record, fieldName, problem);
}

/** A schema error as the field it is about (`field`, the path to the object, extended) and the rule it breaks. */
export function schemaProblem(err: ErrorObject, field: string | null): { field: string | null; problem: string } {
  if (err.keyword === 'additionalProperties') {
    const extra = String((err.params as { additionalProperty: string }).additionalProperty);
    return { field: field ? `${field}.${extra}` : extra, problem: 'is not a known field' };
  }
  if (err.keyword === 'required') {
    const missing = String((err.params as { missingProperty: string }).missingProperty);
    return { field: field ? `${field}.${missing}` : missing, problem: 'is required' };
  }
  if (err.keyword === 'enum')
    return {
      field,
      problem: `must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`,
    };
  return { field, problem: err.message ?? 'is invalid' };
}

/** The record (`entries[3] (id "x")`) and field (`tags.1`) a path into the document points at. */
function locate(doc: unknown, parts: string[], name: RecordNamer): { record: string | null; field: string | null } {
  let record: string | null = null;
  let fieldParts = parts;
  if (parts.length >= 2 && /^\d+$/.test(parts[1]!)) {
    const section = parts[0]!;
    const index = Number(parts[1]);
    const rec = (doc as Record<string, unknown[]>)[section]?.[index] as { id?: unknown } | undefined;
    record = name(section, index, typeof rec?.id === 'string' ? rec.id : undefined);
    fieldParts = parts.slice(2);
  }
  return { record, field: fieldParts.join('.') || null };
}

/** Why a text could not come back from the stores exactly as given, if it could not. */
function textProblem(text: string): string | undefined {
  // UTF-8 cannot carry a lone surrogate: the table would store U+FFFD in its place.
  if (/\p{Cs}/u.test(text)) return 'holds a lone surrogate: text must be well-formed Unicode';
  // Arrow decodes with a TextDecoder that drops a leading byte order mark.
  if (text.startsWith('\uFEFF')) return 'starts with U+FEFF (a byte order mark), which the store would drop; remove it';
  return undefined;
}

/** The first string in `value` that could not come back exactly (textProblem): its path and the problem. */
function unstorableText(value: unknown, path: string[] = []): { path: string[]; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path, problem } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    const found = unstorableText(v, [...path, k]);
    if (found) return found;
  }
  return undefined;
}

/** `YYYY-MM-DD`, optionally with `THH:MM[:SS[.fraction]]` and a zone (`Z`, `±HH:MM`, `±HHMM`). */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A calendar-valid ISO 8601 date or date-time, else a file error: `Date.parse` alone would take
 * `2025-02-30` as 2 March and `March 7` as 2001-03-07.
 */
function parseTime(file: string, record: string, field: string, value: string | undefined): Date | null {
  if (value === undefined) return null;
  const refuse = (why: string) => new MemoryFileError(file, record, field, `${why}: ${JSON.stringify(value)}`);
  const m = ISO_8601.exec(value);
  if (!m) throw refuse('is not an ISO 8601 date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS][Z|±HH:MM])');
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((p) => (p === undefined ? 0 : Number(p))) as number[];
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth || hour! > 23 || minute! > 59 || second! > 59)
    throw refuse('is not a date on the calendar');
  const ms = Date.parse(value.replace(' ', 'T'));
  if (!Number.isFinite(ms)) throw refuse('is not an ISO 8601 date');
  return new Date(ms);
}

/**
 * Checks a parsed memory file against schema/memory-file.schema.json and the rules a schema
 * cannot state (unique ids, relation endpoint kinds, dates, line spans), and normalises it.
 * Returns the document and the relation endpoints it does not define itself.
 */
export function validateMemoryDocument(
  file: string,
  input: unknown,
  name: RecordNamer = defaultNamer,
): { document: MemoryDocument; external: ExternalReference[] } {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new MemoryFileError(file, null, null, 'must hold an object with entries, code_locations, golden_paths or relations');
  }
  for (const [section, max] of Object.entries(MAX_RECORDS)) {
    const records = (input as Record<string, unknown>)[section];
    const n = Array.isArray(records) ? records.length : 0;
    if (n > max)
      throw new MemoryFileError(
        file,
        null,
        section,
        `${n.toLocaleString('en')} records; one write takes at most ${max.toLocaleString('en')}: split them over several files or calls`,
      );
  }
  const validate = schemaValidator();
  if (!validate(input)) throw describeSchemaError(file, input, validate.errors![0]!, name);
  const unstorable = unstorableText(input);
  if (unstorable) {
    const { record, field } = locate(input, unstorable.path, name);
    throw new MemoryFileError(file, record, field, unstorable.problem);
  }
  const raw = input as RawDocument;

  const ids = { entry: new Set<string>(), code: new Set<string>(), path: new Set<string>() };
  const claim = (kind: EndpointKind, id: string, record: string, derived = false): void => {
    const problem = idProblem(id);
    if (problem) throw new MemoryFileError(file, record, 'id', `${derived ? 'the id derived from it, ' : ''}${quoted(id)}, ${problem}`);
    if (ids[kind].has(id)) throw new MemoryFileError(file, record, 'id', `duplicate id ${quoted(id)} in this file`);
    ids[kind].add(id);
  };
  const checkReference = (id: string, record: string, field: string): void => {
    const problem = idProblem(id);
    if (problem) throw new MemoryFileError(file, record, field, `${quoted(id)} ${problem}`);
  };

  const entries = (raw.entries ?? []).map((e, i): EntryInput => {
    const coreId = e.core_id ?? raw.core_id;
    const record = name('entries', i, e.id);
    if (coreId === undefined) throw new MemoryFileError(file, record, 'core_id', 'is required (or set core_id at the top of the file)');
    checkReference(coreId, record, 'core_id');
    if (e.title.trim() === '') throw new MemoryFileError(file, record, 'title', 'must not be blank');
    const id = e.id ?? deriveEntryId(coreId, e.title);
    claim('entry', id, record);
    const createdAt = parseTime(file, record, 'created_at', e.created_at);
    const updatedAt = parseTime(file, record, 'updated_at', e.updated_at);
    if (updatedAt && createdAt && updatedAt.getTime() < createdAt.getTime())
      throw new MemoryFileError(file, record, 'updated_at', 'must not be earlier than created_at');
    const validFrom = parseTime(file, record, 'valid_from', e.valid_from);
    const validTo = parseTime(file, record, 'valid_to', e.valid_to);
    if (validFrom && validTo && validTo.getTime() <= validFrom.getTime()) {
      throw new MemoryFileError(file, record, 'valid_to', 'must be later than valid_from');
    }
    return {
      id,
      coreId,
      title: e.title,
      aliases: e.aliases ?? [],
      content: e.content,
      entryType: e.entry_type ?? 'fact',
      confidence: e.confidence ?? 'medium',
      importance: e.importance ?? 5,
      tags: e.tags ?? [],
      source: e.source ?? null,
      sensitivity: e.sensitivity ?? 'internal',
      pinned: e.pinned ?? false,
      createdAt,
      updatedAt,
      validFrom,
      validTo,
    };
  });

  const codeLocations = (raw.code_locations ?? []).map((c, i): CodeLocation => {
    const record = name('code_locations', i, c.id);
    if (c.end_line !== undefined && c.start_line === undefined)
      throw new MemoryFileError(file, record, 'start_line', 'is required with end_line');
    if (c.start_line !== undefined && c.end_line !== undefined && c.end_line < c.start_line) {
      throw new MemoryFileError(file, record, 'end_line', `must not be before start_line (${c.start_line})`);
    }
    const id = c.id ?? deriveCodeLocationId(c);
    claim('code', id, record, c.id === undefined);
    return {
      id,
      codebaseId: c.codebase_id,
      filePath: c.file_path,
      symbol: c.symbol ?? null,
      startLine: c.start_line ?? null,
      endLine: c.end_line ?? c.start_line ?? null,
      language: c.language ?? null,
      kind: c.kind ?? null,
      fingerprint: c.fingerprint ?? null,
      revision: c.revision ?? null,
    };
  });

  const relations: Relation[] = [];
  const external: ExternalReference[] = [];
  const requireEndpoint = (kind: EndpointKind, id: string, record: string, field: ExternalReference['field']): void => {
    if (!ids[kind].has(id)) external.push({ id, kind, record, field });
  };

  const goldenPaths = (raw.golden_paths ?? []).map((p, i): GoldenPathInput => {
    const record = name('golden_paths', i, p.id);
    claim('path', p.id, record);
    const orders = new Set<number>();
    (p.steps ?? []).forEach((s, j) => {
      const stepOrder = s.step_order ?? j + 1;
      const stepRecord = `${record}: steps[${j}]`;
      checkReference(s.code, stepRecord, 'code');
      if (orders.has(stepOrder)) throw new MemoryFileError(file, stepRecord, 'step_order', `duplicate step_order ${stepOrder}`);
      orders.add(stepOrder);
      requireEndpoint('code', s.code, stepRecord, 'code');
      relations.push({
        type: 'PATH_STEP',
        from: p.id,
        to: s.code,
        stepOrder,
        description: s.description ?? '',
        keyConcepts: s.key_concepts ?? [],
      });
    });
    return { id: p.id, name: p.name, concept: p.concept ?? null, description: p.description ?? null };
  });

  (raw.relations ?? []).forEach((r, i) => {
    const record = name('relations', i) + ` (${r.type} "${r.from}" → "${r.to}")`;
    for (const field of ['weight', 'kind', 'relevance', 'step_order', 'description', 'key_concepts'] as const) {
      if (r[field] !== undefined && !RELATION_FIELDS[r.type].includes(field)) {
        throw new MemoryFileError(file, record, field, `does not apply to ${r.type} relations`);
      }
    }
    checkReference(r.from, record, 'from');
    checkReference(r.to, record, 'to');
    if (r.from === r.to) throw new MemoryFileError(file, record, 'to', 'a relation cannot point to its own source');
    const [fromKind, toKind] = RELATION_ENDPOINTS[r.type];
    requireEndpoint(fromKind, r.from, record, 'from');
    requireEndpoint(toKind, r.to, record, 'to');
    relations.push({
      type: r.type,
      from: r.from,
      to: r.to,
      ...(r.type === 'RELATED' ? { weight: r.weight ?? 1, kind: r.kind ?? 'related' } : {}),
      ...(r.type === 'REFERENCES_CODE' ? { relevance: r.relevance ?? 1 } : {}),
      ...(r.type === 'PATH_STEP'
        ? { stepOrder: r.step_order ?? 1, description: r.description ?? '', keyConcepts: r.key_concepts ?? [] }
        : {}),
    });
  });

  const feedback = (raw.feedback ?? []).map((f, i): FeedbackInput => {
    const record = name('feedback', i);
    checkReference(f.entry_id, record, 'entry_id');
    requireEndpoint('entry', f.entry_id, record, 'entry_id');
    return {
      entryId: f.entry_id,
      useful: f.useful,
      at: parseTime(file, record, 'at', f.at),
      bundleId: f.bundle_id ?? null,
      note: f.note ?? null,
      key: f.key ?? null,
    };
  });

  return { document: { entries, codeLocations, goldenPaths, relations, ...(feedback.length > 0 ? { feedback } : {}) }, external };
}
