/**
 * What a range of commits did to a team's memory, as entries rather than lines: added, changed,
 * superseded and removed, for a pull request's description or a CI step (`memcore diff`).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { MemcoreError, invalidInput } from '../model/errors.js';
import { EntryFileError, parseEntryFile, type FileProblem, type ParsedEntryFile } from './entryFile.js';
import { fileNameOf, type TeamPaths } from './teamPaths.js';

const run = promisify(execFile);

/** An entry (or golden path) a diff names. */
export interface DiffItem {
  id: string;
  kind: 'entry' | 'path';
  core: string;
  /** Title of an entry, name of a golden path (as of the newer side; the older for a removed one). */
  title: string;
  file: string;
  /** For superseded ones: the entries that supersede it in the range. */
  supersededBy?: string[];
}

export interface MemoryDiff {
  /** What was compared: `<base>..<head>`, head `working tree` when not a commit. */
  base: string;
  head: string;
  added: DiffItem[];
  changed: DiffItem[];
  superseded: DiffItem[];
  removed: DiffItem[];
  /** Files of the range that could not be read as entry files (either side). */
  problems: FileProblem[];
}

async function git(root: string, args: string[]): Promise<string> {
  try {
    return (await run('git', args, { cwd: root, maxBuffer: 256 * 2 ** 20, encoding: 'utf8' })).stdout;
  } catch (e) {
    const stderr = String((e as { stderr?: string }).stderr ?? (e as Error).message).trim();
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new MemcoreError('memcore diff needs git on the PATH', 'NOT_FOUND');
    throw invalidInput(`git ${args.join(' ')}: ${stderr.split('\n')[0]}`);
  }
}

/** Where a file lies decides what it holds: `<core>/<name>.md` an entry, `<core>/paths/<name>.md` a golden path. */
function placeOf(relInDir: string): { kind: 'entry' | 'path'; core: string; name: string } | undefined {
  const parts = relInDir.split('/');
  const file = parts.at(-1)!;
  if (!file.endsWith('.md') || file.startsWith('.')) return undefined;
  const name = file.slice(0, -3);
  if (parts.length === 2) return { kind: 'entry', core: parts[0]!, name };
  if (parts.length === 3 && parts[1] === 'paths') return { kind: 'path', core: parts[0]!, name };
  return undefined;
}

/**
 * The memory changes of `range`: `A..B` (B against A), `A...B` (B against where it left A), `A`
 * (the working tree against A), or none (the working tree, untracked files included, against HEAD).
 */
export async function memoryDiff(paths: TeamPaths, range: string | undefined): Promise<MemoryDiff> {
  if (range !== undefined && (range === '' || range.startsWith('-'))) throw invalidInput(`diff: not a range: "${range}"`);
  const root = paths.root;
  const dir = relative(root, paths.dir).split(sep).join('/');
  let base = range ?? 'HEAD';
  let head: string | null = null;
  const three = range?.indexOf('...') ?? -1;
  const two = range?.indexOf('..') ?? -1;
  if (three >= 0) {
    head = range!.slice(three + 3) || 'HEAD';
    base = (await git(root, ['merge-base', range!.slice(0, three) || 'HEAD', head])).trim();
  } else if (two >= 0) {
    head = range!.slice(two + 2) || 'HEAD';
    base = range!.slice(0, two) || 'HEAD';
  }
  await git(root, ['rev-parse', '--verify', '--quiet', `${base}^{commit}`]);
  if (head) await git(root, ['rev-parse', '--verify', '--quiet', `${head}^{commit}`]);

  const status = new Map<string, string>();
  const diff = await git(root, ['diff', '--name-status', '--no-renames', '-z', base, ...(head ? [head] : []), '--', dir]);
  const fields = diff.split('\0').filter((f) => f !== '');
  for (let i = 0; i + 1 < fields.length; i += 2) status.set(fields[i + 1]!, fields[i]![0]!);
  if (!head)
    for (const f of (await git(root, ['ls-files', '--others', '--exclude-standard', '-z', '--', dir])).split('\0'))
      if (f !== '') status.set(f, 'A');

  const out: MemoryDiff = { base, head: head ?? 'working tree', added: [], changed: [], superseded: [], removed: [], problems: [] };
  const read = async (at: string | null, file: string): Promise<ParsedEntryFile | undefined> => {
    const place = placeOf(file.slice(dir.length + 1));
    if (!place) return undefined;
    const text = at === null ? await readFile(join(root, file), 'utf8') : await git(root, ['show', `${at}:${file}`]);
    try {
      return parseEntryFile(file, text, place);
    } catch (e) {
      if (!(e instanceof EntryFileError || e instanceof MemcoreError)) throw e;
      out.problems.push({
        file,
        line: e instanceof EntryFileError ? e.line : null,
        message: e instanceof EntryFileError ? e.problem : e.message,
      });
      return undefined;
    }
  };
  const item = (p: ParsedEntryFile, file: string): DiffItem => ({
    id: p.id,
    kind: p.kind,
    core: p.document.entries[0]?.coreId ?? placeOf(file.slice(dir.length + 1))!.core,
    title: p.document.entries[0]?.title ?? p.document.goldenPaths[0]?.name ?? p.id,
    file,
  });
  const supersedesOf = (p: ParsedEntryFile | undefined) =>
    new Set((p?.document.relations ?? []).filter((r) => r.type === 'SUPERSEDES').map((r) => r.to));
  const supersededBy = new Map<string, string[]>();
  const titles = new Map<string, DiffItem>();

  for (const [file, s] of [...status].sort(([x], [y]) => (x < y ? -1 : 1))) {
    if (!placeOf(file.slice(dir.length + 1))) continue;
    const before = s === 'A' ? undefined : await read(base, file);
    const after = s === 'D' ? undefined : await read(head, file);
    if (after) titles.set(after.id, item(after, file));
    if (s === 'A' && after) out.added.push(item(after, file));
    else if (s === 'D' && before) out.removed.push(item(before, file));
    else if (after) out.changed.push(item(after, file));
    const had = supersedesOf(before);
    for (const to of supersedesOf(after)) if (!had.has(to)) supersededBy.set(to, [...(supersededBy.get(to) ?? []), after!.id]);
  }
  // A superseded entry whose file the range did not touch is read where the newer side has it.
  const files =
    supersededBy.size === 0
      ? []
      : (await git(root, head ? ['ls-tree', '-r', '-z', '--name-only', head, '--', dir] : ['ls-files', '-z', '--', dir])).split('\0');
  for (const [id, by] of supersededBy) {
    const file = titles.has(id) ? undefined : files.find((f) => f.endsWith(`/${fileNameOf(id)}.md`) && placeOf(f.slice(dir.length + 1)));
    const parsed = file ? await read(head, file) : undefined;
    if (parsed && file) titles.set(id, item(parsed, file));
    const known = titles.get(id) ?? out.removed.find((r) => r.id === id);
    out.superseded.push({ ...(known ?? { id, kind: 'entry', core: '', title: id, file: '' }), supersededBy: by });
  }
  return out;
}

/** The diff as lines for a pull request's description: `+` added, `~` changed, `^` superseded, `-` removed. */
export function formatMemoryDiff(d: MemoryDiff): string {
  const line = (mark: string, i: DiffItem) =>
    `${mark} ${i.core ? `${i.core}/` : ''}${i.id}  ${i.title}${i.supersededBy ? `  (superseded by ${i.supersededBy.join(', ')})` : ''}`;
  return [
    `memory ${d.base.slice(0, 12)}..${d.head === 'working tree' ? d.head : d.head.slice(0, 12)}: ` +
      `${d.added.length} added, ${d.changed.length} changed, ${d.superseded.length} superseded, ${d.removed.length} removed`,
    ...d.added.map((i) => line('+', i)),
    ...d.changed.map((i) => line('~', i)),
    ...d.superseded.map((i) => line('^', i)),
    ...d.removed.map((i) => line('-', i)),
    ...d.problems.map((p) => `! ${p.file}${p.line !== null ? `:${p.line}` : ''}: ${p.message}`),
  ].join('\n');
}
