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
  const [names, columns] = await Promise.all([index.names(), index.columns()]);
  throwIfAborted(opts.signal);
  // Filtered before resolving nested names, so an entry the filter hides cannot hide a shorter name.
  return names
    .match(task, columns.matcher(opts.filter))
    .slice(0, opts.limit)
    .map((m, i) => makeHit(m.id, 0, [{ kind: 'mention', rank: i + 1, mention: m.mention }]));
}
