import { throwIfAborted } from '../model/errors.js';
import type { MemoryIndex } from '../store/memoryIndex.js';
import type { Hit } from './candidate.js';

/**
 * Removes entries that a newer entry supersedes (SUPERSEDES newer → older). With `asOf`, an
 * entry stays when its successor did not yet exist then (valid_from, else created_at, after asOf).
 */
export async function dropSuperseded<T extends Pick<Hit, 'id'>>(
  index: MemoryIndex,
  candidates: T[],
  opts: { asOf?: Date; signal?: AbortSignal } = {},
): Promise<{ kept: T[]; dropped: { id: string; supersededBy: string }[] }> {
  throwIfAborted(opts.signal);
  const successor = await index.supersededBy(candidates.map((c) => c.id));
  throwIfAborted(opts.signal);
  if (successor.size === 0) return { kept: candidates, dropped: [] };
  let inForce = (_newer: string) => true;
  if (opts.asOf) {
    const asOf = opts.asOf.getTime();
    const newer = await index.read([...new Set(successor.values())]);
    throwIfAborted(opts.signal);
    const since = new Map(newer.map(({ entry }) => [entry.id, (entry.validFrom ?? entry.createdAt).getTime()]));
    inForce = (id) => (since.get(id) ?? Infinity) <= asOf;
  }
  const kept: T[] = [];
  const dropped: { id: string; supersededBy: string }[] = [];
  for (const c of candidates) {
    const newer = successor.get(c.id);
    if (newer !== undefined && inForce(newer)) dropped.push({ id: c.id, supersededBy: newer });
    else kept.push(c);
  }
  return { kept, dropped };
}
