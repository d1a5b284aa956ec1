/** Retrieval metrics over one ranked list and a gold set (binary relevance). */

export function recallAt(ranked: string[], gold: Set<string>, k: number): number {
  if (gold.size === 0) return 1;
  let hit = 0;
  for (const id of ranked.slice(0, k)) if (gold.has(id)) hit++;
  return hit / gold.size;
}

/** 1 when every gold id is in the top k. */
export function allGoldAt(ranked: string[], gold: Set<string>, k: number): number {
  const top = new Set(ranked.slice(0, k));
  for (const g of gold) if (!top.has(g)) return 0;
  return 1;
}

export function ndcgAt(ranked: string[], gold: Set<string>, k: number): number {
  if (gold.size === 0) return 1;
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    if (gold.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(gold.size, k); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** Reciprocal rank of the first gold id in the list (0 when none is there). */
export function reciprocalRank(ranked: string[], gold: Set<string>): number {
  const i = ranked.findIndex((id) => gold.has(id));
  return i < 0 ? 0 : 1 / (i + 1);
}

export interface MetricRow {
  queries: number;
  recall: Record<number, number>;
  allGold: Record<number, number>;
  ndcg10: number;
  mrr: number;
}

/** Mean of every metric over the queries' ranked lists. */
export function aggregate(results: { ranked: string[]; gold: string[] }[], ks: number[]): MetricRow {
  const n = results.length || 1;
  const row: MetricRow = { queries: results.length, recall: {}, allGold: {}, ndcg10: 0, mrr: 0 };
  for (const k of ks) {
    row.recall[k] = 0;
    row.allGold[k] = 0;
  }
  for (const r of results) {
    const gold = new Set(r.gold);
    for (const k of ks) {
      row.recall[k]! += recallAt(r.ranked, gold, k) / n;
      row.allGold[k]! += allGoldAt(r.ranked, gold, k) / n;
    }
    row.ndcg10 += ndcgAt(r.ranked, gold, 10) / n;
    row.mrr += reciprocalRank(r.ranked, gold) / n;
  }
  return row;
}
