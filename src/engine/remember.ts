/**
 * What `remember` and `forget` write, as memory documents: one entry at a time, in the words an
 * agent uses, validated by the same schema and rules as a memory file.
 */
import { deriveCodeLocationId, type MemoryDocumentRecord, type RelationRecord } from '../model/memoryFile.js';
import type { Confidence, MemoryEntry, Sensitivity } from '../model/types.js';

/** A code location an entry refers to. */
export interface CodeReferenceInput {
  /** Path of the file in its codebase, e.g. `src/auth/tokenService.ts`. */
  file: string;
  symbol?: string;
  startLine?: number;
  endLine?: number;
  /** Default `default`. */
  codebase?: string;
  language?: string;
  /** 0–1, default 1. */
  relevance?: number;
}

/** One memory entry in an agent's words, with the links it should have. */
export interface RememberInput {
  title: string;
  content: string;
  /** Memory core. Default `default`. */
  core?: string;
  /** lesson, decision, pattern, convention, fact, … Default `fact`. */
  type?: string;
  /** Default: derived from core and title, so remembering the same title again updates the entry. */
  id?: string;
  confidence?: Confidence;
  /** 1–10, default 5. */
  importance?: number;
  tags?: string[];
  aliases?: string[];
  /** Provenance. Default `remember`. */
  source?: string;
  sensitivity?: Sensitivity;
  /** Part of its core's static layer (`coreMemory`). Default false. */
  pinned?: boolean;
  /** Ids of entries this one is related to. */
  related?: string[];
  /** Ids of entries this one depends on. */
  dependsOn?: string[];
  /** Ids of entries this one replaces: they drop out of answers, and stay in history. */
  supersedes?: string[];
  code?: CodeReferenceInput[];
  /**
   * Also link the entries and code that the text names (titles, aliases, symbols, paths), as
   * ingest's auto-linking does. Default true.
   */
  autoLink?: boolean;
}

/** An edge of an entry, as `remember`, `entryDetails` and the MCP tools report it. */
export interface EntryLink {
  type: string;
  from: string;
  to: string;
  /** How the link came about, when not stated by hand: `mention` for auto-links. */
  kind?: string;
}

export interface RememberResult {
  id: string;
  /** False when an entry with this id was updated. */
  created: boolean;
  /** Every edge of the entry after the write: the ones asked for and the ones auto-linking found. */
  links: EntryLink[];
}

export const DEFAULT_CORE = 'default';
const DEFAULT_CODEBASE = 'default';

export function rememberDocument(input: RememberInput): MemoryDocumentRecord {
  const entry = {
    ...(input.id !== undefined ? { id: input.id } : {}),
    core_id: input.core ?? DEFAULT_CORE,
    title: input.title,
    content: input.content,
    entry_type: input.type ?? 'fact',
    source: input.source ?? 'remember',
    ...(input.confidence !== undefined ? { confidence: input.confidence } : {}),
    ...(input.importance !== undefined ? { importance: input.importance } : {}),
    ...(input.tags !== undefined ? { tags: input.tags } : {}),
    ...(input.aliases !== undefined ? { aliases: input.aliases } : {}),
    ...(input.sensitivity !== undefined ? { sensitivity: input.sensitivity } : {}),
    ...(input.pinned !== undefined ? { pinned: input.pinned } : {}),
  };
  return { entries: [entry], ...linksOf(input, entry.id) };
}

/** The relations and code locations of a remembered entry; `id` undefined means derived (filled by the caller). */
function linksOf(input: RememberInput, id: string | undefined): Pick<MemoryDocumentRecord, 'relations' | 'code_locations'> {
  const code_locations = (input.code ?? []).map((c) => ({
    codebase_id: c.codebase ?? DEFAULT_CODEBASE,
    file_path: c.file,
    ...(c.symbol !== undefined ? { symbol: c.symbol } : {}),
    ...(c.startLine !== undefined ? { start_line: c.startLine } : {}),
    ...(c.endLine !== undefined ? { end_line: c.endLine } : {}),
    ...(c.language !== undefined ? { language: c.language } : {}),
  }));
  const from = id ?? '';
  const relations: RelationRecord[] = [
    ...(input.related ?? []).map((to) => ({ type: 'RELATED' as const, from, to })),
    ...(input.dependsOn ?? []).map((to) => ({ type: 'DEPENDS_ON' as const, from, to })),
    ...(input.supersedes ?? []).map((to) => ({ type: 'SUPERSEDES' as const, from, to })),
    ...code_locations.map((c, i) => ({
      type: 'REFERENCES_CODE' as const,
      from,
      to: deriveCodeLocationId(c),
      relevance: input.code![i]!.relevance ?? 1,
    })),
  ];
  return { ...(code_locations.length ? { code_locations } : {}), ...(relations.length ? { relations } : {}) };
}

/** Fills the entry id (given or derived) into the relations that start from the new entry. */
export function withEntryId(doc: MemoryDocumentRecord, id: string): MemoryDocumentRecord {
  return { ...doc, ...(doc.relations ? { relations: doc.relations.map((r) => (r.from === '' ? { ...r, from: id } : r)) } : {}) };
}

/**
 * The entry that retires another with a reason: it supersedes the old one, so answers drop it,
 * while `getEntries`, `asOf` before today and the retraction itself keep the history.
 */
export function retractionDocument(old: MemoryEntry, reason: string): MemoryDocumentRecord {
  return {
    entries: [
      {
        core_id: old.coreId,
        title: `Retired: ${old.title}`.slice(0, 1000),
        content: reason,
        entry_type: 'retraction',
        importance: old.importance,
        tags: old.tags,
        source: 'forget',
        sensitivity: old.sensitivity,
      },
    ],
  };
}
