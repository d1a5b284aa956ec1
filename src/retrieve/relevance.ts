/**
 * Whether a bundle answers its task, and how surely (docs/pipeline.md, "No relevant memory").
 * Three verdicts, from the words of the task as the store holds them:
 *
 * - `strong`: the task names an entry, a change touches an entry's code, or a keyword hit matches a
 *   larger share of the task's information than chance gives in this store. The share is the hit's
 *   BM25 over the most the task could score, counting only the words the store holds (a typo, a
 *   ticket number or an off-topic aside cannot hold an on-topic task down); chance is the 99th
 *   percentile of that share for 8-word queries drawn at random from the store's vocabulary,
 *   measured on the store itself — random queries hold only known words too, so the two compare.
 *   The words the store holds must also carry at least a third of the task's weight (a word no
 *   entry holds counting at the weight of the rarest), and one entry must hold two of them
 *   together: one known word of a cake recipe, or the "day" of a trip plan, is not a match.
 *   And that entry must be a match chance would rarely give an unrelated task in a store of this
 *   size (`matchChance`): the expected number of entries that would hold the words together if
 *   each word were spread over the store at its document frequency (entries × the product of the
 *   words' shares of entries, times how much likelier long entries make it: the mean of (distinct
 *   terms)^h over its mean^h, h the words held, from the store's index), times the share of the
 *   store its vector rank leaves (rank / entries; 1 when no vector search found it). It must be
 *   under CHANCE_MATCHES / entries: a larger store holds more topics, and an unrelated task's
 *   words are those of some topic, not random ones, so the odds that one of its topics gives an
 *   everyday task two or three words together grow with its entries. "Write" and "note" meet in
 *   a passage among 1,000 of Wikipedia (× 994 = 238: weak); "error" and "logs" in the lesson the
 *   vectors rank first among 44 of a project (× 44 = 1.2: strong).
 * - `none` (nothing relevant): strong evidence the task is about something else — no entry among
 *   the best candidates holds two of its words together, and either not one of its words is
 *   specific to this store's entries (held by at most a quarter of them, or two in a tiny store), so
 *   whatever matched is a word common across the store, or just one is and the words the store
 *   holds carry under a fifth of the task's weight (the "drop" of "tune a guitar to drop D"). A task
 *   about the store shares words with it that its entries hold together, or a distinctive one,
 *   even when misspelt, padded or paraphrased. This holds at any store size: "specific" is a share
 *   of the store, and a larger store only holds more of a task's words, which moves a verdict
 *   from `none` towards `weak`, never an on-topic task towards `none`.
 * - `weak`: neither; the few best entries are given (a task scoped to cores: those up to where
 *   their evidence ends, as for a strong match), marked as weak matches.
 *
 * Cosine similarity is not used as a level (with the local model, off-topic questions reach the
 * same similarities as on-topic ones); only the vector rank of the entry the words meet in is.
 */
import { mulberry32 } from '../embed/matryoshka.js';
import type { KeywordIndex } from '../store/memoryIndex.js';
import type { Hit } from './candidate.js';

/** Random queries the chance level is measured with, and their length in terms. */
const CALIBRATION_QUERIES = 200;
const CALIBRATION_TERMS = 8;
/** The chance level is measured again when the store has grown or shrunk by this share. */
const RECALIBRATE_AFTER = 0.2;
/** Where the floor is kept with the index (and its snapshot). */
const FLOOR_KEY = 'relevanceFloor';
/** BM25's k1, as KeywordIndex uses it. */
const BM25_K1 = 1.2;
/** A word is specific to a store when at most this share of its entries hold it (and at least SPECIFIC_MIN_ENTRIES may). */
export const SPECIFIC_SHARE = 0.25;
const SPECIFIC_MIN_ENTRIES = 2;
/** The best fused candidates whose words are looked at. */
const JUDGED_CANDIDATES = 50;
/** The share of a task's keyword weight its known words must carry for a keyword match to be strong. */
const KNOWN_WEIGHT_NEEDED = 1 / 3;
/** Below this share, the task is mostly words this store has never seen: nothing relevant. */
const KNOWN_WEIGHT_NONE = 0.2;
/**
 * A keyword match is strong only when, of as many unrelated tasks as the store holds entries, chance
 * would give fewer than this many a match as good (chance × entries below it).
 */
export const CHANCE_MATCHES = 7;
/** The most held words a chance is computed from (the rarest): more only make it smaller. */
const CHANCE_WORDS = 12;
/** Where the length dispersion is kept with the index (and its snapshot). */
const DISPERSION_KEY = 'relevanceDispersion';

/** How surely a bundle bears on its task: see the module comment. */
export type MatchStrength = 'strong' | 'weak' | 'none';

export interface RelevanceJudgement {
  strength: MatchStrength;
  /** The best keyword hit's share of the task's weight in known words (0 to 1). */
  share: number;
  /** The share chance reaches in this store. */
  floor: number;
  /** The share of the task's keyword weight that words the store holds carry. */
  known: number;
  /** The task's words that are specific to this store (held by few of its entries). */
  specific: string[];
  /**
   * How often chance gives an unrelated task a match as good as the best here (see the module
   * comment): the expected entries holding the words together, times the share of the store the
   * entry's vector rank leaves (1 when no vector search found it). 1 or more when no candidate
   * holds two of the task's words.
   */
  chance: number;
}

/** For h held words, how much likelier they meet by chance because entries differ in length (KeywordIndex.lengthDispersion). */
export function lengthDispersion(index: KeywordIndex): number[] {
  return keptWhileSizeHolds(index, DISPERSION_KEY, 'dispersion', () => index.lengthDispersion(CHANCE_WORDS));
}

/**
 * A value measured over the whole index, kept with it (and in its snapshot, as `{ [field], size }`)
 * until the store's size moves by more than RECALIBRATE_AFTER.
 */
function keptWhileSizeHolds<T>(index: KeywordIndex, key: string, field: string, measure: () => T): T {
  const known = index.derived.get(key) as ({ size: number } & Record<string, unknown>) | undefined;
  if (known && field in known && Math.abs(index.size - known.size) <= RECALIBRATE_AFTER * known.size) return known[field] as T;
  const value = measure();
  index.derived.set(key, { [field]: value, size: index.size });
  return value;
}

/**
 * The chance of a match as good as `held` (the task's words one entry holds, with their document
 * frequencies) in a store of `size` entries, for an entry at vector rank `rank` (undefined: no
 * vector search found it): see the module comment.
 */
export function matchChance(held: readonly number[], size: number, dispersion: readonly number[], rank: number | undefined): number {
  const rarest = [...held].sort((a, b) => a - b).slice(0, CHANCE_WORDS);
  const together = rarest.reduce((p, df) => p * Math.min(1, df / size), size) * (dispersion[rarest.length - 1] ?? 1);
  return together * (rank === undefined ? 1 : Math.min(1, rank / size));
}

/** The share of a task's keyword weight that chance reaches in this store (see the module comment). */
export function relevanceFloor(index: KeywordIndex): number {
  return keptWhileSizeHolds(index, FLOOR_KEY, 'floor', () => measureRelevanceFloor(index));
}

function measureRelevanceFloor(index: KeywordIndex): number {
  const vocabulary = index.vocabulary();
  const random = mulberry32(0x5eed);
  const shares: number[] = [];
  for (let i = 0; i < CALIBRATION_QUERIES && vocabulary.length > 0; i++) {
    const query = Array.from({ length: CALIBRATION_TERMS }, () => vocabulary[Math.floor(random() * vocabulary.length)]!).join(' ');
    const best = index.search(query, { limit: 1 })[0];
    const weight = index.queryWeight(query);
    shares.push(best && weight > 0 ? best.score / weight : 0);
  }
  shares.sort((a, b) => a - b);
  return shares.length === 0 ? 0 : shares[Math.min(shares.length - 1, Math.floor(0.99 * shares.length))]!;
}

/**
 * Judges the candidates of a task (see the module comment). `floor`: the share a keyword hit must
 * pass (default: relevanceFloor of the store); `groups`: the cores the task is scoped to.
 */
export function judgeRelevance(
  index: KeywordIndex | undefined,
  task: string,
  candidates: readonly Hit[],
  opts: { floor?: number; groups?: readonly string[] },
): RelevanceJudgement {
  const sure: RelevanceJudgement = { strength: 'strong', share: 1, floor: 0, known: 1, specific: [], chance: 0 };
  if (candidates.some((c) => c.why.some((r) => r.kind === 'mention' || r.kind === 'code'))) return sure;
  if (!index) return { ...sure, share: 0 }; // keywords off: nothing to judge by
  const scope = opts.groups ? { groups: opts.groups } : {};
  const judged = candidates.slice(0, JUDGED_CANDIDATES);
  const { terms, size, matched } = index.termsMatched(
    task,
    judged.map((c) => c.id),
    scope,
  );
  // The most of the task's words one entry holds together: two or more is a match, not a stray word.
  const together = Math.max(0, ...[...matched.values()].map((held) => held.length));
  // An unknown word with a digit (a ticket, a time, a version) says nothing about the topic: not counted.
  const counted = terms.filter((t) => t.df > 0 || !/\d/.test(t.term));
  const held = terms.filter((t) => t.df > 0);
  // A word no entry holds weighs as the rarest would: idf at document frequency 0, times k1 + 1 as KeywordIndex weighs it.
  const rarest = Math.log(1 + (size + 0.5) / 0.5) * (BM25_K1 + 1);
  const knownWeight = held.reduce((sum, t) => sum + t.idf, 0);
  const totalWeight = knownWeight + (counted.length - held.length) * rarest;
  const known = totalWeight > 0 ? knownWeight / totalWeight : 0;
  const best = Math.max(0, ...candidates.flatMap((c) => c.why.map((r) => (r.kind === 'keyword' ? r.bm25 : 0))));
  // The most the known words could score: queryWeight of them alone (the same idf as the hit's BM25).
  const knownQuery = held.map((t) => t.term).join(' ');
  const weight = knownQuery === '' ? 0 : index.queryWeight(knownQuery, scope);
  const share = weight > 0 ? Math.min(1, best / weight) : 0;
  const floor = opts.floor ?? relevanceFloor(index);
  const specificDf = Math.max(SPECIFIC_MIN_ENTRIES, SPECIFIC_SHARE * size);
  const specific = held.filter((t) => t.df <= specificDf).map((t) => t.term);
  // The rarest match among the candidates that hold two or more of the task's words (module comment).
  const dispersion = lengthDispersion(index);
  const chance = Math.min(
    1,
    ...judged.flatMap((c) => {
      const dfs = (matched.get(c.id) ?? []).map((i) => terms[i]!.df);
      const vector = c.why.find((r) => r.kind === 'vector');
      return dfs.length < 2 ? [] : [matchChance(dfs, size, dispersion, vector?.kind === 'vector' ? vector.rank : undefined)];
    }),
  );
  const strength: MatchStrength =
    share > floor && known >= KNOWN_WEIGHT_NEEDED && together >= 2 && chance * size < CHANCE_MATCHES
      ? 'strong'
      : together <= 1 && (specific.length === 0 || (specific.length === 1 && known < KNOWN_WEIGHT_NONE))
        ? 'none'
        : 'weak';
  return { strength, share, floor, known, specific, chance };
}
