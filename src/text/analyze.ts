/**
 * Text analysis shared by the keyword index (documents) and the query path (queries): the same
 * words must become the same terms on both sides, or BM25 matches nothing.
 */
import { createRequire } from 'node:module';

/** Snowball English (Porter2), the stemmer of LanceDB's default full-text analyzer. CommonJS, untyped. */
const porter2 = createRequire(import.meta.url)('wink-porter2-stemmer') as (word: string) => string;

/** Lucene's English stop words, as full-text analyzers drop them. */
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);
/** Longer tokens are not words (hashes, base64, URLs run together). */
const MAX_TOKEN_LENGTH = 40;

const stems = new Map<string, string>();

/**
 * A word as indexed: ASCII-folded (é → e), stemmed when it is all letters (the stemmer mangles
 * "3rd" into "yrd"); the cache keeps that to one lookup per distinct word.
 */
function term(word: string): string {
  let t = stems.get(word);
  if (t === undefined) {
    const folded = /[^\u0000-\u007f]/.test(word) ? word.normalize('NFKD').replace(/\p{M}/gu, '') : word;
    t = /^[a-z]+$/.test(folded) ? porter2(folded) : folded;
    if (stems.size < 1_000_000) stems.set(word, t);
  }
  return t;
}

/**
 * The terms of a text as the index holds them: words (letters and digits) lower-cased, stop words
 * and over-long tokens out, ASCII-folded and stemmed. Queries and documents go through the same.
 */
export function analyze(text: string): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [];
  if (/[^\u0000-\u007f]/.test(lower)) {
    for (const m of lower.matchAll(/[\p{L}\p{N}]+/gu)) keep(out, m[0]);
    return out;
  }
  // ASCII: split by character codes, several times faster than the Unicode regex on a 100K-entry load
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0;
    const word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    if (word && start < 0) start = i;
    else if (!word && start >= 0) {
      keep(out, lower.slice(start, i));
      start = -1;
    }
  }
  return out;
}

function keep(out: string[], word: string): void {
  if (word.length <= MAX_TOKEN_LENGTH && !STOP_WORDS.has(word)) out.push(term(word));
}

/**
 * Code's identifiers as words as well: `parseHeaderValue` is kept and followed by `parse header
 * value`, `HTTPServer` by `http server` (snake_case and kebab-case split already, at `_` and `-`).
 * For code documents and the queries searched against them, so `getCookie` and "get the cookie"
 * share terms.
 */
export function splitIdentifiers(text: string): string {
  return text.replace(/[A-Za-z][A-Za-z0-9]*/g, (word) => {
    const parts = word.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g);
    return parts && parts.length > 1 ? `${word} ${parts.join(' ')}` : word;
  });
}

/**
 * Words and the abbreviations code writes them as, both ways: a task says "parameter", the code
 * `param`; a task names `ctx`, the code's comments say "context". Language-agnostic programmers'
 * shorthand, not any project's.
 */
const CODE_ABBREVIATIONS: [string, string][] = [
  ['parameter', 'param'],
  ['parameters', 'params'],
  ['argument', 'arg'],
  ['arguments', 'args'],
  ['configuration', 'config'],
  ['context', 'ctx'],
  ['request', 'req'],
  ['response', 'res'],
  ['error', 'err'],
  ['message', 'msg'],
  ['environment', 'env'],
  ['authentication', 'auth'],
  ['authorization', 'auth'],
  ['directory', 'dir'],
  ['initialize', 'init'],
  ['initialization', 'init'],
  ['string', 'str'],
  ['value', 'val'],
  ['index', 'idx'],
  ['temporary', 'tmp'],
  ['reference', 'ref'],
  ['attribute', 'attr'],
  ['function', 'func'],
  ['command', 'cmd'],
  ['option', 'opt'],
  ['document', 'doc'],
  ['documentation', 'docs'],
  ['specification', 'spec'],
  ['utility', 'util'],
  ['utilities', 'utils'],
  ['buffer', 'buf'],
  ['length', 'len'],
  ['previous', 'prev'],
  ['source', 'src'],
  ['destination', 'dst'],
  ['database', 'db'],
  ['password', 'pwd'],
  ['information', 'info'],
  ['maximum', 'max'],
  ['minimum', 'min'],
  ['number', 'num'],
  ['object', 'obj'],
  ['variable', 'var'],
  ['execute', 'exec'],
  ['repository', 'repo'],
  ['certificate', 'cert'],
  ['connection', 'conn'],
  ['callback', 'cb'],
  ['middleware', 'mw'],
  ['template', 'tpl'],
  ['completion', 'comp'],
];
const ABBREVIATION_OF = new Map<string, string[]>();
for (const [long, short] of CODE_ABBREVIATIONS) {
  ABBREVIATION_OF.set(long, [...(ABBREVIATION_OF.get(long) ?? []), short]);
  ABBREVIATION_OF.set(short, [...(ABBREVIATION_OF.get(short) ?? []), long]);
}

/** The other spellings of a word in code (lower-cased word in, words out; none for most words). */
export function codeSpellings(word: string): readonly string[] {
  return ABBREVIATION_OF.get(word.toLowerCase()) ?? [];
}
