import { optionNames } from '../model/options.js';
import { dedupeCandidates, type Hit } from './candidate.js';

export type FusionMethod = 'rrf' | 'weighted';

export interface FusionOptions {
  /**
   * 'rrf' (default): Σ weight / (k + rank); 'weighted': Σ weight × the list's score min-max
   * normalised within the list (so a cosine of 0.3–0.6 and a BM25 of 5–30 count alike).
   */
  method?: FusionMethod;
  /** Weight of each list, in the order given. Default 1 each. */
  weights?: readonly number[];
  /** RRF constant. Default 60. */
  k?: number;
}

export const FUSION_OPTIONS = optionNames<FusionOptions>()(['method', 'weights', 'k']);

/** The score a list gives a candidate for weighted fusion: similarity for vector lists, relative BM25 for keyword lists, 1 for names and code. */
function listScore(c: Hit): number {
  const r = c.why[0];
  if (!r) return 0;
  return r.kind === 'keyword' ? r.score : r.kind === 'vector' ? r.similarity : r.kind === 'mention' || r.kind === 'code' ? 1 : 0;
}

/** Fuses ranked lists into one, best first; every reason is kept and `fused` is set. */
export function fuseCandidates(lists: Hit[][], opts: Required<FusionOptions>): Hit[] {
  const { k, method } = opts;
  const fused = new Map<string, number>();
  lists.forEach((list, li) => {
    const w = opts.weights[li]!;
    const scores = list.map(listScore);
    const lo = Math.min(...scores);
    const span = Math.max(...scores) - lo;
    list.forEach((c, rank) => {
      const add = method === 'rrf' ? w / (k + rank + 1) : w * (span > 0 ? (scores[rank]! - lo) / span : 1);
      fused.set(c.id, (fused.get(c.id) ?? 0) + add);
    });
  });
  const merged = dedupeCandidates(lists);
  for (const c of merged) c.fused = fused.get(c.id) ?? 0;
  return merged.sort((a, b) => (b.fused ?? 0) - (a.fused ?? 0) || b.similarity - a.similarity || a.id.localeCompare(b.id));
}
