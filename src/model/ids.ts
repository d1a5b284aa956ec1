/**
 * The id grammar: what an id of an entry, a memory core, a code location or a golden path may be,
 * checked at every way in (memory files, the API, the CLI). An id must come back exactly as it was
 * given, from every store and every read: characters a store drops or changes (a leading BOM that
 * the table reads back without), or that no filter can carry (NUL), would leave an entry that can
 * be neither found nor deleted.
 */
import { invalidInput } from './errors.js';

/** Longest id, in characters (code points). */
export const MAX_ID_LENGTH = 256;

/** An id of printable ASCII that neither starts nor ends with a space. */
const PLAIN_ID = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** Format characters allowed inside an id: the zero-width (non-)joiners that emoji and some scripts need. */
const JOINERS = /[\u200C\u200D]/u;

/**
 * The rule an id breaks, or undefined for a good id. An id is 1 to 256 characters of well-formed
 * Unicode in NFC (refused otherwise, not normalised: an id comes back exactly as given), with no
 * control characters, no format characters (BOM, zero-width space, bidi overrides; the joiners
 * U+200C and U+200D only inside), no line or paragraph separators, and no white space at either end.
 */
export function idProblem(id: unknown): string | undefined {
  if (typeof id !== 'string') return `must be a string, got ${id === null ? 'null' : typeof id}`;
  // Printable ASCII without a space at either end breaks none of the rules below (it is NFC and
  // one code point a character): most ids, checked at a fraction of the cost (a write of 100K
  // relations checks 200K ids).
  if (id.length <= MAX_ID_LENGTH && PLAIN_ID.test(id)) return undefined;
  if (id.length === 0) return 'must not be empty';
  // In a u-mode pattern a surrogate pair is one code point, so \p{Cs} matches only a lone half.
  if (/\p{Cs}/u.test(id)) return 'holds a lone surrogate (not well-formed Unicode)';
  const length = [...id].length;
  if (length > MAX_ID_LENGTH) return `is ${length} characters long; an id has at most ${MAX_ID_LENGTH}`;
  const bad = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
  for (const m of id.matchAll(bad)) {
    const inside = m.index > 0 && m.index + m[0].length < id.length;
    if (JOINERS.test(m[0]) && inside) continue;
    return `holds ${codePoint(m[0])} at character ${[...id.slice(0, m.index)].length + 1} (control, format and line-separator characters are not allowed${JOINERS.test(m[0]) ? ' at either end' : ''})`;
  }
  if (/^\s|\s$/u.test(id)) return 'starts or ends with white space';
  if (id.normalize('NFC') !== id) return "is not in Unicode NFC; normalise it first (id.normalize('NFC'))";
  return undefined;
}

function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Throws INVALID_INPUT naming `what` (e.g. `delete: ids[2]`) and the rule, for an id outside the grammar. */
export function checkId(what: string, id: unknown): string {
  const problem = idProblem(id);
  if (problem) throw invalidInput(`${what}: id ${quoted(id)} ${problem}`);
  return id as string;
}

/** An id for a message: JSON-quoted, and cut after 80 characters. */
export function quoted(id: unknown): string {
  const text = typeof id === 'string' && [...id].length > 80 ? `${[...id].slice(0, 80).join('')}…` : id;
  return JSON.stringify(text) ?? String(id);
}
