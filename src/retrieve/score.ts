/**
 * The one place that turns the evidence about an entry into a number. Stages collect evidence
 * (similarity, ranks, graph paths); only this module weighs it.
 */
import { CONFIDENCE_LEVELS, type EntryEdgeType, type Reason, type ScoredEntry } from '../model/types.js';
import type { Candidate } from './candidate.js';

export interface ScoringWeights {
  /** Weight of cosine similarity to the task. Default 0.6. */
  similarity: number;
  /** Weight of graph proximity to the seeds (1 for a seed itself). Default 0.25. */
  graph: number;
  /** Weight of confidence (low 0, medium 0.5, high 1). Default 0.05. */
  confidence: number;
  /** Weight of importance (1–10 scaled to 0.1–1). Default 0.07. */
  importance: number;
  /** Weight of recency (1 when just updated, halving every `recencyHalfLifeDays`). Default 0.03. */
  recency: number;
  /** Proximity kept per hop away from a seed. Default 0.6. */
  hopDecay: number;
  /** Proximity kept when crossing an edge of each type. */
  edgeWeights: Record<EntryEdgeType, number>;
  /** Default 180. */
  recencyHalfLifeDays: number;
}

export const DEFAULT_WEIGHTS: ScoringWeights = {
  similarity: 0.6,
  graph: 0.25,
  confidence: 0.05,
  importance: 0.07,
  recency: 0.03,
  hopDecay: 0.6,
  edgeWeights: { RELATED: 0.8, DEPENDS_ON: 1, SUPERSEDES: 0.5 },
  recencyHalfLifeDays: 180,
};

/** Rough token count for budgeting: about four characters a token in English prose and code. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** How close a candidate is to the seeds: its own similarity for a seed, a decayed share of the seed's otherwise. */
function graphProximity(why: Reason[], seedSimilarity: Map<string, number>, w: ScoringWeights): number {
  let best = 0;
  for (const r of why) {
    if (r.kind === 'vector') best = Math.max(best, r.similarity);
    else {
      const edges = r.path.reduce((acc, hop) => acc * w.edgeWeights[hop.type], 1);
      best = Math.max(best, (seedSimilarity.get(r.seedId) ?? 0) * Math.pow(w.hopDecay, r.hops) * edges);
    }
  }
  return best;
}

export function scoreCandidates(
  candidates: Candidate[],
  opts: { weights?: Partial<ScoringWeights>; now?: Date } = {},
): ScoredEntry[] {
  const w: ScoringWeights = { ...DEFAULT_WEIGHTS, ...opts.weights, edgeWeights: { ...DEFAULT_WEIGHTS.edgeWeights, ...opts.weights?.edgeWeights } };
  const now = (opts.now ?? new Date()).getTime();
  const seedSimilarity = new Map(candidates.filter((c) => c.why.some((r) => r.kind === 'vector')).map((c) => [c.entry.id, c.similarity]));
  const halfLifeMs = w.recencyHalfLifeDays * 86_400_000;
  return candidates
    .map((c) => {
      const e = c.entry;
      const age = Math.max(0, now - e.updatedAt.getTime());
      const score =
        w.similarity * c.similarity +
        w.graph * graphProximity(c.why, seedSimilarity, w) +
        w.confidence * (CONFIDENCE_LEVELS.indexOf(e.confidence) / (CONFIDENCE_LEVELS.length - 1)) +
        w.importance * (e.importance / 10) +
        w.recency * Math.pow(0.5, age / halfLifeMs);
      return { entry: e, score, similarity: c.similarity, why: c.why, tokens: estimateTokens(`${e.title}\n${e.content}`) };
    })
    .sort((a, b) => b.score - a.score || a.entry.id.localeCompare(b.entry.id));
}
