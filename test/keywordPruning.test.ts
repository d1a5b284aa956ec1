import { describe, expect, it } from 'vitest';
import { KeywordIndex, type KeywordDocument } from '../src/store/resident/keywordIndex.js';
import { TermBitsets } from '../src/store/resident/matchCountTop.js';
import { mulberry32 as rng } from '../src/embed/matryoshka.js';

const WORDS = Array.from({ length: 40 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}q`);

/**
 * A corpus where the first words are in many documents (several times in some), the rest in few,
 * documents of varying length, spread over groups.
 */
function corpus(rand: () => number, n: number, from = 0): KeywordDocument[] {
  return Array.from({ length: n }, (_, i) => {
    const words: string[] = [];
    const length = 1 + Math.floor(rand() * 30);
    for (let w = 0; w < length; w++) {
      // Common words most of the time; a word may repeat.
      const pick = rand() < 0.7 ? Math.floor(rand() * 6) : Math.floor(rand() * WORDS.length);
      words.push(WORDS[pick]!);
    }
    return {
      id: `d${String(from + i).padStart(5, '0')}${rand() < 0.5 ? 'x' : ''}`,
      text: words.join(' '),
      group: `g${Math.floor(rand() * 5)}`,
    };
  });
}

function query(rand: () => number): string {
  const terms = 1 + Math.floor(rand() * 7);
  return Array.from({ length: terms }, () =>
    rand() < 0.1 ? 'unknownword' : WORDS[rand() < 0.6 ? Math.floor(rand() * 6) : Math.floor(rand() * WORDS.length)]!,
  ).join(' ');
}

/** Runs `search` reading every posting, and counting matches (with no limit on the documents it scores, or the usual one). */
function bothWays(index: KeywordIndex, text: string, opts: Parameters<KeywordIndex['search']>[1], budget: number) {
  index.pruneFromPostings = Infinity;
  const full = index.search(text, opts);
  index.pruneFromPostings = 0;
  index.prunedBudget = budget;
  const counted = index.search(text, opts);
  return { full, counted };
}

describe('BM25 top-k by counting matches (matchCountTop)', () => {
  it('returns what reading every posting returns: ids, scores to the bit, order, ties by id', () => {
    let searches = 0;
    let countedAnswers = 0;
    const proto = KeywordIndex.prototype as unknown as { countedSearch: (...args: unknown[]) => unknown };
    const original = proto.countedSearch;
    proto.countedSearch = function (this: KeywordIndex, ...args: unknown[]) {
      const out = original.apply(this, args);
      if (out) countedAnswers++;
      return out;
    };
    try {
      for (let seed = 1; seed <= 12; seed++) {
        const rand = rng(seed);
        const size = 2000 + Math.floor(rand() * 4000);
        let index = new KeywordIndex(corpus(rand, size));
        const check = () => {
          for (let q = 0; q < 25; q++) {
            const text = query(rand);
            const groups = rand() < 0.4 ? undefined : ['g0', 'g1', 'g2', 'g3', 'g4', 'nogroup'].filter(() => rand() < 0.5);
            const limit = 1 + Math.floor(rand() * (rand() < 0.8 ? 12 : 60));
            const rejectShare = [0, 0.2, 0.9][Math.floor(rand() * 3)]!;
            const rejected = new Set<string>();
            for (let i = 0; i < size * 2; i++) if (rand() < rejectShare) rejected.add(`d${String(i).padStart(5, '0')}`);
            const accept = rejectShare === 0 ? undefined : (id: string) => !rejected.has(id.replace('x', ''));
            const { full, counted } = bothWays(index, text, { limit, groups, accept }, q % 3 === 0 ? 8 : 0);
            searches++;
            expect(counted, `seed ${seed}, "${text}", groups ${groups?.join(',')}, limit ${limit}`).toEqual(full);
          }
        };
        check();
        // Writes after the bitsets were built: replaced documents, new ones, removals.
        index.upsert(corpus(rand, 100, Math.floor(size / 2)));
        index.remove(Array.from({ length: 60 }, () => `d${String(Math.floor(rand() * size)).padStart(5, '0')}`));
        check();
        // Enough removals to rebuild the postings, then a snapshot's copy.
        index.remove(Array.from({ length: size * 2 }, (_, i) => `d${String(i).padStart(5, '0')}${i % 3 === 0 ? '' : 'x'}`));
        check();
        index = KeywordIndex.fromSnapshot(index.snapshot());
        check();
        index.upsert(corpus(rand, 50, size * 3));
        check();
      }
    } finally {
      proto.countedSearch = original;
    }
    // The property covers the counting path, not only its fallback.
    expect(countedAnswers).toBeGreaterThan(searches / 4);
  });

  it('keeps a bitset in step with a list that grows', () => {
    const bitsets = new TermBitsets();
    const slots = new Int32Array(200);
    const counts = new Uint16Array(200);
    const lengths = Uint32Array.from({ length: 2000 }, (_, slot) => 3 + ((slot * 7) % 40));
    let n = 0;
    const expectBits = (slotCount: number) => {
      const bits = bitsets.of(7, { slots, counts, n }, slotCount, lengths);
      expect(bits.covered).toBe(n);
      for (let i = 0; i < n; i++) {
        const slot = slots[i]!;
        expect((bits.bits[slot >>> 5]! >>> (slot & 31)) & 1).toBe(1);
        // The rank directory and the bits below it give the posting's index.
        let below = bits.rank[slot >>> 5]!;
        for (let b = 0; b < (slot & 31); b++) below += (bits.bits[slot >>> 5]! >>> b) & 1;
        expect(below).toBe(i);
      }
      // The shortest document holding the term each number of times.
      const shortest: number[] = [];
      for (let i = 0; i < n; i++) shortest[counts[i]!] = Math.min(shortest[counts[i]!] ?? Infinity, lengths[slots[i]!]!);
      expect(bits.shortest).toEqual(shortest);
    };
    for (let slot = 0; slot < 500; slot += 1 + (slot % 7)) {
      slots[n] = slot;
      counts[n++] = 1 + (slot % 5);
      if (n % 9 === 0) expectBits(slot + 1);
      if (n === slots.length) break;
    }
    expectBits(2000);
  });
});
