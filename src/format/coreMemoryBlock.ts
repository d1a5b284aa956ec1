import { CONFIDENCE_LEVELS, type ContextBundle, type MemoryEntry } from '../model/types.js';
import { estimateTokens } from '../retrieve/score.js';
import { formatContext } from './formatContext.js';

/**
 * A core's entries as the static layer of a system prompt (MemoryEngine.coreMemory): pinned ones
 * first, then the most important, most confident, most recently changed, as a `<memory>` block of
 * at most `maxTokens`; `entries` in that order.
 */
export function coreMemoryBlock(
  core: string,
  entries: MemoryEntry[],
  maxTokens: number,
): { core: string; text: string; entries: MemoryEntry[] } {
  const rank = (e: MemoryEntry) => CONFIDENCE_LEVELS.indexOf(e.confidence);
  entries.sort(
    (a, b) =>
      Number(b.pinned) - Number(a.pinned) ||
      b.importance - a.importance ||
      rank(b) - rank(a) ||
      b.updatedAt.getTime() - a.updatedAt.getTime() ||
      a.title.localeCompare(b.title),
  );
  const bundle: ContextBundle = {
    task: `core memory: ${core}`,
    entries: entries.map((entry) => ({
      entry,
      score: entry.importance / 10,
      similarity: 0,
      why: [],
      tokens: estimateTokens(`${entry.title}\n${entry.content}`),
    })),
    codeRefs: [],
    goldenPaths: [],
    relatedDecisions: [],
    timings: {},
    cacheHit: false,
    notes: [],
  };
  return { core, text: formatContext(bundle, { style: 'prompt', maxTokens }), entries };
}
