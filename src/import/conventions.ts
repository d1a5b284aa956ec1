/**
 * What kind of document a path is, by the names teams give them: architecture decision records
 * (one `decision` per file), agents' rules files (`convention` sections) and other docs (`fact`
 * sections). docs/import.md lists the names; front matter `type` overrides them.
 */
import { posix } from 'node:path';

export type DocumentKind = 'adr' | 'rules' | 'doc';

/** Folder names that hold decision records. */
export const ADR_FOLDERS = ['adr', 'adrs', 'decisions', 'decision-records', 'architecture-decisions', 'architecture-decision-records'];

/** File names of agents' rules (anywhere in the tree). */
export const RULES_FILES = [
  'CLAUDE.md',
  'CLAUDE.local.md',
  'AGENTS.md',
  'AGENT.md',
  'GEMINI.md',
  '.cursorrules',
  '.windsurfrules',
  '.clinerules',
  'copilot-instructions.md',
];

/** Folders whose markdown files are all rules. */
export const RULES_FOLDERS = ['.cursor/rules', '.windsurf/rules', '.clinerules', '.github/instructions'];

/** The kind of the document at `path` (posix, relative to the import). */
export function documentKind(path: string): DocumentKind {
  const segments = path.split('/');
  const name = segments.at(-1)!;
  if (RULES_FILES.includes(name)) return 'rules';
  const folder = posix.dirname(path);
  if (RULES_FOLDERS.some((f) => folder === f || folder.endsWith(`/${f}`) || folder.startsWith(`${f}/`) || folder.includes(`/${f}/`)))
    return 'rules';
  // The index or readme of a decision folder lists the records; it is not one.
  if (/^(readme|index)\.(md|markdown|mdx)$/i.test(name)) return 'doc';
  if (segments.slice(0, -1).some((s) => ADR_FOLDERS.includes(s.toLowerCase())) || /^adr[-_ ]?\d+/i.test(name)) return 'adr';
  return 'doc';
}

/** The number of a decision record from its file name (`0007-use-kuzu.md`, `ADR-7.md`), or null. */
export function adrNumber(path: string): number | null {
  const m = /^(?:adr[-_ ]?)?0*(\d{1,6})(?=[-_ .])/i.exec(posix.basename(path));
  return m ? Number(m[1]) : null;
}
