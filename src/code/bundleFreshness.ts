/**
 * A bundle's code references marked fresh, moved, drifted or orphaned against the repository the
 * engine was opened with (`repo`), and the entries whose every reference is orphaned flagged as
 * possibly stale and ranked lower. Files are read once per version, so a warm check costs a stat
 * per referenced file; where a file is gone, the repository-wide symbol index it is looked for in
 * is the process's shared one (CodeIndex `shareEverywhere`), not a walk of the repository a call.
 */
import type { ContextBundle, ScoredEntry } from '../model/types.js';
import { STALE_CODE_FACTOR } from '../retrieve/score.js';
import { CodeIndex } from './codeIndex.js';
import { codeFreshness, type Freshness } from './codeFreshness.js';

export async function withFreshness<B extends ContextBundle>(bundle: B, repo: string, skip: string[] = []): Promise<B> {
  if (bundle.codeRefs.length === 0) return bundle;
  const index = new CodeIndex(repo, skip, { shareEverywhere: true });
  const codeRefs = await Promise.all(bundle.codeRefs.map(async (r) => ({ ...r, freshness: (await codeFreshness(r.code, index)).status })));
  const statuses = new Map<string, Freshness[]>();
  for (const r of codeRefs) for (const id of r.entryIds) statuses.set(id, [...(statuses.get(id) ?? []), r.freshness]);
  // An entry a diff brought in through its code is not demoted: the change is what made that code go.
  const onChangedCode = new Set(bundle.entries.filter((e) => e.why.some((r) => r.kind === 'code')).map((e) => e.entry.id));
  const stale = new Set([...statuses].filter(([id, s]) => !onChangedCode.has(id) && s.every((x) => x === 'orphaned')).map(([id]) => id));
  if (stale.size === 0) return { ...bundle, codeRefs };
  const entries: ScoredEntry[] = bundle.entries
    .map((e) => (stale.has(e.entry.id) ? { ...e, score: e.score * STALE_CODE_FACTOR, possiblyStale: true as const } : e))
    .sort((a, b) => b.score - a.score || a.entry.id.localeCompare(b.entry.id));
  const notes = [...bundle.notes, `possibly stale, every code reference orphaned: ${[...stale].join(', ')}`];
  return { ...bundle, codeRefs, entries, relatedDecisions: entries.filter((s) => s.entry.entryType === 'decision'), notes };
}
