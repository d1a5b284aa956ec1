/**
 * Whether a bundle answers its task, or only holds the closest of unrelated entries ("Bake a
 * chocolate cake" over a memory of Django conventions). Evidence that the task is about the store:
 * an entry it names, code a change touches, or a keyword hit matching a larger share of the task's
 * information than chance gives in this store. The share is the hit's BM25 over the most the task
 * could score (KeywordIndex.queryWeight); chance is the 99th percentile of that share for queries
 * of 8 terms drawn at random from the store's vocabulary, measured on the store itself.
 * Cosine similarity is not used: with the local model, off-topic questions reach the same
 * similarities as on-topic ones (docs/pipeline.md, "No relevant memory").
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

/** The share of a task's keyword weight that chance reaches in this store (see the module comment). */
export function relevanceFloor(index: KeywordIndex): number {
  const known = index.derived.get(FLOOR_KEY) as { floor: number; size: number } | undefined;
  if (known && Math.abs(index.size - known.size) <= RECALIBRATE_AFTER * known.size) return known.floor;
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
  const floor = shares.length === 0 ? 0 : shares[Math.min(shares.length - 1, Math.floor(0.99 * shares.length))]!;
  index.derived.set(FLOOR_KEY, { floor, size: index.size });
  return floor;
}

/**
 * Whether the candidates hold evidence the task is about this store. `floor`: the share a keyword
 * hit must pass (default: relevanceFloor of the store). Returns the share found, for the note.
 */
export function judgeRelevance(
  index: KeywordIndex | undefined,
  task: string,
  candidates: readonly Hit[],
  opts: { floor?: number; groups?: readonly string[] },
): { relevant: boolean; share: number; floor: number } {
  if (candidates.some((c) => c.why.some((r) => r.kind === 'mention' || r.kind === 'code'))) return { relevant: true, share: 1, floor: 0 };
  if (!index) return { relevant: true, share: 0, floor: 0 }; // keywords off: nothing to judge by
  const best = Math.max(0, ...candidates.flatMap((c) => c.why.map((r) => (r.kind === 'keyword' ? r.bm25 : 0))));
  const weight = index.queryWeight(task, opts.groups ? { groups: opts.groups } : {});
  const share = weight > 0 ? best / weight : 0;
  const floor = opts.floor ?? relevanceFloor(index);
  return { relevant: share > floor, share, floor };
}
