import type { EntryColumns, MemoryIndex } from '../store/memoryIndex.js';
import { TopK } from '../kernel/topK.js';

/**
 * How many stage-1 candidates the two-stage search needs on this store's own vectors. How far the
 * small vectors' order strays from the full vectors' depends on the data: when most of a vector's
 * variance lies outside the small dimensions (the bench's 500 cluster centres at 1M in 512-d, with
 * isotropic noise on top), a true top-10 neighbour can rank past 1,000 on `vector_small` at 300K
 * entries, where on data whose variance the projection keeps it ranks within the first few dozen.
 * So the default is measured: sampled entries serve as queries (their neighbours are what searches
 * look for), and the count is the small-vector rank that keeps `CALIBRATION_TARGET` of their exact
 * top 10. On the bench's vectors, 200 queries drawn like the entries and 200 sampled entries
 * needed the same counts (at 300K: 750 candidates kept 98.7% and 98.6%, 1,000 99.9% and 100%).
 */
export interface Stage1Calibration {
  /** Entries in the store when measured: the count scales with the store as it grows. */
  entries: number;
  /** Stage-1 candidates that kept `CALIBRATION_TARGET` of the sampled queries' exact top 10. */
  candidates: number;
  /** Entries sampled as queries. */
  queries: number;
}

/** Fewest stage-1 candidates by default (600 kept all of the exact top 10 at 100K on the bench's vectors). */
const MIN_STAGE1_CANDIDATES = 600;
/** Most by default: the most a caller may ask for. The rerank costs ~1 µs a candidate. */
const MAX_STAGE1_CANDIDATES = 10_000;
/** Entries sampled as queries: 640 neighbours, so the 99th percentile rests on the 7 worst. */
const CALIBRATION_QUERIES = 64;
/** Share of the sampled queries' exact top 10 the default keeps. */
const CALIBRATION_TARGET = 0.99;

/**
 * Measures the stage-1 candidates this store needs: for each sampled entry, the entries nearest
 * its small vector (a pool well past what is expected to be needed), their exact cosine on the
 * full vectors, and the small-vector rank of each of its exact top 10. Undefined when the small
 * vectors are not held (stage 1 is then LanceDB's) or the store is small enough for the fewest
 * default candidates to be all of it, or no sampled entry has a direction. ~20 ms a query at 100K
 * entries, ~110 ms at 1M (1.2 s and 7 s for the 64).
 */
export function calibrateStage1(columns: EntryColumns, smallVector: (full: Float32Array) => Float32Array): Stage1Calibration | undefined {
  const entries = columns.size;
  if (!columns.holdsSmallVectors || entries <= MIN_STAGE1_CANDIDATES) return undefined;
  const ids = columns.sampleIds(CALIBRATION_QUERIES);
  const neighbourRanks = (pool: number) =>
    ids.flatMap((id) => {
      const query = columns.vector(id)!;
      const nearest = columns.nearestSmall(smallVector(query), {}, pool + 1) ?? [];
      const others = nearest.flatMap((h) => (h.id === id ? [] : [h.id]));
      return exactTop10(columns.similarities(others, query));
    });
  // A neighbour ranked past the pool is not seen, so a count near the pool's size is measured again on a larger one.
  for (let pool = Math.min(entries, Math.max(4 * MIN_STAGE1_CANDIDATES, Math.ceil(entries / 100))); ; pool = Math.min(entries, pool * 4)) {
    const ranks = neighbourRanks(pool).sort((a, b) => a - b);
    if (ranks.length === 0) return undefined;
    const candidates = ranks[Math.ceil(CALIBRATION_TARGET * ranks.length) - 1]! + 1;
    if (candidates <= pool / 2 || pool === entries) return { entries, candidates, queries: ids.length };
  }
}

/** The positions of the 10 highest `similarities`. */
function exactTop10(similarities: Float64Array): number[] {
  const top = new TopK(10, (a, b) => a > b);
  similarities.forEach((similarity, rank) => top.offer(rank, similarity));
  return top.sorted();
}

/** Where the calibration is kept with the columns (and their snapshot). */
const CALIBRATION_KEY = 'stage1Calibration';

/** Measured once per set of columns, kept with them: a refit rebuilds the columns, and so measures again. */
export function stage1Calibration(columns: EntryColumns, smallVector: (full: Float32Array) => Float32Array): Stage1Calibration | undefined {
  let kept = columns.derived.get(CALIBRATION_KEY) as { calibration: Stage1Calibration | null } | undefined;
  if (kept === undefined) columns.derived.set(CALIBRATION_KEY, (kept = { calibration: calibrateStage1(columns, smallVector) ?? null }));
  return kept.calibration ?? undefined;
}

/**
 * matryoshkaSearch's default stage-1 candidates for a store of `entries`: the calibrated count,
 * scaled with the store's growth since it was measured, within MIN…MAX_STAGE1_CANDIDATES and never
 * fewer than `limit`. Without a calibration (stage 1 in LanceDB), one per 400 entries.
 */
export function defaultStage1Candidates(entries: number, limit: number, calibration?: Stage1Calibration): number {
  const measured = calibration ? Math.ceil((calibration.candidates * entries) / calibration.entries) : Math.ceil(entries / 400);
  return Math.max(limit, Math.min(MAX_STAGE1_CANDIDATES, Math.max(MIN_STAGE1_CANDIDATES, measured)));
}

/** matryoshkaSearch's default stage-1 candidates for the store as it is now, calibrated on its columns. */
export async function stage1CandidatesFor(index: MemoryIndex, limit: number): Promise<number> {
  const columns = await index.columns();
  return defaultStage1Candidates(
    columns.size,
    limit,
    stage1Calibration(columns, (v) => index.smallVector(v)),
  );
}
