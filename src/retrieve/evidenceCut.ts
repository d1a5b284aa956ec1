/**
 * Where a context bundle ends: after the entries with evidence, not at `maxEntries` of anything.
 * Scores are on one scale within a bundle (score.ts), so the cut is relative to the best: the
 * first `minEntries` with evidence of their own are kept, then the bundle ends at the first entry
 * scoring under `relativeScore` of the best, or `gap` of the best under the entry before it (where
 * the evidence falls off). An entry whose only reason is a rating has no evidence of its own for
 * this task and is left out. Defaults: presets.ts EVIDENCE_CUT; `evidenceCut: false` turns it off.
 */
import type { ScoredHit } from './score.js';

export interface EvidenceCutOptions {
  relativeScore: number;
  gap: number;
  minEntries: number;
}

/** Whether a hit was found for the task by some source (keyword, vector, mention, code, graph), not by a rating alone. */
export function hasOwnEvidence(hit: Pick<ScoredHit, 'why'>): boolean {
  return hit.why.some((r) => r.kind !== 'feedback');
}

/** The scored hits (best first) up to where the evidence ends. */
export function cutAtEvidence<T extends ScoredHit>(scored: readonly T[], opts: EvidenceCutOptions): T[] {
  const withEvidence = scored.filter(hasOwnEvidence);
  const best = withEvidence[0]?.score ?? 0;
  if (best <= 0) return withEvidence;
  const kept: T[] = [];
  for (const hit of withEvidence) {
    const previous = kept[kept.length - 1];
    if (
      kept.length >= opts.minEntries &&
      (hit.score < opts.relativeScore * best || (previous !== undefined && previous.score - hit.score > opts.gap * best))
    )
      break;
    kept.push(hit);
  }
  return kept;
}
