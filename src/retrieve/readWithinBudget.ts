import { throwIfAborted } from '../model/errors.js';
import type { MemoryEntry, ScoredEntry } from '../model/types.js';
import { estimateTokens, type ScoredHit } from './score.js';

/** Keeps the best entries that fit both limits, in score order (an entry too long for what is left is skipped). */
export function fitBudget(scored: ScoredEntry[], maxEntries: number, maxTokens: number | undefined): ScoredEntry[] {
  const kept: ScoredEntry[] = [];
  let tokens = 0;
  for (const s of scored) {
    if (kept.length >= maxEntries) break;
    if (maxTokens !== undefined && tokens + s.tokens > maxTokens) continue;
    kept.push(s);
    tokens += s.tokens;
  }
  return kept;
}

/**
 * Budget: reads the entries of the best scored hits (`read`: MemoryIndex.read, from memory or
 * LanceDB), in score order, and keeps those that fit `maxEntries` and `maxTokens`. Only what can
 * make the bundle is read: the first `maxEntries` hits, then (when a token budget skipped some, or
 * an entry has gone) twice as many of the next, and so on. The hits passed the filter on the
 * in-memory columns: the read is by id alone.
 */
export async function readWithinBudget(
  read: (ids: string[]) => Promise<MemoryEntry[]>,
  scored: ScoredHit[],
  opts: { maxEntries: number; maxTokens?: number; signal?: AbortSignal },
): Promise<ScoredEntry[]> {
  const found: ScoredEntry[] = [];
  let kept: ScoredEntry[] = [];
  for (let next = 0, round = opts.maxEntries; kept.length < opts.maxEntries && next < scored.length; next += round, round *= 2) {
    throwIfAborted(opts.signal);
    const batch = scored.slice(next, next + round);
    const rows = new Map((await read(batch.map((s) => s.id))).map((e) => [e.id, e]));
    for (const s of batch) {
      const entry = rows.get(s.id);
      if (entry)
        found.push({
          entry,
          score: s.score,
          similarity: s.similarity,
          why: s.why,
          tokens: estimateTokens(`${entry.title}\n${entry.content}`),
        });
    }
    kept = fitBudget(found, opts.maxEntries, opts.maxTokens);
  }
  throwIfAborted(opts.signal);
  return kept;
}
