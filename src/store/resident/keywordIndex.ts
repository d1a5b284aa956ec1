import type { LaterSections, PositionedSection, SnapshotArray, SnapshotContent } from '../snapshot/snapshotFile.js';
import { grown } from './grown.js';
import { TopK } from '../../kernel/topK.js';
import { analyze } from '../../text/analyze.js';
import { slotByKey, slotsSortedByKey } from '../../kernel/sortedIndexOf.js';
import { matchCountTop, TermBitsets, type CountedTerm } from './matchCountTop.js';

const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** One term's postings: the slots of the documents holding it and how often, in typed arrays. */
class Postings {
  slots = new Int32Array(4);
  counts = new Uint16Array(4);
  n = 0;
  push(slot: number, count: number): void {
    if (this.n === this.slots.length) {
      this.slots = grown(this.slots, this.n + 1, (k) => new Int32Array(k));
      this.counts = grown(this.counts, this.n + 1, (k) => new Uint16Array(k));
    }
    this.slots[this.n] = slot;
    this.counts[this.n++] = count;
  }

  /** Gives back the room that doubling left unused (after a bulk load, before the writes that follow it). */
  trim(): void {
    if (this.slots.length === this.n) return;
    this.slots = this.slots.slice(0, this.n);
    this.counts = this.counts.slice(0, this.n);
  }
}

/** Slots scored together by `KeywordIndex.search`: their scores and norms (12 bytes a slot) fit in a core's L2 cache. */
const SCORED_BLOCK = 1 << 15;

/** Postings a term has before it is also listed per group: rarer terms cost little to read whole. */
const GROUP_LISTS_FROM = 64;

/**
 * One term's postings in slot order and, once it has GROUP_LISTS_FROM of them, again as a list per
 * group (memory core). A search scoped to a few groups reads only their lists; one over most of
 * the index reads the whole list in one pass. Where the groups' documents interleave (round-robin
 * over 8 cores, as in the bench), reading 8 lists touches every cache line of the scores 8 times:
 * an unscoped search went from ~1.9 to ~3.4 ms when the postings were kept per group only. Scoped
 * to 4 of 8 cores at 100K entries, the lists cut BM25 from ~2.7 to ~1.5 ms, to 1 of 8 from ~2.5 to
 * ~1.0 ms. Rare terms (most of a vocabulary) are listed once and postings are trimmed after a
 * load: the index of the 100K bench texts takes 188 MB, against 183 MB with one list a term.
 */
class TermPostings {
  readonly all = new Postings();
  private byGroup: Map<number, Postings> | undefined;

  /** A term's postings as a snapshot held them: views, copied only when a write appends. */
  static of(
    all: { slots: Int32Array; counts: Uint16Array },
    byGroup: { group: number; slots: Int32Array; counts: Uint16Array }[] | undefined,
  ): TermPostings {
    const postings = new TermPostings();
    Object.assign(postings.all, { ...all, n: all.slots.length });
    if (byGroup)
      postings.byGroup = new Map(
        byGroup.map(({ group, slots, counts }) => [group, Object.assign(new Postings(), { slots, counts, n: slots.length })]),
      );
    return postings;
  }

  /** The group lists, for a snapshot. */
  groupLists(): [number, Postings][] | undefined {
    return this.byGroup && [...this.byGroup];
  }

  /** `groupOf`: each slot's group. */
  push(slot: number, count: number, groupOf: Int32Array): void {
    this.all.push(slot, count);
    if (this.byGroup) this.listOf(groupOf[slot]!).push(slot, count);
    else if (this.all.n === GROUP_LISTS_FROM) {
      this.byGroup = new Map();
      for (let i = 0; i < this.all.n; i++) this.listOf(groupOf[this.all.slots[i]!]!).push(this.all.slots[i]!, this.all.counts[i]!);
    }
  }

  private listOf(group: number): Postings {
    let list = this.byGroup!.get(group);
    if (!list) this.byGroup!.set(group, (list = new Postings()));
    return list;
  }

  /** The lists of the groups `member` marks; undefined for a term not listed per group. */
  ofGroups(member: Uint8Array): Postings[] | undefined {
    if (!this.byGroup) return undefined;
    const out: Postings[] = [];
    for (const [group, list] of this.byGroup) if (member[group] === 1) out.push(list);
    return out;
  }

  trim(): void {
    this.all.trim();
    for (const list of this.byGroup?.values() ?? []) list.trim();
  }
}

/**
 * Counts by integer key: a sorted table as a snapshot held it (read by binary search, never
 * parsed into a Map: the 100K bench texts have ~1M (core, term) pairs), and a Map of what writes
 * changed since.
 */
class CountTable {
  private readonly changed = new Map<number, number>();
  constructor(
    private readonly baseKeys: Float64Array = new Float64Array(0),
    private readonly baseCounts: Uint32Array = new Uint32Array(0),
  ) {}

  get(key: number): number {
    const changed = this.changed.get(key);
    if (changed !== undefined) return changed;
    const keys = this.baseKeys;
    let lo = 0;
    for (let hi = keys.length; lo < hi;) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return keys[lo] === key ? this.baseCounts[lo]! : 0;
  }

  add(key: number, delta: number): void {
    this.changed.set(key, this.get(key) + delta);
  }

  /** Every non-zero count, keys sorted. */
  sorted(): { keys: Float64Array; counts: Uint32Array } {
    const all = new Map<number, number>();
    this.baseKeys.forEach((key, i) => all.set(key, this.baseCounts[i]!));
    for (const [key, count] of this.changed) all.set(key, count);
    const keys = Float64Array.from([...all].filter(([, count]) => count > 0).map(([key]) => key)).sort();
    return { keys, counts: Uint32Array.from(keys, (key) => all.get(key)!) };
  }
}

/** Flat lists (CSR): list i is `values[start[i] … start[i + 1]]`. */
const listAt = <A extends Int32Array | Uint32Array | Uint16Array>(values: A, start: Uint32Array, i: number): A =>
  values.subarray(start[i]!, start[i + 1]!) as A;

/** `lists` as one flat array of `make`'s type and their starts. */
function flatten<A extends Int32Array | Uint32Array | Uint16Array>(
  lists: readonly ArrayLike<number>[],
  make: (n: number) => A,
): { values: A; start: Uint32Array } {
  const start = new Uint32Array(lists.length + 1);
  lists.forEach((list, i) => (start[i + 1] = start[i]! + list.length));
  const values = make(start[lists.length]!);
  lists.forEach((list, i) => values.set(list, start[i]!));
  return { values, start };
}

/** A section of `later` to read where it lies; throws when there is none. */
function positioned(later: LaterSections | undefined, name: string): PositionedSection {
  const section = later?.positioned(name);
  if (!section) throw new Error(`the snapshot lacks ${name}`);
  return section;
}

/** What a snapshot holds of the postings and documents, as flat lists; see KeywordIndex.snapshot. */
interface FlatIndex {
  /** Term t's postings are list t of `slots`/`counts`; its group lists are lists termLists[t] … termLists[t + 1] of `listSlots`/`listCounts`. */
  postings?: {
    start: Uint32Array;
    slots: Int32Array;
    counts: Uint16Array;
    termLists: Uint32Array;
    listGroup: Uint32Array;
    listStart: Uint32Array;
    listSlots: Int32Array;
    listCounts: Uint16Array;
  };
  /**
   * Slot i's distinct terms and their counts are list i: in memory, or left in the snapshot file
   * (positioned) until a write needs them all (see KeywordIndex.settled).
   */
  documents: { start: Uint32Array; terms: Uint32Array | PositionedSection; counts: Uint16Array | PositionedSection };
}

/** The snapshot sections a loaded index reads where they lie (see KeywordIndex.fromSnapshot). */
export const KEYWORD_LATER_SECTIONS = ['documentTerms', 'documentCounts'] as const;

/** A document: its id, its text, and the group (memory core) whose statistics a scoped search uses. */
export interface KeywordDocument {
  id: string;
  text: string;
  group?: string;
}

/** Groups are at most 2^26 and terms fewer than 2^26: a (group, term) pair is one safe integer key. */
const GROUP_KEY = 2 ** 26;

/** Scores sampled to set the bar of a top-k selection (topSlots). */
const BAR_SAMPLE = 1024;

/**
 * A search that would read at least this many postings, of which at least two terms are common
 * (in 1 of COMMON_SHARE documents or more), counts matches on bitsets (matchCountTop) rather
 * than reading every posting; it scores at most 1 document per PRUNED_BUDGET postings, or reads
 * them all after all.
 */
const PRUNE_FROM_POSTINGS = 1 << 16;
const COMMON_SHARE = 32;
const PRUNED_BUDGET = 8;

/**
 * BM25 over every entry's title, aliases and content, in memory. LanceDB's full-text search costs
 * ~9 ms a query at 100K entries and its index must be refreshed after every write (22 s of a 55 s
 * ingest of 100K entries); here a write adds its own documents only, and a query scores the
 * postings of its few terms in typed arrays. Loaded from the table's `search_text` column, then
 * kept in step by this process's writes (Residents). Removed documents leave dead postings
 * behind until they outnumber the live ones, when the postings are rebuilt from the live documents.
 *
 * A search scoped to some groups (the memory cores a query filters to) weighs its terms by their
 * document frequency within those groups, as an index of just those cores would: a word common in
 * one core and rare elsewhere, such as a speaker's name in a conversation or a project's own
 * jargon, says little inside that core. Measured on LoCoMo (one core per conversation, queries
 * scoped to theirs): context R@5/10 58.8/72.6 → 61.0/74.3.
 */
export class KeywordIndex {
  /**
   * Values the query path derives from the whole index and keeps with it, snapshot included (the
   * relevance floor: ~50 ms at 100K entries, which a fresh process would pay on its first query).
   * The index does not know what they mean; whoever derives one decides when it is stale.
   */
  readonly derived = new Map<string, unknown>();
  /** Term id by term; built from the snapshot's terms when a write first needs it after a load. */
  private termIdMap: Map<string, number> | undefined = new Map();
  /**
   * A snapshot's terms, by id, and their ids ordered by term: a query's few lookups by binary
   * search, rather than a map of every term made at load (~0.6 s of a fresh process's first
   * query at 1M entries, whose vocabulary is ~1M terms).
   */
  private loadedTerms: { terms: string[]; order: Uint32Array } | undefined;
  /** By term; a term a snapshot loaded is undefined until first touched, then built from `flat` (termPostings). */
  private postings: (TermPostings | undefined)[] = [];
  /** The postings and documents a snapshot loaded, in flat lists (see `snapshot`). */
  private flat: FlatIndex | undefined;
  /** Per term: live documents holding it. */
  private documentFrequency: number[] = [];
  private readonly groupIds = new Map<string, number>();
  /** Per group: live documents. */
  private groupSizes: number[] = [];
  /** Per (group, term) pair, key group·2^26 + term: live documents of the group holding the term. */
  private groupFrequency = new CountTable();
  /** Per slot: its document's group. */
  private groupOf = new Int32Array(0);
  /** Slot by entry id; built from `idOrder` when a write first needs it after a snapshot load. */
  private slotMap: Map<string, number> | undefined = new Map();
  /**
   * A snapshot's live slots ordered by id: a few lookups (scoreDocuments) by binary search, rather
   * than a map of every id made at load (~800 ms of a fresh process's first query at 1M entries).
   */
  private idOrder: Uint32Array | undefined;
  /** Live documents. */
  private live = 0;
  /** Per slot: the entry id (undefined once removed), its length in terms, its distinct terms and counts. */
  private ids: (string | undefined)[] = [];
  private lengths = new Uint32Array(0);
  /** By slot; holes for the documents a snapshot loaded (see `documentOf`). */
  private readonly documentTerms: (Uint32Array | undefined)[] = [];
  private readonly documentCounts: (Uint16Array | undefined)[] = [];
  private totalLength = 0;
  private livePostings = 0;
  private deadPostings = 0;
  /** Per slot, BM25's length normalisation k1·(1 − b + b·length/average), for the average it was computed at (0 when removed). */
  private lengthNorms = new Float32Array(0);
  private normsForAverage = Number.NaN;
  /** Bitsets of the common terms searches met (matchCountTop), kept up to date from the postings. */
  private readonly termBits = new TermBitsets();
  /** The scope of the last search that counted matches, as bits (scopeBits); the key says for which groups, slots and live documents. */
  private lastScope: { key: string; bits: Int32Array } | undefined;
  /** Postings a search reads before it counts matches instead (PRUNE_FROM_POSTINGS; tests set it, Infinity never counts). */
  pruneFromPostings = PRUNE_FROM_POSTINGS;
  /** Postings per document it may score then before it reads them all after all (PRUNED_BUDGET; tests set 0, no limit). */
  prunedBudget = PRUNED_BUDGET;
  /** Scores per slot during a search, kept between searches (cleared through the touched list). */
  private scratch = new Float64Array(0);

  constructor(documents: Iterable<KeywordDocument> = []) {
    this.upsert(documents);
    for (const postings of this.postings) postings?.trim();
  }

  get size(): number {
    return this.live;
  }

  private get termIds(): Map<string, number> {
    if (!this.termIdMap) {
      const map = new Map<string, number>();
      const { terms } = this.loadedTerms!;
      for (let id = 0; id < terms.length; id++) map.set(terms[id]!, id);
      [this.termIdMap, this.loadedTerms] = [map, undefined];
    }
    return this.termIdMap;
  }

  private termIdOf(term: string): number | undefined {
    if (this.termIdMap) return this.termIdMap.get(term);
    const { terms, order } = this.loadedTerms!;
    return slotByKey(order, (id) => terms[id]!, term);
  }

  private get slotOf(): Map<string, number> {
    if (!this.slotMap) {
      this.slotMap = new Map();
      this.ids.forEach((id, slot) => id !== undefined && this.slotMap!.set(id, slot));
      this.idOrder = undefined;
    }
    return this.slotMap;
  }

  private slotOfId(id: string): number | undefined {
    if (this.slotMap) return this.slotMap.get(id);
    return slotByKey(this.idOrder!, (slot) => this.ids[slot]!, id);
  }

  /** Adds documents, replacing any with the same id. */
  upsert(documents: Iterable<KeywordDocument>): void {
    for (const { id, text, group = '' } of documents) {
      if (this.slotOf.has(id)) this.remove([id]);
      const terms = analyze(text);
      const termIds = new Uint32Array(terms.length);
      terms.forEach((t, i) => {
        let termId = this.termIds.get(t);
        if (termId === undefined) {
          termId = this.postings.length;
          this.termIds.set(t, termId);
          this.postings.push(new TermPostings());
          this.documentFrequency.push(0);
        }
        termIds[i] = termId;
      });
      // Distinct terms and their counts: sorted, then runs counted.
      termIds.sort();
      let distinct = 0;
      const counts = new Uint16Array(termIds.length);
      for (let i = 0; i < termIds.length; i++) {
        if (i > 0 && termIds[i] === termIds[i - 1]) counts[distinct - 1] = Math.min(counts[distinct - 1]! + 1, 65_535);
        else {
          termIds[distinct] = termIds[i]!;
          counts[distinct++] = 1;
        }
      }
      const slot = this.ids.length;
      this.slotOf.set(id, slot);
      this.ids.push(id);
      this.live++;
      this.lengths = grown(this.lengths, slot + 1, (n) => new Uint32Array(n));
      this.lengths[slot] = terms.length;
      let groupId = this.groupIds.get(group);
      if (groupId === undefined) {
        groupId = this.groupSizes.length;
        if (groupId >= GROUP_KEY) throw new RangeError(`a keyword index holds at most ${GROUP_KEY} groups`);
        this.groupIds.set(group, groupId);
        this.groupSizes.push(0);
      }
      this.groupOf = grown(this.groupOf, slot + 1, (n) => new Int32Array(n));
      this.groupOf[slot] = groupId;
      this.groupSizes[groupId]!++;
      this.documentTerms.push(termIds.slice(0, distinct));
      this.documentCounts.push(counts.slice(0, distinct));
      for (let i = 0; i < distinct; i++) {
        this.termPostings(termIds[i]!).push(slot, counts[i]!, this.groupOf);
        this.documentFrequency[termIds[i]!]!++;
        this.groupFrequency.add(groupId * GROUP_KEY + termIds[i]!, 1);
      }
      this.totalLength += terms.length;
      this.livePostings += distinct;
    }
    this.normsForAverage = Number.NaN;
  }

  remove(ids: Iterable<string>): void {
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      const { terms } = this.documentOf(slot);
      const groupId = this.groupOf[slot]!;
      this.groupSizes[groupId]!--;
      for (const termId of terms) {
        this.documentFrequency[termId]!--;
        this.groupFrequency.add(groupId * GROUP_KEY + termId, -1);
      }
      this.totalLength -= this.lengths[slot]!;
      this.livePostings -= terms.length;
      this.deadPostings += terms.length;
      this.slotOf.delete(id);
      this.live--;
      this.ids[slot] = undefined;
      this.documentTerms[slot] = undefined;
      this.documentCounts[slot] = undefined;
      this.normsForAverage = Number.NaN;
    }
    if (this.deadPostings > this.livePostings) this.compactPostings();
  }

  /** Term `termId`'s postings, built from the snapshot's flat lists when first asked. */
  private termPostings(termId: number): TermPostings {
    const held = this.postings[termId];
    if (held) return held;
    const flat = this.flat!.postings!;
    const lists: { group: number; slots: Int32Array; counts: Uint16Array }[] = [];
    for (let i = flat.termLists[termId]!; i < flat.termLists[termId + 1]!; i++) {
      lists.push({
        group: flat.listGroup[i]!,
        slots: listAt(flat.listSlots, flat.listStart, i),
        counts: listAt(flat.listCounts, flat.listStart, i),
      });
    }
    const all = { slots: listAt(flat.slots, flat.start, termId), counts: listAt(flat.counts, flat.start, termId) };
    return (this.postings[termId] = TermPostings.of(all, lists.length > 0 ? lists : undefined));
  }

  /** A live slot's distinct terms (sorted) and their counts. */
  private documentOf(slot: number): { terms: Uint32Array; counts: Uint16Array } {
    const terms = this.documentTerms[slot];
    if (terms) return { terms, counts: this.documentCounts[slot]! };
    const { documents } = this.flat!;
    if (documents.terms instanceof Uint32Array && documents.counts instanceof Uint16Array)
      return { terms: listAt(documents.terms, documents.start, slot), counts: listAt(documents.counts, documents.start, slot) };
    // Left in the file: this document's two ranges, read from the page cache.
    const from = documents.start[slot]!;
    const n = documents.start[slot + 1]! - from;
    const read = { terms: new Uint32Array(n), counts: new Uint16Array(n) };
    (documents.terms as PositionedSection).readInto(read.terms, from);
    (documents.counts as PositionedSection).readInto(read.counts, from);
    return read;
  }

  /** A live slot's number of distinct terms, without its terms. */
  private distinctTerms(slot: number): number {
    const terms = this.documentTerms[slot];
    if (terms) return terms.length;
    const { start } = this.flat!.documents;
    return start[slot + 1]! - start[slot]!;
  }

  /** The snapshot's sections this index reads where they lie (documents' terms and counts), while it does. */
  private later: LaterSections | undefined;
  /** The documents' terms and counts, read whole (settled). */
  private documentsRead: Promise<void> | undefined;
  /** Resolves to why the sections left in the file are not sound (checked, or read whole), or undefined. */
  private laterChecked: { done: Promise<string | undefined>; report: (problem: string | undefined) => void } | undefined;

  /**
   * Reads the documents' terms and counts whole, if a snapshot left them in its file; resolves
   * once they are in. A write awaits it (remove and compaction read every document it touches),
   * and a snapshot is written only after it. A search never needs it.
   */
  settled(): Promise<void> {
    const later = this.later;
    if (!later || !this.flat) return Promise.resolve();
    return (this.documentsRead ??= Promise.all(KEYWORD_LATER_SECTIONS.map((name) => later.read(name))).then(
      ([terms, counts]) => {
        this.flat!.documents = { ...this.flat!.documents, terms: terms as Uint32Array, counts: counts as Uint16Array };
        this.later = undefined;
        later.release();
        this.laterChecked?.report(undefined);
      },
      (e: unknown) => {
        this.laterChecked?.report((e as Error).message);
        throw e;
      },
    ));
  }

  /**
   * Checks the sections left in the snapshot file against their checksums, a chunk at a time
   * (nothing held); resolves to why they are not sound, or undefined. Started by the owner once
   * the process has had a moment (Residents), as a snapshot's later parts are.
   */
  checkLaterParts(): Promise<string | undefined> {
    const later = this.later;
    if (!later || !this.laterChecked) return Promise.resolve(undefined);
    const check = this.laterChecked;
    void Promise.all(KEYWORD_LATER_SECTIONS.map((name) => later.positioned(name)?.verify())).then(
      () => check.report(undefined),
      // Read whole meanwhile (and checked then), the file was given up: that outcome stands.
      (e: unknown) => this.later === later && check.report((e as Error).message),
    );
    return check.done;
  }

  /** Resolves, once the sections left in the file were checked or read (without asking for it), to why they are not sound. */
  laterPartsChecked(): Promise<string | undefined> {
    return this.laterChecked?.done ?? Promise.resolve(undefined);
  }

  /** Gives up the snapshot file this index reads from (on close). */
  release(): void {
    this.later?.release();
    this.later = undefined;
  }

  /**
   * Everything held, for a snapshot file: postings and documents as flat lists, the (group, term)
   * counts as a sorted table, ids and terms as arrays of strings. Dead postings are kept as they
   * are. `fromSnapshot` takes it back without analysing a text or building a list.
   */
  snapshot(): SnapshotContent {
    const terms: string[] = this.loadedTerms?.terms ?? new Array<string>(this.postings.length);
    if (!this.loadedTerms) for (const [term, id] of this.termIds) terms[id] = term;
    const postings = this.postings.map((_, termId) => this.termPostings(termId));
    const all = postings.map((p) => p.all);
    const groupLists = postings.map((p) => p.groupLists() ?? []);
    const termLists = new Uint32Array(postings.length + 1);
    groupLists.forEach((lists, t) => (termLists[t + 1] = termLists[t]! + lists.length));
    const lists = groupLists.flat();
    const live = (slot: number) => (this.ids[slot] === undefined ? undefined : this.documentOf(slot));
    const documents = this.ids.map((_, slot) => live(slot));
    const docTerms = flatten(
      documents.map((d) => d?.terms ?? []),
      (n) => new Uint32Array(n),
    );
    const allSlots = flatten(
      all.map((p) => p.slots.subarray(0, p.n)),
      (n) => new Int32Array(n),
    );
    const listSlots = flatten(
      lists.map(([, p]) => p.slots.subarray(0, p.n)),
      (n) => new Int32Array(n),
    );
    const { keys, counts } = this.groupFrequency.sorted();
    const groups: string[] = new Array<string>(this.groupSizes.length);
    for (const [group, id] of this.groupIds) groups[id] = group;
    return {
      arrays: {
        postingStart: allSlots.start,
        postingSlots: allSlots.values,
        postingCounts: flatten(
          all.map((p) => p.counts.subarray(0, p.n)),
          (n) => new Uint16Array(n),
        ).values,
        termLists,
        listGroup: Uint32Array.from(lists, ([group]) => group),
        listStart: listSlots.start,
        listSlots: listSlots.values,
        listCounts: flatten(
          lists.map(([, p]) => p.counts.subarray(0, p.n)),
          (n) => new Uint16Array(n),
        ).values,
        documentStart: docTerms.start,
        documentTerms: docTerms.values,
        documentCounts: flatten(
          documents.map((d) => d?.counts ?? []),
          (n) => new Uint16Array(n),
        ).values,
        documentFrequency: Uint32Array.from(this.documentFrequency),
        groupSizes: Uint32Array.from(this.groupSizes),
        groupOf: this.groupOf.slice(0, this.ids.length),
        lengths: this.lengths.slice(0, this.ids.length),
        groupFrequencyKeys: keys,
        groupFrequencyCounts: counts,
        idOrder: this.idOrder ?? this.liveSlotsById(),
        termOrder: this.loadedTerms?.order ?? slotsSortedByKey(this.termIds.values(), (id) => terms[id]!),
      },
      values: {
        terms,
        groups,
        ids: this.ids.map((id) => id ?? null),
        totalLength: this.totalLength,
        livePostings: this.livePostings,
        deadPostings: this.deadPostings,
        derived: Object.fromEntries(this.derived),
      },
    };
  }

  /**
   * An index as `snapshot` wrote it; its arrays become the index's own (copied when a write
   * outgrows them). The documents' terms and counts may come as `later` sections: they are then
   * read where they lie, a document at a time, until a write needs them whole (`settled`).
   */
  static fromSnapshot({ arrays, values, later }: SnapshotContent & { later?: LaterSections }): KeywordIndex {
    const a = <A extends SnapshotArray>(name: string): A => {
      const array = arrays[name];
      if (!array) throw new Error(`the snapshot lacks ${name}`);
      return array as A;
    };
    const index = new KeywordIndex();
    for (const [key, value] of Object.entries((values.derived ?? {}) as Record<string, unknown>)) index.derived.set(key, value);
    const terms = values.terms as string[];
    const termOrder = arrays.termOrder;
    // A snapshot from before terms were ordered in it: the map of every term, as then.
    if (termOrder instanceof Uint32Array && termOrder.length === terms.length)
      [index.termIdMap, index.loadedTerms] = [undefined, { terms, order: termOrder }];
    else terms.forEach((term, id) => index.termIds.set(term, id));
    index.postings = new Array<TermPostings | undefined>(terms.length).fill(undefined);
    index.flat = {
      postings: {
        start: a('postingStart'),
        slots: a('postingSlots'),
        counts: a('postingCounts'),
        termLists: a('termLists'),
        listGroup: a('listGroup'),
        listStart: a('listStart'),
        listSlots: a('listSlots'),
        listCounts: a('listCounts'),
      },
      documents: {
        start: a('documentStart'),
        terms: arrays.documentTerms ? a<Uint32Array>('documentTerms') : positioned(later, 'documentTerms'),
        counts: arrays.documentCounts ? a<Uint16Array>('documentCounts') : positioned(later, 'documentCounts'),
      },
    };
    if (!arrays.documentTerms) {
      index.later = later;
      let report!: (problem: string | undefined) => void;
      const done = new Promise<string | undefined>((resolve) => (report = resolve));
      index.laterChecked = { done, report };
    } else later?.release();
    index.documentFrequency = Array.from(a('documentFrequency'));
    (values.groups as string[]).forEach((group, id) => index.groupIds.set(group, id));
    index.groupSizes = Array.from(a('groupSizes'));
    index.groupFrequency = new CountTable(a<Float64Array>('groupFrequencyKeys'), a<Uint32Array>('groupFrequencyCounts'));
    index.groupOf = a<Int32Array<ArrayBuffer>>('groupOf');
    index.lengths = a<Uint32Array<ArrayBuffer>>('lengths');
    const ids = values.ids as (string | null | undefined)[];
    for (let slot = 0; slot < ids.length; slot++) {
      if (ids[slot] === null) ids[slot] = undefined;
      else index.live++;
    }
    index.ids = ids as (string | undefined)[];
    index.idOrder = a<Uint32Array>('idOrder');
    if (index.idOrder.length !== index.live) throw new Error('the keyword index snapshot does not add up');
    index.slotMap = undefined;
    index.documentTerms.length = index.ids.length;
    index.documentCounts.length = index.ids.length;
    index.totalLength = values.totalLength as number;
    index.livePostings = values.livePostings as number;
    index.deadPostings = values.deadPostings as number;
    return index;
  }

  /** Every live slot, ordered by its id (UTF-16 code units, as `<` compares). */
  private liveSlotsById(): Uint32Array {
    return slotsSortedByKey(this.slotOf.values(), (slot) => this.ids[slot]!);
  }

  /** Rebuilds the postings without removed documents (slots stay). */
  private compactPostings(): void {
    const postings = this.postings.map(() => new TermPostings());
    this.ids.forEach((id, slot) => {
      if (id === undefined) return;
      const { terms, counts } = this.documentOf(slot);
      terms.forEach((termId, i) => postings[termId]!.push(slot, counts[i]!, this.groupOf));
    });
    for (const p of postings) p.trim();
    this.postings = postings;
    this.termBits.clear();
    if (this.flat) this.flat = { ...this.flat, postings: undefined };
    this.deadPostings = 0;
  }

  /** The length normalisation of every slot at the current average length; 0 marks a removed document. */
  private norms(): Float32Array {
    const average = this.totalLength / this.live || 1;
    if (average === this.normsForAverage && this.lengthNorms.length >= this.ids.length) return this.lengthNorms;
    this.lengthNorms = new Float32Array(this.ids.length);
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (this.ids[slot] !== undefined) this.lengthNorms[slot] = BM25_K1 * (1 - BM25_B + (BM25_B * this.lengths[slot]!) / average);
    }
    this.normsForAverage = average;
    return this.lengthNorms;
  }

  /**
   * The best `limit` documents for the query's terms by BM25 (k1 1.2, b 0.75), best first (ties by
   * id), among those `accept` lets through: the limit counts only accepted documents. With `groups`,
   * only documents of those groups are scored, and term weights (idf) come from them alone; the
   * average document length stays the whole index's.
   */
  search(
    query: string,
    opts: { limit: number; groups?: readonly string[]; accept?: (id: string) => boolean },
  ): { id: string; score: number }[] {
    const scope = this.scope(opts.groups);
    const live = scope ? scope.size : this.live;
    if (live === 0 || opts.limit <= 0) return [];
    const norms = this.norms();
    if (this.scratch.length < this.ids.length) this.scratch = new Float64Array(Math.max(this.ids.length, this.scratch.length * 2));
    const scores = this.scratch;
    // A scope of at most half the documents reads its groups' lists; a wider one (and a rare term,
    // which has none) the whole list, the other groups weighing 0 rather than being skipped: where
    // the groups' documents interleave, a branch on it is a coin toss the CPU mispredicts.
    const byGroup = scope !== undefined && 2 * scope.size <= this.live;
    const terms = this.queryTerms(query, scope, live).map(({ termId, idf }) => {
      const postings = this.termPostings(termId);
      const lists = byGroup ? postings.ofGroups(scope.member) : undefined;
      return { termId, idf, lists: lists ?? [postings.all], weigh: lists ? undefined : scope?.member };
    });
    const pruned = this.countedSearch(terms, scope?.member, opts);
    if (pruned) return pruned;
    // Common terms touch much of the corpus: then a sweep over all slots beats keeping a touched list.
    const dense = terms.reduce((sum, t) => t.lists.reduce((s, list) => s + list.n, sum), 0) > this.ids.length / 4;
    const touched: number[] = [];
    const groupOf = this.groupOf;
    // Every list is in slot order, so the lists are read together a block of slots at a time: the
    // block's scores and norms stay in cache while each term adds to them, where a list after list
    // sweep reads them from memory once per term (a common term touches a third of the corpus). At
    // 1M entries, in a query whose vector scan had just filled the cache, that was ~12 ms of ~13.
    // (Terms in query order within a block, as before: a slot's score is summed in the same order.)
    const cursors = terms.flatMap(({ idf, lists, weigh }) =>
      lists.map(({ slots, counts, n }) => ({ idf, weigh, slots, counts, n, at: 0 })),
    );
    for (let blockEnd = SCORED_BLOCK, left = cursors.length; left > 0; blockEnd += SCORED_BLOCK) {
      for (const cursor of cursors) {
        const { idf, weigh, slots, counts, n } = cursor;
        if (cursor.at === n) continue;
        let i = cursor.at;
        for (; i < n; i++) {
          const slot = slots[i]!;
          if (slot >= blockEnd) break;
          const norm = norms[slot]!;
          if (norm === 0) continue; // removed
          const inScope = weigh === undefined ? 1 : weigh[groupOf[slot]!]!;
          const tf = counts[i]!;
          if (!dense && scores[slot] === 0 && inScope === 1) touched.push(slot);
          scores[slot]! += (inScope * idf * tf) / (tf + norm);
        }
        cursor.at = i;
        if (i === n) left--;
      }
    }
    const result = this.acceptedTop(opts, (k) =>
      this.topSlots(scores, k, dense ? undefined : touched).map((slot) => ({ slot, score: scores[slot]! })),
    )!;
    if (dense) scores.fill(0, 0, this.ids.length);
    else for (const slot of touched) scores[slot] = 0;
    return result;
  }

  /**
   * The best few first, then the filter on them; more only when the filter turned too many away.
   * A filter usually passes most of a scope (its cores are the scope), so the first round asks for
   * a quarter more than the limit: 4× cost ~0.35 ms more at 100K (a deeper heap above a lower
   * sampled bar). `topOf(k)`: the k best slots, best first, or undefined to give up (then so does this).
   */
  private acceptedTop(
    opts: { limit: number; accept?: (id: string) => boolean },
    topOf: (k: number) => { slot: number; score: number }[] | undefined,
  ): { id: string; score: number }[] | undefined {
    for (let k = opts.limit + (opts.limit >> 2) + 8; ; k *= 4) {
      const best = topOf(k);
      if (!best) return undefined;
      const result: { id: string; score: number }[] = [];
      for (const { slot, score } of best) {
        const id = this.ids[slot]!;
        if (opts.accept && !opts.accept(id)) continue;
        result.push({ id, score });
        if (result.length === opts.limit) break;
      }
      if (result.length >= opts.limit || best.length < k) return result;
    }
  }

  /**
   * `search` by counting matches (matchCountTop) when its terms would make it read many postings
   * and at least two are common; undefined when it does not apply or gives up (the caller then
   * reads every posting). Same result, scores to the bit.
   */
  private countedSearch(
    terms: readonly { termId: number; idf: number; lists: Postings[] }[],
    member: Uint8Array | undefined,
    opts: { limit: number; accept?: (id: string) => boolean },
  ): { id: string; score: number }[] | undefined {
    const slotCount = this.ids.length;
    const postings = terms.reduce((sum, t) => t.lists.reduce((s, list) => s + list.n, sum), 0);
    if (postings < this.pruneFromPostings) return undefined;
    const isCommon = (termId: number) => this.termPostings(termId).all.n * COMMON_SHARE >= slotCount;
    const common = terms.filter((t) => isCommon(t.termId)).length;
    if (common < 2 || common > 15) return undefined;
    const counted: CountedTerm[] = terms.map(({ termId, idf, lists }) => {
      if (!isCommon(termId)) return { idf, lists };
      const { all } = this.termPostings(termId);
      return { idf, bits: this.termBits.of(termId, all, slotCount, this.lengths), counts: all.counts };
    });
    const ids = this.ids;
    return this.acceptedTop(opts, (k) =>
      matchCountTop({
        terms: counted,
        k,
        norms: this.lengthNorms,
        normOf: (length) => Math.fround(BM25_K1 * (1 - BM25_B + (BM25_B * length) / this.normsForAverage)),
        slotCount,
        scope: this.scopeBits(member),
        tieWorse: (a, b) => ids[a]! > ids[b]!,
        budget: this.prunedBudget > 0 ? Math.floor(postings / this.prunedBudget) : Infinity,
      }),
    );
  }

  /** The live slots of the groups `member` marks (undefined: of all), a bit a slot; the last scope's kept until a write. */
  private scopeBits(member: Uint8Array | undefined): Int32Array {
    const key = `${this.ids.length} ${this.live} ${member?.join('') ?? 'all'}`;
    if (this.lastScope?.key === key) return this.lastScope.bits;
    const norms = this.norms();
    const bits = new Int32Array((this.ids.length + 31) >>> 5);
    for (let slot = 0; slot < this.ids.length; slot++)
      if (norms[slot] !== 0 && (member === undefined || member[this.groupOf[slot]!] === 1)) bits[slot >>> 5]! |= 1 << (slot & 31);
    this.lastScope = { key, bits };
    return bits;
  }

  /** BM25 of the given documents for the query (as `search` scores them), without a search: for candidates found otherwise. */
  scoreDocuments(query: string, ids: readonly string[], opts: { groups?: readonly string[] } = {}): Map<string, number> {
    const scope = this.scope(opts.groups);
    const live = scope ? scope.size : this.live;
    const out = new Map<string, number>();
    if (live === 0) return out;
    const norms = this.norms();
    const terms = this.queryTerms(query, scope, live);
    for (const id of ids) {
      const slot = this.slotOfId(id);
      if (slot === undefined) continue;
      // The document's distinct terms are sorted: each query term is a binary search.
      const { terms: docTerms, counts } = this.documentOf(slot);
      let score = 0;
      for (const { termId, idf } of terms) {
        let lo = 0;
        for (let hi = docTerms.length - 1; lo < hi;) {
          const mid = (lo + hi) >> 1;
          if (docTerms[mid]! < termId) lo = mid + 1;
          else hi = mid;
        }
        if (docTerms[lo] === termId) score += (idf * counts[lo]!) / (counts[lo]! + norms[slot]!);
      }
      if (score > 0) out.set(id, score);
    }
    return out;
  }

  /**
   * What relevance is judged by (retrieve/relevance.ts): the query's distinct terms with their
   * document frequency and idf in the scope (0 and 0 for a term no document holds), the scope's
   * size, and for each of `ids` the indices (into `terms`) of the terms its document holds.
   */
  termsMatched(
    query: string,
    ids: readonly string[],
    opts: { groups?: readonly string[] } = {},
  ): { terms: { term: string; df: number; idf: number }[]; size: number; matched: Map<string, number[]> } {
    const scope = this.scope(opts.groups);
    const size = scope ? scope.size : this.live;
    const terms = [...new Set(analyze(query))].map((term) => {
      const termId = this.termIdOf(term);
      const df =
        termId === undefined
          ? 0
          : scope
            ? scope.groups.reduce((sum, g) => sum + this.groupFrequency.get(g * GROUP_KEY + termId), 0)
            : this.documentFrequency[termId]!;
      return { term, termId, df, idf: df > 0 ? Math.log(1 + (size - df + 0.5) / (df + 0.5)) * (BM25_K1 + 1) : 0 };
    });
    const matched = new Map<string, number[]>();
    for (const id of ids) {
      const slot = this.slotOfId(id);
      if (slot === undefined || (scope && scope.member[this.groupOf[slot]!] !== 1)) continue;
      const { terms: docTerms } = this.documentOf(slot);
      const held: number[] = [];
      terms.forEach((t, i) => {
        if (t.df === 0) return;
        let lo = 0;
        for (let hi = docTerms.length - 1; lo < hi;) {
          const mid = (lo + hi) >> 1;
          if (docTerms[mid]! < t.termId!) lo = mid + 1;
          else hi = mid;
        }
        if (docTerms[lo] === t.termId) held.push(i);
      });
      if (held.length > 0) matched.set(id, held);
    }
    return { terms: terms.map(({ term, df, idf }) => ({ term, df, idf })), size, matched };
  }

  /**
   * The live documents holding every term of `text` (as analysed), found from the postings of its
   * rarest term: the entries whose text can contain `text` (auto-linking's candidates, read
   * instead of every entry). Undefined when `text` has no term to look up, or when more than `max`
   * documents hold them all.
   */
  holdingAll(text: string, max: number): string[] | undefined {
    const termIds: number[] = [];
    for (const t of new Set(analyze(text))) {
      const termId = this.termIdOf(t);
      if (termId === undefined || this.documentFrequency[termId] === 0) return [];
      termIds.push(termId);
    }
    if (termIds.length === 0) return undefined;
    termIds.sort((a, b) => this.documentFrequency[a]! - this.documentFrequency[b]!);
    if (this.documentFrequency[termIds[0]!]! > max * 4) return undefined;
    const { slots, n } = this.termPostings(termIds[0]!).all;
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const slot = slots[i]!;
      const id = this.ids[slot];
      if (id === undefined) continue; // a removed document's posting
      const { terms } = this.documentOf(slot);
      const holds = termIds.every((termId, k) => {
        if (k === 0) return true;
        let lo = 0;
        for (let hi = terms.length - 1; lo < hi;) {
          const mid = (lo + hi) >> 1;
          if (terms[mid]! < termId) lo = mid + 1;
          else hi = mid;
        }
        return terms[lo] === termId;
      });
      if (holds && out.push(id) > max) return undefined;
    }
    return out;
  }

  /**
   * How much likelier words are to meet in one document by chance because documents differ in
   * length (retrieve/relevance.ts): for h = 1 … `orders`, the mean of (distinct terms)^h over the
   * mean^h, across the live documents. 1 when every document holds as many distinct terms.
   */
  lengthDispersion(orders: number): number[] {
    const moments = new Float64Array(orders + 1);
    let n = 0;
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (this.ids[slot] === undefined) continue;
      const length = this.distinctTerms(slot);
      n++;
      for (let h = 1, power = length; h <= orders; h++, power *= length) moments[h]! += power;
    }
    const mean = n > 0 ? moments[1]! / n : 0;
    return Array.from({ length: orders }, (_, i) => (mean > 0 ? moments[i + 1]! / n / mean ** (i + 1) : 1));
  }

  /** The terms some live document holds. */
  vocabulary(): string[] {
    return [...this.termIds].filter(([, id]) => this.documentFrequency[id]! > 0).map(([term]) => term);
  }

  /**
   * The most a document could score for `query`: every distinct term at its full weight, and a term
   * no document holds at the weight of the rarest. A hit's score over it is the share of the query's
   * information the hit matches (how relevance is judged, retrieve/relevance.ts).
   */
  queryWeight(query: string, opts: { groups?: readonly string[] } = {}): number {
    const scope = this.scope(opts.groups);
    const live = scope ? scope.size : this.size;
    const rarest = Math.log(1 + (live + 0.5) / 0.5) * (BM25_K1 + 1);
    const present = this.queryTerms(query, scope, live);
    const missing = new Set(analyze(query)).size - present.length;
    return present.reduce((sum, t) => sum + t.idf, 0) + missing * rarest;
  }

  /** The query's distinct indexed terms with their idf (times k1 + 1) among the `live` documents of the scope. */
  private queryTerms(query: string, scope: ReturnType<KeywordIndex['scope']>, live: number): { termId: number; idf: number }[] {
    const out: { termId: number; idf: number }[] = [];
    for (const t of new Set(analyze(query))) {
      const termId = this.termIdOf(t);
      if (termId === undefined) continue;
      const n = scope
        ? scope.groups.reduce((sum, g) => sum + this.groupFrequency.get(g * GROUP_KEY + termId), 0)
        : this.documentFrequency[termId]!;
      if (n > 0) out.push({ termId, idf: Math.log(1 + (live - n + 0.5) / (n + 0.5)) * (BM25_K1 + 1) });
    }
    return out;
  }

  /** The groups a search is scoped to, or undefined when they hold every live document (the statistics are then the index's own). */
  private scope(groups: readonly string[] | undefined): { groups: number[]; member: Uint8Array; size: number } | undefined {
    if (!groups) return undefined;
    const ids = [...new Set(groups)].flatMap((g) => {
      const id = this.groupIds.get(g);
      return id === undefined ? [] : [id];
    });
    const size = ids.reduce((sum, g) => sum + this.groupSizes[g]!, 0);
    if (size === this.live && size > 0) return undefined;
    const member = new Uint8Array(this.groupSizes.length);
    for (const g of ids) member[g] = 1;
    return { groups: ids, member, size };
  }

  /**
   * The `k` best slots by score (ties: the smaller id first), best first, among `slots` (default:
   * every slot); only slots scoring above 0 count.
   */
  private topSlots(scores: Float64Array, k: number, slots?: readonly number[]): number[] {
    const ids = this.ids;
    const n = slots ? slots.length : ids.length;
    const top = new TopK(k, (a, b) => ids[a]! > ids[b]!);
    // Most slots cannot make the best k. A bar a little below the k-th best of a sample keeps the
    // heap to the few that might: at 100K documents and k 400, ~800 offers instead of ~2,600, each
    // costing as much as ~20 slots that fail the bar. When fewer than k clear it, the bar was too
    // high and the scan runs again without it.
    let bar = Number.MIN_VALUE; // only slots scoring above 0 count
    const rank = Math.ceil((2 * k * BAR_SAMPLE) / n) + 2;
    if (n >= 8 * BAR_SAMPLE && rank < BAR_SAMPLE) {
      const sampled = new Float64Array(BAR_SAMPLE);
      for (let j = 0; j < BAR_SAMPLE; j++)
        sampled[j] = scores[slots ? slots[Math.floor((j * n) / BAR_SAMPLE)]! : Math.floor((j * n) / BAR_SAMPLE)]!;
      bar = Math.max(bar, sampled.sort()[BAR_SAMPLE - rank]!);
    }
    for (;;) {
      let toBeat = bar;
      for (let i = 0; i < n; i++) {
        const slot = slots ? slots[i]! : i;
        const score = scores[slot]!;
        if (score >= toBeat && top.offer(slot, score) && top.full) toBeat = top.worstScore;
      }
      if (top.full || bar === Number.MIN_VALUE) return top.sorted();
      top.clear();
      bar = Number.MIN_VALUE;
    }
  }
}
