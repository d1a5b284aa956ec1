/**
 * What `memcore import` adds to the importer's options and report for a whole repository: the
 * `--exclude` globs (with config `import.exclude`), `--changelogs`, and the line saying what a
 * folder's walk left out.
 */
import { relative } from 'node:path';
import { resolveConfig } from '../config/config.js';
import type { ImportMarkdownOptions } from '../import/importMarkdown.js';

/** The command's options for what is left out. */
export const LEAVING_OUT_FLAGS = {
  exclude: { type: 'string', multiple: true },
  changelogs: { type: 'boolean', default: false },
} as const;

/** The importer's `exclude` (config's, then the command line's) and `changelogs`, from the parsed flags. */
export function leavingOutOptions(values: Record<string, unknown>, cwd: string): Pick<ImportMarkdownOptions, 'exclude' | 'changelogs'> {
  const configured = (resolveConfig({ cwd }).values.import as { exclude?: string[] } | undefined)?.exclude ?? [];
  const exclude = [...configured, ...((values.exclude as string[] | undefined) ?? [])];
  return { ...(exclude.length > 0 ? { exclude } : {}), ...(values.changelogs === true ? { changelogs: true } : {}) };
}

/** One line: how many documents were left out, by reason, and where the full list is. */
export function skippedLine(skipped: { file: string; reason: string }[], cwd: string): string {
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
