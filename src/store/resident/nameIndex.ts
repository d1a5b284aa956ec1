import { linkableName, outermost } from '../../ingest/autoLink.js';
import type { SnapshotContent } from '../snapshot/snapshotFile.js';

/** Longest name, in words, that a task can mention. */
const MAX_NAME_WORDS = 12;
/** A name shared by more entries than this says too little about which one is meant. */
const MAX_ENTRIES_PER_NAME = 10;

const words = (text: string) => text.split(/[^\p{L}\p{N}_]+/u).filter(Boolean);

/**
 * Every entry title and alias, keyed by its words: case-folded, or exact for acronyms and short
 * names (the rules of ingest-time auto-linking). A task is matched by looking up its word n-grams,
 * so matching costs O(words in the task), whatever the number of entries.
 */
export class NameIndex {
  private byKey = new Map<string, string[]>();
  /**
   * The keys each entry is listed under, so a write can take them out again; derived from
   * `byKey` when a snapshot loaded it, on the first write (queries never need it).
   */
  private listedUnder: Map<string, string[]> | undefined = new Map();

  constructor(names: { id: string; title: string; aliases: string[] }[] = []) {
    this.upsert(names);
  }

  private get keysOf(): Map<string, string[]> {
    if (!this.listedUnder) {
      this.listedUnder = new Map();
      for (const [key, ids] of this.byKey) for (const id of ids) this.listedUnder.set(id, [...(this.listedUnder.get(id) ?? []), key]);
    }
    return this.listedUnder;
  }

  /** Every name key and the entries under it, for a snapshot file. */
  snapshot(): SnapshotContent {
    return { arrays: {}, values: { keys: [...this.byKey.keys()], ids: [...this.byKey.values()] } };
  }

  static fromSnapshot({ values }: SnapshotContent): NameIndex {
    const index = new NameIndex();
    const ids = values.ids as string[][];
    index.byKey = new Map((values.keys as string[]).map((key, i) => [key, ids[i]!]));
    index.listedUnder = undefined;
    return index;
  }

  /** Adds entries' names, replacing whatever names the same ids had. */
  upsert(names: { id: string; title: string; aliases: string[] }[]): void {
    this.remove(names.map((n) => n.id));
    for (const n of names) {
      const keys: string[] = [];
      for (const raw of new Set([n.title, ...n.aliases])) {
        const name = linkableName(raw);
        if (!name) continue;
        const w = words(name.text);
        if (w.length === 0 || w.length > MAX_NAME_WORDS) continue;
        const key = name.exact ? `E${w.join(' ')}` : `F${w.join(' ').toLowerCase()}`;
        const ids = this.byKey.get(key);
        if (!ids) this.byKey.set(key, [n.id]);
        else if (!ids.includes(n.id)) ids.push(n.id);
        keys.push(key);
      }
      this.keysOf.set(n.id, keys);
    }
  }

  remove(ids: Iterable<string>): void {
    for (const id of ids) {
      for (const key of this.keysOf.get(id) ?? []) {
        const left = (this.byKey.get(key) ?? []).filter((x) => x !== id);
        if (left.length > 0) this.byKey.set(key, left);
        else this.byKey.delete(key);
      }
      this.keysOf.delete(id);
    }
  }

  /** Every place in `text` where a name stands: the entry, its word span, its length in words. */
  occurrences(text: string): NameOccurrence[] {
    const w = words(text);
    const out: NameOccurrence[] = [];
    for (let i = 0; i < w.length; i++) {
      for (let n = Math.min(MAX_NAME_WORDS, w.length - i); n >= 1; n--) {
        const span = w.slice(i, i + n).join(' ');
        for (const key of [`E${span}`, `F${span.toLowerCase()}`]) {
          const ids = this.byKey.get(key);
          if (!ids || ids.length > MAX_ENTRIES_PER_NAME) continue;
          for (const id of ids) out.push({ id, start: i, end: i + n, words: n, mention: span });
        }
      }
    }
    return out;
  }

  /**
   * Entries named in `text`, longest mention first, each with the words that named it. A name
   * that stands only inside a longer name also found ("John Middleton" in "John Middleton Murry",
   * "Heart" in "The Heart of Doreon") does not count: the longer name says which entry is meant.
   * `counts` says which entries may name, and so hide, anything (e.g. those the filter lets through).
   */
  match(text: string, counts: (id: string) => boolean = () => true): { id: string; mention: string; words: number }[] {
    return namedEntries(this.occurrences(text), counts);
  }

  /** `match` on occurrences already found (so that a caller can stop early when there are none). */
  matchOccurrences(occurrences: NameOccurrence[], counts: (id: string) => boolean): { id: string; mention: string; words: number }[] {
    return namedEntries(occurrences, counts);
  }
}

/** `NameIndex.match` on occurrences already found. */
function namedEntries(occurrences: NameOccurrence[], counts: (id: string) => boolean): { id: string; mention: string; words: number }[] {
  const found = new Map<string, { id: string; mention: string; words: number }>();
  for (const o of outermost(occurrences.filter((o) => counts(o.id)))) {
    const seen = found.get(o.id);
    if (!seen || seen.words < o.words) found.set(o.id, { id: o.id, mention: o.mention, words: o.words });
  }
  return [...found.values()].sort((a, b) => b.words - a.words || a.id.localeCompare(b.id));
}

export interface NameOccurrence {
  id: string;
  /** Word offsets, half-open. */
  start: number;
  end: number;
  words: number;
  mention: string;
}
