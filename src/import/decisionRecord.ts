/**
 * What a decision record says about itself, in the formats teams write: its status, its date and
 * the records it supersedes or is superseded by. MADR 2 (`* Status: accepted`, `* Date: …` list
 * items), MADR 3/4 and log4brains front matter (`status:`, `date:`), Nygard/adr-tools (a
 * `## Status` section, "Date: …" under the title, "Superceded by [2. …](0002-….md)" as the tool
 * spells it) and date-prefixed file names (`20200926-title.md`). docs/import.md lists them.
 */
import { posix } from 'node:path';
import type { Nodes, Root } from 'mdast';
import { toString } from 'mdast-util-to-string';
import { linksUnder } from './markdownSections.js';

/** A record another one names: by its number (`ADR-12`), or by a link to its file (as written). */
export type RecordRef = { number: number } | { url: string };

export interface DecisionRecordMeta {
  /** The status as its first words, lowercase (`accepted`, `superseded`, `on hold`); null when the record gives none. */
  status: string | null;
  /** The record's date (`YYYY-MM-DD`), from front matter, a `Date:` line or the file name; null without one. */
  date: string | null;
  supersededBy: RecordRef[];
  supersedes: RecordRef[];
  /** Tags from a `Tags:` line (log4brains). */
  tags: string[];
}

/** Statuses of a record that is not in effect: its decision no longer (or never) holds. */
export const NOT_IN_EFFECT_STATUSES = ['superseded', 'deprecated', 'rejected', 'obsolete', 'withdrawn', 'abandoned', 'replaced'];

/** A paragraph, heading, table cell or the front matter as plain text, with its link URLs. */
interface Statement {
  text: string;
  urls: string[];
  /** The heading's text when the statement is a heading. */
  heading?: string;
  /** The front matter (read as fields elsewhere). */
  yaml?: true;
}

/** Paragraphs, headings and table cells in document order, each with the links written in it (iterative: a hostile file may nest deeply). */
export function statementsOf(tree: Root): Statement[] {
  const out: Statement[] = [];
  const stack: Nodes[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'paragraph' || node.type === 'heading' || node.type === 'tableCell') {
      const text = toString(node);
      out.push({ text, urls: linksUnder(node), ...(node.type === 'heading' ? { heading: text.trim() } : {}) });
    } else if (node.type === 'yaml') {
      out.push({ text: node.value, urls: [], yaml: true });
    } else if ('children' in node) {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as Nodes);
    }
  }
  return out;
}

const SUPERSESSION = /\b(super[sc]eded[\s_-]+by|super[sc]edes|replaced[\s_-]+by|replaces)\b/gi;

/**
 * Which records a statement says this one supersedes or is superseded by: "Superseded by
 * ADR-0012", "Supersedes [ADR 3](0003-x.md)", adr-tools' "Superceded by [2. Title](0002-title.md)",
 * log4brains' "superseded by [20201016-slug](20201016-slug.md)". `linked` are the URLs of the
 * statement's links; a phrase names them when it is the statement's only one.
 */
export function supersessionRefs(text: string, linked: string[]): { supersededBy: RecordRef[]; supersedes: RecordRef[] } {
  const out = { supersededBy: [] as RecordRef[], supersedes: [] as RecordRef[] };
  const hits = [...text.matchAll(SUPERSESSION)];
  hits.forEach((m, i) => {
    const tail = text.slice(m.index + m[0].length, hits[i + 1]?.index ?? text.length);
    const named = [...tail.matchAll(/\badr[-\s#]*0*(\d{1,6})\b/gi)].map((n) => Number(n[1]));
    const bare = /^[\s:#["']*0*(\d{1,6})\b/.exec(tail);
    const numbers = named.length > 0 ? named : bare ? [Number(bare[1])] : [];
    const refs: RecordRef[] = [...(hits.length === 1 ? linked.map((url) => ({ url })) : []), ...numbers.map((number) => ({ number }))];
    (/^(super[sc]eded|replaced)/i.test(m[1]!) ? out.supersededBy : out.supersedes).push(...refs);
  });
  return out;
}

/** `YYYY-MM-DD` when `text` starts with a real calendar date (`2020-09-26`, `2020/9/26`), else null. */
function calendarDate(text: string): string | null {
  const m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const at = new Date(Date.UTC(y, mo - 1, d));
  if (y < 1970 || y > 2200 || at.getUTCMonth() !== mo - 1 || at.getUTCDate() !== d) return null;
  return at.toISOString().slice(0, 10);
}

/** The status's first words: "Superseded by [x](y.md)" → `superseded`, "On hold" → `on hold`; null for a template's placeholder. */
export function statusWord(text: string): string | null {
  const first = text.trim().split('\n')[0]!.trim().toLowerCase();
  if (!/^[a-z]/.test(first)) return null;
  if (/^super[sc]eded\b/.test(first)) return 'superseded';
  const words = first.split(/[^a-z-]+/);
  // Most statuses are one word; a few are two ("on hold", "in progress", "not started").
  return ['on', 'in', 'under', 'not'].includes(words[0]!) && words[1] ? `${words[0]} ${words[1]}` : words[0]!;
}

/**
 * The status, date, supersession and tags a decision record states, from its front matter, its
 * `Key: value` lines (a paragraph or list item starting with Status, Date or Tags), its Status
 * section and its file name; earlier sources win.
 */
export function decisionRecordMeta(path: string, frontMatter: Record<string, unknown>, tree: Root): DecisionRecordMeta {
  const meta: DecisionRecordMeta = { status: null, date: null, supersededBy: [], supersedes: [], tags: [] };
  const found = (refs: { supersededBy: RecordRef[]; supersedes: RecordRef[] }) => {
    meta.supersededBy.push(...refs.supersededBy);
    meta.supersedes.push(...refs.supersedes);
  };
  const fmStatus = frontMatter.status;
  if (typeof fmStatus === 'string') {
    meta.status = statusWord(fmStatus);
    // A link in a YAML string is text: `superseded by [x](0003-x.md)` names its file.
    if (/^(superseded|replaced)$/.test(meta.status ?? ''))
      found({ supersededBy: [...fmStatus.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => ({ url: m[1]! })), supersedes: [] });
  }
  const fmDate = frontMatter.date ?? frontMatter.created;
  if (fmDate instanceof Date) meta.date = fmDate.toISOString().slice(0, 10);
  else if (typeof fmDate === 'string') meta.date = calendarDate(fmDate);

  let inStatusSection = false;
  for (const s of statementsOf(tree)) {
    if (s.heading !== undefined) {
      inStatusSection = /^status$/i.test(s.heading);
      continue;
    }
    if (s.yaml) {
      found(supersessionRefs(s.text, []));
      continue;
    }
    if (inStatusSection) {
      // Nygard: the paragraph under `## Status` is the status; links after it name other records.
      meta.status ??= statusWord(s.text);
      inStatusSection = false;
    }
    for (const line of s.text.split('\n')) {
      const field = /^\s*(status|date|tags)\s*:\s*(.*)$/i.exec(line);
      if (!field) continue;
      const [, key, value] = field as unknown as [string, string, string];
      if (/^status$/i.test(key)) meta.status ??= statusWord(value);
      else if (/^date$/i.test(key)) meta.date ??= calendarDate(value);
      else if (meta.tags.length === 0 && /^[\w\s,#/-]+$/.test(value))
        meta.tags = value
          .split(/[\s,]+/)
          .map((t) => t.replace(/^#/, ''))
          .filter((t) => t !== '');
    }
    found(supersessionRefs(s.text, s.urls));
  }
  meta.date ??= calendarDate(posix.basename(path).replace(/^(\d{4})(\d{2})(\d{2})(?=[-_])/, '$1-$2-$3'));
  return meta;
}

/** Whether a record of this status holds no longer, or never did. */
export function outOfEffect(status: string | null): boolean {
  return status !== null && NOT_IN_EFFECT_STATUSES.includes(status.split(' ')[0]!);
}
