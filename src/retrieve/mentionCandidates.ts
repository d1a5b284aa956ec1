import { throwIfAborted } from '../model/errors.js';
import type { MemoryIndex } from '../store/memoryIndex.js';
import type { EntryFilter } from '../model/entryFilter.js';
import { makeHit, type Hit } from './candidate.js';

/**
 * Entries whose title or alias the task names ("… the refresh-token rotation decision …"): the
 * most direct evidence of relevance there is, and one that embeddings of a long task blur. The
 * filter applies as for every other search.
 */
export async function mentionCandidates(
  index: MemoryIndex,
  task: string,
  opts: { filter: EntryFilter; limit: number; signal?: AbortSignal },
): Promise<Hit[]> {
  throwIfAborted(opts.signal);
  const names = await index.names();
  const occurrences = names.occurrences(task);
  throwIfAborted(opts.signal);
  if (occurrences.length === 0) return [];
  // Filtered before resolving nested names, so an entry the filter hides cannot hide a shorter name.
  const allowed = (await index.columns()).matcher(opts.filter);
  throwIfAborted(opts.signal);
  return names
    .matchOccurrences(occurrences, allowed)
    .slice(0, opts.limit)
    .map((m, i) => makeHit(m.id, 0, [{ kind: 'mention', rank: i + 1, mention: m.mention }]));
}
