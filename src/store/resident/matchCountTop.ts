import { TopK } from '../../kernel/topK.js';

/** A term's postings in slot order: slots strictly increasing, the term's count in each. */
export interface SlotPostings {
  slots: Int32Array;
  counts: Uint16Array;
  n: number;
}

/**
 * A common term's postings as a bitset of slots, with a rank directory (`rank[w]`: bits set in
 * the words before word w), so that the count of the term in any slot is one lookup: the i-th set
 * bit is the i-th posting. `covered` postings are in it; `shortest[c]` is the length of the
 * shortest document holding the term c times (of removed documents too: the bound it gives only
 * loosens), which bounds what the term can add to any document's score.
 */
export interface TermBits {
  bits: Int32Array;
  rank: Int32Array;
  covered: number;
  shortest: number[];
}

/** Set bits of a 32-bit word. */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/**
 * The bitsets of common terms, built when a search first needs one and brought up to date from
 * the postings when it next does: a write only appends slots past every slot held (a term's list
 * grows at its end), so catching up sets the new bits and recounts the directory's tail. Rebuilt
 * postings (compaction) must `clear` them.
 */
export class TermBitsets {
  private readonly byTerm = new Map<number, TermBits>();

  clear(): void {
    this.byTerm.clear();
  }

  /** Term `termId`'s bits for its postings `all`, over `slotCount` slots; `lengths`: each slot's document length. */
  of(termId: number, all: SlotPostings, slotCount: number, lengths: Uint32Array): TermBits {
    let held = this.byTerm.get(termId);
    const words = (slotCount + 31) >>> 5;
    if (!held) this.byTerm.set(termId, (held = { bits: new Int32Array(words), rank: new Int32Array(words + 1), covered: 0, shortest: [] }));
    if (held.covered === all.n && held.bits.length >= words) return held;
    if (held.bits.length < words) {
      const bits = new Int32Array(Math.max(words, held.bits.length * 2));
      bits.set(held.bits);
      const rank = new Int32Array(bits.length + 1);
      rank.set(held.rank);
      held.bits = bits;
      held.rank = rank;
    }
    const { bits, rank } = held;
    const firstWord = held.covered < all.n ? all.slots[held.covered]! >>> 5 : bits.length;
    const shortest = held.shortest;
    for (let i = held.covered; i < all.n; i++) {
      const slot = all.slots[i]!;
      bits[slot >>> 5]! |= 1 << (slot & 31);
      const count = all.counts[i]!;
      const length = lengths[slot]!;
      if (!(shortest[count]! <= length)) shortest[count] = length;
    }
    // The new bits lie at or past `firstWord`: the directory before it stands.
    for (let w = Math.min(firstWord, bits.length); w < bits.length; w++) rank[w + 1] = rank[w]! + popcount(bits[w]!);
    held.covered = all.n;
    return held;
  }
}

/** A query term as matchCountTop takes it: a common term by its bits, a rarer one by its lists (of the scope's groups, or all). */
export type CountedTerm = { idf: number; bits: TermBits; counts: Uint16Array } | { idf: number; bits?: undefined; lists: SlotPostings[] };

/** Relative slack on the sums of upper bounds, far above the rounding of a few additions. */
const BOUND_SLACK = 1e-9;

/**
 * The exact `k` best slots by BM25 (as KeywordIndex.search sums them: each term's
 * `idf · count / (count + norm)` added in query order, from 0), best first, ties to `tieWorse`,
 * only slots in the scope, live (`norms` not 0) and scoring above 0 — without reading every
 * posting of the common terms. A document's score is at most the sum of the upper bounds of the
 * common terms it holds (the most each adds to any document: its count and length that give
 * the largest `idf · count / (count + norm)`), so the documents holding some
 * rarer term are scored first, then those holding all the common terms, then all but one, and so
 * on: once the k-th best score so far is above the sum of the `m` largest bounds, no document
 * holding `m` or fewer common terms can rank (a tie with the k-th would need equality, which the
 * strict test keeps). Which common terms each slot holds is counted 32 slots at a time on the
 * bitsets; each document scored reads its counts through the bitsets' rank directories.
 *
 * Undefined when it would score more than `budget` documents: the caller reads every posting.
 * In the bench's 1M store (terms of a 120-word vocabulary, each in a third of the documents) a
 * query of 5 such terms scores the ~45K documents holding 4 or 5 of them, against ~835K postings.
 */
export function matchCountTop(opts: {
  terms: readonly CountedTerm[];
  k: number;
  norms: Float32Array;
  /** A document length's norm, as `norms` holds it. */
  normOf: (length: number) => number;
  slotCount: number;
  /** Per group: 1 when in the scope; undefined when every group is. */
  member: Uint8Array | undefined;
  groupOf: Int32Array;
  tieWorse: (a: number, b: number) => boolean;
  budget: number;
}): { slot: number; score: number }[] | undefined {
  const { terms, norms, member, groupOf, slotCount } = opts;
  const common = terms.flatMap((t) => (t.bits ? [t] : []));
  const q = common.length;
  const words = (slotCount + 31) >>> 5;
  const top = new TopK(opts.k, opts.tieWorse);
  const inScope = (slot: number) => norms[slot] !== 0 && (member === undefined || member[groupOf[slot]!] === 1);
  // Scores `slots` (increasing) term by term, each term's counts read in one sweep; `rareCount(i, j)`
  // is the count of rarer term i in slots[j]. Sums in query order, as the search adds them.
  const scoreAll = (slots: Int32Array, rareCount?: (i: number, j: number) => number): Float64Array => {
    const scores = new Float64Array(slots.length);
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i]!;
      const idf = t.idf;
      if (t.bits) {
        const { bits, rank } = t.bits;
        const counts = t.counts;
        for (let j = 0; j < slots.length; j++) {
          const slot = slots[j]!;
          const w = slot >>> 5;
          const word = bits[w]!;
          if (((word >>> (slot & 31)) & 1) === 0) continue;
          const tf = counts[rank[w]! + popcount(word & ((1 << (slot & 31)) - 1))]!;
          scores[j]! += (idf * tf) / (tf + norms[slot]!);
        }
      } else if (rareCount) {
        for (let j = 0; j < slots.length; j++) {
          const tf = rareCount(i, j);
          if (tf > 0) scores[j]! += (idf * tf) / (tf + norms[slots[j]!]!);
        }
      }
    }
    return scores;
  };
  const offerAll = (slots: Int32Array, scores: Float64Array) => {
    for (let j = 0; j < slots.length; j++) {
      const score = scores[j]!;
      if (score > 0 && !(top.full && score < top.worstScore)) top.offer(slots[j]!, score);
    }
  };

  // Documents holding a rarer term: every one is scored, the rarer terms' counts by merging their lists.
  const rare = terms.flatMap((t, i) => (t.bits ? [] : [{ i, lists: t.lists }]));
  let held = new Int32Array(rare.reduce((sum, t) => t.lists.reduce((s, l) => s + l.n, sum), 0));
  let at = 0;
  for (const { lists } of rare)
    for (const { slots, n } of lists) for (let j = 0; j < n; j++) if (inScope(slots[j]!)) held[at++] = slots[j]!;
  held = held.subarray(0, at).sort();
  let unique = 0;
  for (let j = 0; j < held.length; j++) if (j === 0 || held[j] !== held[j - 1]) held[unique++] = held[j]!;
  held = held.subarray(0, unique);
  if (held.length > opts.budget) return undefined;
  const rareCounts = new Map<number, Uint16Array>();
  for (const { i, lists } of rare) {
    const counts = new Uint16Array(held.length);
    for (const { slots, counts: c, n } of lists) {
      let h = 0;
      for (let j = 0; j < n; j++) {
        const slot = slots[j]!;
        while (h < held.length && held[h]! < slot) h++;
        if (h < held.length && held[h] === slot) counts[h] = c[j]!;
      }
    }
    rareCounts.set(i, counts);
  }
  offerAll(
    held,
    scoreAll(held, (i, j) => rareCounts.get(i)![j]!),
  );
  let scored = held.length;
  const heldBits = new Int32Array(words);
  for (const slot of held) heldBits[slot >>> 5]! |= 1 << (slot & 31);

  // The rest hold common terms only. atLeast[m]: the slots holding m or more of them, counted
  // 32 slots a word, one term after another (atLeast[0] is every slot).
  const atLeast = Array.from({ length: q + 2 }, () => new Int32Array(words));
  atLeast[0]!.fill(-1);
  for (let i = 0; i < q; i++) {
    const bits = common[i]!.bits.bits;
    for (let m = Math.min(i + 1, q); m >= 1; m--) {
      const into = atLeast[m]!;
      const fewer = atLeast[m - 1]!;
      for (let w = 0; w < words; w++) into[w]! |= fewer[w]! & bits[w]!;
    }
  }
  // upper[m]: the most a document holding m common terms (and no rarer one) can score.
  const bounds = common
    .map(({ idf, bits: { shortest } }) => shortest.reduce((most, length, tf) => Math.max(most, (idf * tf) / (tf + opts.normOf(length))), 0))
    .sort((a, b) => b - a);
  const upper = [0];
  for (const b of bounds) upper.push(upper[upper.length - 1]! + b);
  let level = new Int32Array(1024);
  for (let m = q; m >= 1; m--) {
    const these = atLeast[m]!;
    const more = atLeast[m + 1]!;
    let n = 0;
    for (let w = 0; w < words; w++) {
      let word = these[w]! & ~more[w]! & ~heldBits[w]!;
      while (word !== 0) {
        const low = word & -word;
        word ^= low;
        const slot = (w << 5) | (31 - Math.clz32(low));
        if (slot >= slotCount || !inScope(slot)) continue;
        if (n === level.length) {
          const longer = new Int32Array(2 * n);
          longer.set(level);
          level = longer;
        }
        level[n++] = slot;
      }
    }
    scored += n;
    if (scored > opts.budget) return undefined;
    const slots = level.subarray(0, n);
    offerAll(slots, scoreAll(slots));
    if (top.full && upper[m - 1]! * (1 + BOUND_SLACK) < top.worstScore) break;
  }
  const best = Int32Array.from(top.sorted());
  const scores = scoreAll(best, (i, j) => {
    // The few best: a rarer term's count by binary search in the documents that hold one.
    const h = sortedIndexOf(held, best[j]!);
    return h < 0 ? 0 : rareCounts.get(i)![h]!;
  });
  return Array.from(best, (slot, j) => ({ slot, score: scores[j]! }));
}

/** Index of `value` in the increasing `values`, or −1. */
function sortedIndexOf(values: Int32Array, value: number): number {
  let lo = 0;
  for (let hi = values.length; lo < hi;) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return values[lo] === value ? lo : -1;
}
