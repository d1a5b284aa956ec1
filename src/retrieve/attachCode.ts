import { throwIfAborted } from '../model/errors.js';
import type { CodeReference, ContextBundle } from '../model/types.js';
import type { MemoryIndex } from '../store/memoryIndex.js';

/** Code references (most relevant first) and golden paths of the chosen entries. */
export async function attachCode(
  index: MemoryIndex,
  entryIds: string[],
  signal?: AbortSignal,
): Promise<Pick<ContextBundle, 'codeRefs' | 'goldenPaths'>> {
  throwIfAborted(signal);
  const [refs, goldenPaths] = await Promise.all([index.codeReferencesOf(entryIds), index.goldenPathsOf(entryIds)]);
  throwIfAborted(signal);
  const byCode = new Map<string, CodeReference>();
  for (const r of refs) {
    const seen = byCode.get(r.code.id);
    if (!seen) byCode.set(r.code.id, { code: r.code, relevance: r.relevance, entryIds: [r.entryId] });
    else {
      seen.relevance = Math.max(seen.relevance, r.relevance);
      if (!seen.entryIds.includes(r.entryId)) seen.entryIds.push(r.entryId);
    }
  }
  const rank = new Map(entryIds.map((id, i) => [id, i]));
  const firstEntry = (ids: string[]) => Math.min(...ids.map((id) => rank.get(id) ?? Infinity));
  const codeRefs = [...byCode.values()].sort(
    (a, b) => b.relevance - a.relevance || firstEntry(a.entryIds) - firstEntry(b.entryIds) || a.code.id.localeCompare(b.code.id),
  );
  goldenPaths.sort((a, b) => firstEntry(a.entryIds) - firstEntry(b.entryIds) || a.id.localeCompare(b.id));
  return { codeRefs, goldenPaths };
}
