/**
 * Deterministic links found in text, no LLM: an entry that mentions another entry's title or
 * alias gets a RELATED edge of kind `mention`; one that mentions a code symbol or file path gets
 * REFERENCES_CODE. All patterns are matched in one Aho–Corasick pass per text, so the cost is
 * linear in the corpus, not in the number of pairs.
 */
import type { CodeLocation, Relation } from '../model/types.js';
import { optionNames } from '../model/options.js';
import { DEFAULTS } from '../config/defaults.js';

interface Node {
  next: Map<string, number>;
  fail: number;
  /** Pattern indexes that end here (own and inherited through fail links). */
  out: number[];
}

/** Multi-pattern matcher over single characters. */
export class AhoCorasick {
  private readonly nodes: Node[] = [{ next: new Map(), fail: 0, out: [] }];

  constructor(readonly patterns: string[]) {
    patterns.forEach((p, i) => {
      let s = 0;
      for (const ch of p) {
        let t = this.nodes[s]!.next.get(ch);
        if (t === undefined) {
          t = this.nodes.push({ next: new Map(), fail: 0, out: [] }) - 1;
          this.nodes[s]!.next.set(ch, t);
        }
        s = t;
      }
      this.nodes[s]!.out.push(i);
    });
    const queue: number[] = [];
    for (const t of this.nodes[0]!.next.values()) queue.push(t);
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      for (const [ch, t] of this.nodes[s]!.next) {
        let f = this.nodes[s]!.fail;
        while (f !== 0 && !this.nodes[f]!.next.has(ch)) f = this.nodes[f]!.fail;
        const g = this.nodes[f]!.next.get(ch);
        this.nodes[t]!.fail = g !== undefined && g !== t ? g : 0;
        this.nodes[t]!.out.push(...this.nodes[this.nodes[t]!.fail]!.out);
        queue.push(t);
      }
    }
  }

  /** Every (pattern, end offset in characters) occurrence in `chars`. */
  *search(chars: string[]): Generator<{ pattern: number; end: number }> {
    let s = 0;
    for (let i = 0; i < chars.length; i++) {
      const ch = chars[i]!;
      while (s !== 0 && !this.nodes[s]!.next.has(ch)) s = this.nodes[s]!.fail;
      s = this.nodes[s]!.next.get(ch) ?? 0;
      for (const p of this.nodes[s]!.out) yield { pattern: p, end: i + 1 };
    }
  }
}

const WORD = /[\p{L}\p{N}_]/u;
/** One lower-case character per character, so offsets in the folded text match the original. */
const fold = (text: string): string[] =>
  Array.from(text, (ch) => {
    const l = ch.toLowerCase();
    return l.length === 1 ? l : ch;
  });

const STOP = new Set([
  'the',
  'and',
  'for',
  'with',
  'this',
  'that',
  'from',
  'into',
  'about',
  'note',
  'notes',
  'todo',
  'none',
  'other',
  'general',
  'misc',
  'introduction',
  'overview',
  'summary',
]);

/**
 * Whether a title or alias is specific enough to count as a mention wherever it appears, and how it
 * must be matched: `exact` (case-sensitive) for acronyms and names of five characters or fewer,
 * case-folded otherwise. Shared by ingest-time linking and the task's mention search.
 */
export function linkableName(raw: string, minLength: number = DEFAULTS.autoLink.minLength): { text: string; exact: boolean } | null {
  const text = raw.trim();
  const acronym = /^\p{Lu}[\p{Lu}\p{N}]+$/u.test(text); // DLQ, JWT, S3: matched exactly from 3 characters
  if ([...text].length < (acronym ? 3 : minLength) || STOP.has(text.toLowerCase()) || !WORD.test(text)) return null;
  return { text, exact: acronym || text.length <= 5 };
}

/**
 * The spans not inside a longer one: "John Middleton Murry" names Murry, not the "John Middleton"
 * its first two words also spell. Spans are half-open [start, end); equal spans are all kept.
 */
export function outermost<T extends { start: number; end: number }>(spans: T[]): T[] {
  // By start, longest first: a span is inside a longer one exactly when an earlier span with
  // another extent reaches as far. O(m log m), since a long text can hold many matches.
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: T[] = [];
  let reach = -Infinity; // furthest end of the spans before the current extent
  for (let i = 0; i < sorted.length;) {
    const { start, end } = sorted[i]!;
    let j = i;
    while (j < sorted.length && sorted[j]!.start === start && sorted[j]!.end === end) j++;
    if (end > reach) kept.push(...sorted.slice(i, j));
    reach = Math.max(reach, end);
    i = j;
  }
  return kept;
}

/**
 * Whether a symbol is distinctive enough that a mention of it in prose means the code: camelCase,
 * snake_case and dotted names are; plain words (`parse`, `Worker`, `index`) are too common.
 */
export function distinctiveSymbol(symbol: string): boolean {
  const last = symbol.split('.').at(-1)!;
  return symbol.includes('.') || /[a-z][A-Z]|_|\$|\d/.test(last) || last.length >= 12;
}

export interface AutoLinkOptions {
  /** Titles and aliases shorter than this are not matched (acronyms such as `JWT` from 3). Default 4. */
  minLength?: number;
  /**
   * A pattern mentioned by more than this share of the entries is too common to mean a link
   * (at least 5 entries are always allowed). Default 0.02.
   */
  maxMentionShare?: number;
}

export const AUTO_LINK_OPTIONS = optionNames<AutoLinkOptions>()(['minLength', 'maxMentionShare']);

interface TextEntry {
  id: string;
  title: string;
  aliases: string[];
  content: string;
}

const ASCII = /^[\x00-\x7f]*$/;
const WORDS = /[\p{L}\p{N}_]+/gu;
const ASCII_WORDS = /[a-z0-9_]+/g;

/** The words of an ASCII text, lower-cased (as `fold` would); undefined for other texts, which are always scanned. */
function asciiWords(text: string): Set<string> | undefined {
  return ASCII.test(text) ? new Set(text.toLowerCase().match(ASCII_WORDS)) : undefined;
}

/**
 * Links among `corpus` (every entry, stored and new); only links that touch one of `focus` (the
 * entries being written) are returned, since the others were found when their entries were.
 * `corpusSize`: the entries the mention share is taken of, when `corpus` holds only those that
 * can take part (default its length).
 */
export function findLinks(
  corpus: TextEntry[],
  code: CodeLocation[],
  focus: Set<string>,
  options: AutoLinkOptions = {},
  corpusSize: number = corpus.length,
): Relation[] {
  const minLength = options.minLength ?? DEFAULTS.autoLink.minLength;
  // Patterns: case-folded unless short or written in capitals (acronyms, symbols), which must match exactly.
  // `folded` is what the automaton matches; `text` is what an exact pattern must read in the original.
  const patterns: { text: string; folded: string; exact: boolean; entryIds: string[]; codeIds: string[] }[] = [];
  const byKey = new Map<string, number>();
  const add = (raw: string, target: { entry?: string; code?: string }, alwaysExact = false) => {
    const name = linkableName(raw, minLength);
    if (!name) return;
    const { text } = name;
    const exact = alwaysExact || name.exact;
    const folded = fold(text).join('');
    const key = `${exact ? 'E' : 'F'}${exact ? text : folded}`;
    let i = byKey.get(key);
    if (i === undefined) {
      i = patterns.push({ text, folded, exact, entryIds: [], codeIds: [] }) - 1;
      byKey.set(key, i);
    }
    if (target.entry) patterns[i]!.entryIds.push(target.entry);
    if (target.code) patterns[i]!.codeIds.push(target.code);
  };
  for (const e of corpus) for (const name of [e.title, ...e.aliases]) add(name, { entry: e.id });
  // A path names the file's own location where there is one (import-code writes it), not each symbol in it.
  const filesWithOwnLocation = new Set(code.filter((c) => c.symbol === null).map((c) => c.filePath));
  for (const c of code) {
    // Imported symbols (they have a kind) are every name in the code; only distinctive ones are taken.
    const symbolLinks =
      c.symbol !== null && /^[\p{L}_$][\p{L}\p{N}_$.]{2,}$/u.test(c.symbol) && (c.kind === null || distinctiveSymbol(c.symbol));
    if (symbolLinks) add(c.symbol!, { code: c.id }, true);
    if (c.symbol !== null && filesWithOwnLocation.has(c.filePath)) continue;
    add(c.filePath, { code: c.id }, true);
    const base = c.filePath.split('/').at(-1) ?? '';
    if (base.includes('.') && base !== c.filePath) add(base, { code: c.id }, true);
  }
  if (patterns.length === 0) return [];

  // A match is bounded by non-word characters, so each word of a pattern is a word of a text that
  // mentions it. Texts and patterns are paired by their words before the automaton runs: the
  // written entries are scanned for the patterns all of whose words they hold, and the other
  // entries only when they may mention a pattern that counts (one a written entry mentions: its
  // share of mentions decides whether it links; or one that names a written entry: a link into
  // it), with those patterns and the longer ones that hold one (whose match hides it, see
  // `outermost`). A write of 100 entries into 10,000 builds and runs small automata over the texts
  // that may match, and finds the same links as a scan of every text with every pattern.
  const patternWords = patterns.map((p) => [...new Set(p.folded.match(WORDS) ?? [])]);
  const mentions = new Map<number, Set<string>>(); // pattern → entries that mention it
  const scanner = (subset: number[]) => {
    const matcher = new AhoCorasick(subset.map((i) => patterns[i]!.folded));
    return (e: TextEntry) => {
      const original = Array.from(e.content);
      const chars = fold(e.content);
      const found: { pattern: number; start: number; end: number }[] = [];
      for (const hit of matcher.search(chars)) {
        const pattern = subset[hit.pattern]!;
        const p = patterns[pattern]!;
        const end = hit.end;
        const start = end - Array.from(p.folded).length;
        if ((start > 0 && WORD.test(original[start - 1]!)) || (end < original.length && WORD.test(original[end]!))) continue;
        if (p.exact && original.slice(start, end).join('') !== p.text) continue;
        found.push({ pattern, start, end });
      }
      for (const f of outermost(found)) {
        let set = mentions.get(f.pattern);
        if (!set) mentions.set(f.pattern, (set = new Set()));
        set.add(e.id);
      }
    };
  };
  const all = patterns.map((_, i) => i);
  const inFocus = corpus.filter((e) => focus.has(e.id));
  const others = corpus.filter((e) => !focus.has(e.id));
  if (patternWords.some((w) => w.length === 0)) {
    // A pattern without a word (none is linkable today): every text with every pattern.
    const scan = scanner(all);
    for (const e of corpus) scan(e);
  } else {
    const focusWords = inFocus.map((e) => asciiWords(e.content));
    const held = focusWords.every((w) => w !== undefined) ? new Set(focusWords.flatMap((w) => [...w!])) : undefined;
    const scanFocus = scanner(held ? all.filter((i) => patternWords[i]!.every((w) => held.has(w))) : all);
    for (const e of inFocus) scanFocus(e);

    const counting = new Set(mentions.keys());
    patterns.forEach((p, i) => {
      if (p.entryIds.some((id) => focus.has(id))) counting.add(i);
    });
    if (others.length > 0 && counting.size > 0) {
      // Each counted pattern is looked for by its word that fewest patterns share (likely the rarest in texts too).
      const share = new Map<string, number>();
      for (const words of patternWords) for (const w of words) share.set(w, (share.get(w) ?? 0) + 1);
      const byWord = new Map<string, number[]>();
      for (const i of counting) {
        const word = patternWords[i]!.reduce((a, b) => (share.get(b)! < share.get(a)! ? b : a));
        byWord.set(word, [...(byWord.get(word) ?? []), i]);
      }
      const mayMention = (content: string) => {
        const words = asciiWords(content);
        if (!words) return true;
        for (const w of words) for (const i of byWord.get(w) ?? []) if (patternWords[i]!.every((x) => words.has(x))) return true;
        return false;
      };
      const scanOthers = scanner(all.filter((i) => counting.has(i) || patternWords[i]!.some((w) => byWord.has(w))));
      for (const e of others) if (mayMention(e.content)) scanOthers(e);
    }
  }

  const limit = Math.max(5, Math.floor((options.maxMentionShare ?? DEFAULTS.autoLink.maxMentionShare) * corpusSize));
  const seen = new Set<string>();
  const links: Relation[] = [];
  for (const [pattern, by] of mentions) {
    if (by.size > limit) continue;
    const p = patterns[pattern]!;
    for (const from of by) {
      // An entry using its own name ("Dark River is a 2017 film…") speaks of itself, not of its namesakes.
      const ownName = p.entryIds.includes(from);
      for (const to of ownName ? [] : p.entryIds) {
        const key = `R${from}\u0000${to}`;
        if (from === to || seen.has(key) || (!focus.has(from) && !focus.has(to))) continue;
        seen.add(key);
        links.push({ type: 'RELATED', from, to, weight: 0.6, kind: 'mention' });
      }
      if (!focus.has(from)) continue;
      for (const to of p.codeIds) {
        const key = `C${from}\u0000${to}`;
        if (seen.has(key)) continue;
        seen.add(key);
        links.push({ type: 'REFERENCES_CODE', from, to, relevance: 0.5 });
      }
    }
  }
  return links.sort((a, b) => a.type.localeCompare(b.type) || a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}
