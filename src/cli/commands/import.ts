/** Text of `memcore import`'s report beyond the counts. */
import { relative } from 'node:path';

/** One line: how many documents were left out, by reason, and where the full list is. */
export function skippedLine(skipped: { file: string; reason: string }[], cwd = process.cwd()): string {
  const byReason = new Map<string, number>();
  for (const s of skipped) byReason.set(s.reason, (byReason.get(s.reason) ?? 0) + 1);
  const reasons = [...byReason].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const example = relative(cwd, skipped[0]!.file) || skipped[0]!.file;
  return (
    `left out ${skipped.length} document${skipped.length === 1 ? '' : 's'}: ` +
    reasons.map(([reason, n]) => `${n} ${reason}`).join('; ') +
    ` (e.g. ${example}; --json lists each)`
  );
}
