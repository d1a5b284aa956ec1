/**
 * The store written back out in the memory file format: entries (every one, in effect or not),
 * code locations, golden paths with their steps, and relations. `memcore ingest` of an export
 * into an empty folder gives the same store: a readable backup, and the way to move memory
 * between machines or models.
 */
import { stringify as yamlStringify } from 'yaml';
import type {
  CodeLocationRecord,
  EntryRecord,
  FeedbackRecord,
  GoldenPathRecord,
  MemoryDocumentRecord,
  RelationRecord,
} from '../model/memoryFile.js';
import type { FeedbackSignal } from '../feedback/effectiveness.js';
import type { CodeLocation, GoldenPath, MemoryEntry, Relation } from '../model/types.js';

export type ExportFormat = 'yaml' | 'jsonl' | 'json';

function entryRecord(e: MemoryEntry): EntryRecord {
  return {
    id: e.id,
    core_id: e.coreId,
    title: e.title,
    ...(e.aliases.length ? { aliases: e.aliases } : {}),
    content: e.content,
    entry_type: e.entryType,
    confidence: e.confidence,
    importance: e.importance,
    ...(e.tags.length ? { tags: e.tags } : {}),
    ...(e.source !== null ? { source: e.source } : {}),
    sensitivity: e.sensitivity,
    ...(e.pinned ? { pinned: true } : {}),
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
    ...(e.validFrom ? { valid_from: e.validFrom.toISOString() } : {}),
    ...(e.validTo ? { valid_to: e.validTo.toISOString() } : {}),
  };
}

function codeRecord(c: CodeLocation): CodeLocationRecord {
  return {
    id: c.id,
    codebase_id: c.codebaseId,
    file_path: c.filePath,
    ...(c.symbol !== null ? { symbol: c.symbol } : {}),
    ...(c.startLine !== null ? { start_line: c.startLine } : {}),
    ...(c.endLine !== null ? { end_line: c.endLine } : {}),
    ...(c.language !== null ? { language: c.language } : {}),
    ...(c.kind !== null ? { kind: c.kind } : {}),
    ...(c.fingerprint !== null ? { fingerprint: c.fingerprint } : {}),
    ...(c.revision !== null ? { revision: c.revision } : {}),
  };
}

function pathRecord(p: GoldenPath): GoldenPathRecord {
  return {
    id: p.id,
    name: p.name,
    ...(p.concept !== null ? { concept: p.concept } : {}),
    ...(p.description !== null ? { description: p.description } : {}),
    steps: p.steps.map((s) => ({
      code: s.code.id,
      step_order: s.order,
      ...(s.description !== null ? { description: s.description } : {}),
      ...(s.keyConcepts.length ? { key_concepts: s.keyConcepts } : {}),
    })),
  };
}

function relationRecord(r: Relation): RelationRecord {
  return {
    type: r.type,
    from: r.from,
    to: r.to,
    ...(r.weight !== undefined ? { weight: r.weight } : {}),
    ...(r.kind !== undefined ? { kind: r.kind } : {}),
    ...(r.relevance !== undefined ? { relevance: r.relevance } : {}),
  };
}

/**
 * The document for `entries`; relations whose entry end is not among them (another core's, or a
 * secret left out) are left out too, so that the document ingests on its own.
 */
export function exportDocument(
  entries: MemoryEntry[],
  codeLocations: CodeLocation[],
  goldenPaths: GoldenPath[],
  relations: Relation[],
  signals: readonly FeedbackSignal[] = [],
): MemoryDocumentRecord {
  const ids = new Set(entries.map((e) => e.id));
  // Ratings of the entries exported, with their keys: an import counts each once.
  const feedback = signals
    .filter((s) => ids.has(s.entryId))
    .map((s): FeedbackRecord => ({
      entry_id: s.entryId,
      useful: s.useful,
      at: s.at,
      ...(s.bundleId ? { bundle_id: s.bundleId } : {}),
      ...(s.note !== undefined ? { note: s.note } : {}),
      key: s.key,
    }));
  const codeIds = new Set(codeLocations.map((c) => c.id));
  // IMPORTS (import-code) join two code locations; they go with the code, not with an entry.
  const entryEnds = (r: Relation) =>
    r.type === 'IMPORTS'
      ? codeIds.has(r.from) && codeIds.has(r.to)
      : ids.has(r.from) && (r.type === 'REFERENCES_CODE' || r.type === 'IMPLEMENTS' || ids.has(r.to));
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return {
    version: 1,
    entries: [...entries].sort(byId).map(entryRecord),
    code_locations: [...codeLocations].sort(byId).map(codeRecord),
    golden_paths: [...goldenPaths].sort(byId).map(pathRecord),
    relations: relations.filter(entryEnds).map(relationRecord),
    ...(feedback.length > 0 ? { feedback } : {}),
  };
}

const JSONL_KIND = {
  entries: 'entry',
  code_locations: 'code_location',
  golden_paths: 'golden_path',
  relations: 'relation',
  feedback: 'feedback',
} as const;

/** The document as `memcore ingest` reads it back: YAML, JSON, or JSONL (one record a line, with its `kind`). */
export function serializeMemoryDocument(doc: MemoryDocumentRecord, format: ExportFormat): string {
  if (format === 'json') return JSON.stringify(doc, null, 2) + '\n';
  if (format === 'yaml') return yamlStringify(doc, { lineWidth: 0 });
  const lines: string[] = [];
  for (const [section, kind] of Object.entries(JSONL_KIND) as [keyof typeof JSONL_KIND, string][]) {
    for (const record of doc[section] ?? []) {
      const { kind: relationKind, ...fields } = record as { kind?: string };
      lines.push(JSON.stringify({ kind, ...fields, ...(relationKind !== undefined ? { relation_kind: relationKind } : {}) }));
    }
  }
  return lines.map((l) => l + '\n').join('');
}
