/**
 * How the graph counts in a context's score: a GraphRanker gives each candidate a graph score
 * (0–1). Two are built in; a recipe takes either, or one of the caller's.
 */
import type { GraphEdge } from '../store/memoryIndex.js';
import type { Reason } from '../model/types.js';
import type { Hit } from './candidate.js';
import { personalizedPageRank } from './personalizedPageRank.js';
import type { ScoringWeights } from './score.js';

export interface GraphRankInput {
  /** The candidates left after filtering; graph-reached ones carry `graph` reasons (seed, hops, path). */
  candidates: readonly Hit[];
  /** The seeds of the expansion, each with its fused score. */
  seeds: ReadonlyMap<string, number>;
  /** The entry edges among the candidates (empty unless the ranker `needsEdges`). */
  edges: readonly GraphEdge[];
  weights: Readonly<ScoringWeights>;
}

export interface GraphRanker {
  /** Names it in the bundle cache's key: two rankers that differ need two names. */
  readonly name: string;
  /** Whether `score` needs the edges among the candidates (read once, with the expansion's). */
  readonly needsEdges: boolean;
  /** Each candidate's graph score, 0–1; a candidate left out scores 0. */
  score(input: GraphRankInput): Map<string, number>;
}

/**
 * Personalised PageRank from the seeds over the candidates' subgraph (the default): an entry
 * several seeds reach through several paths ranks above one reached once.
 */
export function pagerank(): GraphRanker {
  return {
    name: 'pagerank',
    needsEdges: true,
    score: ({ candidates, seeds, edges, weights }) =>
      personalizedPageRank(
        candidates.map((c) => c.id),
        [...edges],
        new Map(seeds),
        { edgeWeights: weights.edgeWeights },
      ),
  };
}

const isDirectHit = (r: Reason) => r.kind === 'vector' || r.kind === 'keyword' || r.kind === 'mention' || r.kind === 'code';

/**
 * Shortest-path proximity: a direct hit's own similarity; a reached entry's best seed similarity
 * decayed per hop (`hopDecay`) and per edge type (`edgeWeights`).
 */
export function proximity(): GraphRanker {
  return {
    name: 'proximity',
    needsEdges: false,
    score: ({ candidates, weights }) => {
      const seedSimilarity = new Map(candidates.filter((c) => c.why.some(isDirectHit)).map((c) => [c.id, c.similarity]));
      return new Map(candidates.map((c) => [c.id, closeness(c, seedSimilarity, weights)]));
    },
  };
}

function closeness(c: Hit, seedSimilarity: Map<string, number>, w: Readonly<ScoringWeights>): number {
  let best = 0;
  for (const r of c.why) {
    if (isDirectHit(r)) best = Math.max(best, c.similarity);
    else if (r.kind === 'graph') {
      const edges = r.path.reduce((acc, hop) => acc * w.edgeWeights[hop.type], 1);
      best = Math.max(best, (seedSimilarity.get(r.seedId) ?? 0) * Math.pow(w.hopDecay, r.hops) * edges);
    }
  }
  return best;
}

/** The built-in ranker a name stands for. */
export const GRAPH_RANKERS = { pagerank, proximity } as const;
