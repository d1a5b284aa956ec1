import { linkableName, outermost } from '../../ingest/autoLink.js';
import type { SnapshotContent } from '../snapshot/snapshotFile.js';
import { sortedIndexOf } from '../../kernel/sortedIndexOf.js';

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
  /** Entries by name key; built from `loaded` on the first write after a snapshot load (queries need only lookups). */
  private keyed: Map<string, string[]> | undefined = new Map();
  /** The index as a snapshot holds it: sorted keys, each with a range of entry slots. */
  private loaded: SortedNames | undefined;
  /**
   * The keys each entry is listed under, so a write can take them out again; derived from
   * `byKey` when a snapshot loaded it, on the first write (queries never need it).
   */
  private listedUnder: Map<string, string[]> | undefined = new Map();

  constructor(names: { id: string; title: string; aliases: string[] }[] = []) {
    this.upsert(names);
  }

  private get byKey(): Map<string, string[]> {
    if (!this.keyed) {
      const { keys, offsets, slots, ids } = this.loaded!;
      this.keyed = new Map(keys.map((key, i) => [key, Array.from(slots.subarray(offsets[i]!, offsets[i + 1]!), (slot) => ids[slot]!)]));
      this.loaded = undefined;
    }
    return this.keyed;
  }

  /** The entries under one key: a binary search of the loaded snapshot until a write builds the map. */
  private entriesUnder(key: string): string[] | undefined {
    if (this.keyed) return this.keyed.get(key);
    const { keys, offsets, slots, ids } = this.loaded!;
    const at = sortedIndexOf(keys, key);
    if (at < 0) return undefined;
    return Array.from(slots.subarray(offsets[at]!, offsets[at + 1]!), (slot) => ids[slot]!);
  }

  private get keysOf(): Map<string, string[]> {
    if (!this.listedUnder) {
      this.listedUnder = new Map();
      for (const [key, ids] of this.byKey) for (const id of ids) this.listedUnder.set(id, [...(this.listedUnder.get(id) ?? []), key]);
    }
    return this.listedUnder;
  }

  /** Sorted keys, and each key's entries as slots into one list of ids: one string list and two typed arrays to load. */
  snapshot(): SnapshotContent {
    const { keys, offsets, slots, ids } = this.loaded ?? sortedNames(this.byKey);
    return { arrays: { offsets, slots }, values: { keys, ids } };
  }

  static fromSnapshot({ arrays, values }: SnapshotContent): NameIndex {
    const index = new NameIndex();
    const [keys, ids] = [values.keys as string[], values.ids as string[]];
    const [offsets, slots] = [arrays.offsets as Int32Array, arrays.slots as Int32Array];
    if (offsets.length !== keys.length + 1 || offsets[keys.length] !== slots.length)
      throw new Error('the name index snapshot does not add up');
    index.loaded = { keys, offsets, slots, ids };
    index.keyed = undefined;
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
          const ids = this.entriesUnder(key);
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

interface SortedNames {
  keys: string[];
  /** Key i's entries are `slots[offsets[i]]` up to `slots[offsets[i + 1]]`, indices into `ids`. */
  offsets: Int32Array;
  slots: Int32Array;
  ids: string[];
}

function sortedNames(byKey: Map<string, string[]>): SortedNames {
  // Sorted by UTF-16 code units, as `<` compares them in the binary search.
  const keys = [...byKey.keys()].sort();
  const slotOf = new Map<string, number>();
  const ids: string[] = [];
  const offsets = new Int32Array(keys.length + 1);
  const slots: number[] = [];
  keys.forEach((key, i) => {
    for (const id of byKey.get(key)!) {
      let slot = slotOf.get(id);
      if (slot === undefined) slotOf.set(id, (slot = ids.push(id) - 1));
      slots.push(slot);
    }
    offsets[i + 1] = slots.length;
  });
  return { keys, offsets, slots: Int32Array.from(slots), ids };
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
