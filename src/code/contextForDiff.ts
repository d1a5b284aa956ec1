/**
 * "What should I know about this change?": a diff becomes a task — the files it changes, the
 * symbols it touches, the text it adds — and the entries that reference the changed code join the
 * pipeline as a list of their own, each with the code that brought it in. The rest of the bundle
 * (graph expansion, scoring, golden paths) is buildTaskContext's.
 */
import type { Embedder } from '../embed/embedder.js';
import { invalidInput, requireFolder } from '../model/errors.js';
import { checkOptionNames } from '../model/options.js';
import type { CodeLocation, CodeMatch, ContextBundle } from '../model/types.js';
import { makeHit, type Hit } from '../retrieve/candidate.js';
import { runRecipe, type RecipeRun } from '../retrieve/runRecipe.js';
import type { SearchRecipe } from '../recipe/searchRecipe.js';
import type { Stores } from '../store/stores.js';
import { CodeIndex, symbolsOf } from './codeIndex.js';
import { runGit } from './git.js';
import { parseDiff, type ChangedFile, type FileChange } from './parseDiff.js';

/** Where the diff comes from: its text, or git in a repository (`range`: `main..HEAD`, `HEAD~3`; `staged`: the index). */
export type DiffSource = string | { repo: string; range?: string; staged?: boolean };

export interface DiffContextBundle extends ContextBundle {
  /** The files the diff changes, with the symbols (in the languages src/code/languages/ reads) its lines touch. */
  changes: { path: string; oldPath: string | null; change: FileChange; symbols: string[] }[];
}

/** Characters of added text the task carries (the task embeds its first 1,000). */
const ADDED_TEXT_CHARS = 4_000;

/** Checks a git range given by a user: it becomes one argument of git, and must not read as an option. */
export function checkRange(range: string): void {
  if (range === '' || range.length > 200 || range.startsWith('-') || /[\s\u0000-\u001f]/.test(range)) {
    throw invalidInput(`diff range ${JSON.stringify(range)} is not a revision or range (like main..HEAD or HEAD~3)`);
  }
}

/** The diff text and where to read each side's files. */
async function readDiff(source: DiffSource): Promise<{
  text: string;
  newSide: (path: string) => Promise<string | null>;
  oldSide: (path: string) => Promise<string | null>;
  /** Where a working-tree path leads when a symlink takes it out of the repository (not read). */
  leaves: (path: string) => Promise<string | null>;
}> {
  if (typeof source === 'string') return { text: source, newSide: async () => null, oldSide: async () => null, leaves: async () => null };
  const { repo, range, staged } = source;
  if (range !== undefined) checkRange(range);
  if (range !== undefined && staged) throw invalidInput('a diff is of a range or of the staged changes, not both');
  const args = [
    'diff',
    '--no-color',
    '--no-ext-diff',
    '-M',
    '-U0',
    ...(staged ? ['--cached'] : []),
    ...(range !== undefined ? [range] : []),
    '--',
  ];
  const text = await runGit(repo, args, `git diff ${range ?? (staged ? '--staged' : '')}`.trim());
  const show = (rev: string) => async (path: string) => runGit(repo, ['show', `${rev}:${path}`]).catch(() => null);
  const index = new CodeIndex(repo);
  const worktree = async (path: string) => (await index.file(path))?.text ?? null;
  const [left, right] = range?.includes('..') ? range.split(/\.{2,3}/) : [range, undefined];
  return {
    text,
    // The new side: the range's right end, the index for staged changes, else the working tree.
    newSide: range?.includes('..') ? show(right || 'HEAD') : staged ? show('') : worktree,
    oldSide: show(left || (staged || range?.includes('..') ? 'HEAD' : '')),
    leaves: (path) => (range?.includes('..') || staged ? Promise.resolve(null) : index.leavesRoot(path)),
  };
}

/** Symbols (not the file itself) whose lines meet a changed range. */
async function touchedSymbols(file: ChangedFile, text: string | null): Promise<string[]> {
  if (text === null) return [];
  return ((await symbolsOf(file.path, text)) ?? [])
    .filter((s) => s.symbol !== null && file.ranges.some((r) => r.start <= s.endLine && r.end >= s.startLine))
    .map((s) => s.symbol!);
}

/**
 * Whether a location's path is the diff's path (a codebase imported from a subfolder has shorter
 * paths), or a folder (`migrations/`) that holds it.
 */
const samePath = (location: string, changed: string) =>
  location === changed ||
  changed.endsWith(`/${location}`) ||
  (location.endsWith('/') && (changed.startsWith(location) || changed.includes(`/${location}`)));

/**
 * Entries that reference the changed code, best evidence first: a touched symbol or line range,
 * then the file itself, then other code in the file.
 */
async function entriesOnChangedCode(stores: Stores, changes: DiffContextBundle['changes'], files: ChangedFile[]): Promise<Hit[]> {
  const locations = await stores.graph.allCodeLocations();
  const matches: { code: CodeLocation; label: string; match: CodeMatch }[] = [];
  for (const [i, change] of changes.entries()) {
    const file = files[i]!;
    const paths = [change.path, ...(change.oldPath ? [change.oldPath] : [])];
    for (const c of locations) {
      if (!paths.some((p) => samePath(c.filePath, p))) continue;
      const lines = c.startLine !== null && c.kind !== 'file';
      // The symbol as the new file has it; else the location's own lines (a diff given as text has no files to read).
      const touched =
        (c.symbol !== null && change.symbols.includes(c.symbol)) ||
        (lines && file.ranges.some((r) => r.start <= (c.endLine ?? c.startLine!) && r.end >= c.startLine!));
      const whole = change.change === 'deleted' || (c.symbol === null && !lines);
      const label = c.symbol
        ? `${change.path}#${c.symbol}`
        : lines
          ? `${change.path}:${c.startLine}-${c.endLine ?? c.startLine}`
          : change.path;
      matches.push({
        code: c,
        label: change.change === 'modified' ? label : `${label} (${change.change})`,
        match: touched ? 'touched' : whole ? 'file' : 'same-file',
      });
    }
  }
  if (matches.length === 0) return [];
  const references = await stores.graph.edgesInto([...new Set(matches.map((m) => m.code.id))], ['REFERENCES_CODE']);
  const order: CodeMatch[] = ['touched', 'file', 'same-file'];
  const best = new Map<string, { match: CodeMatch; label: string }>();
  for (const m of matches.sort((a, b) => order.indexOf(a.match) - order.indexOf(b.match))) {
    for (const r of references) if (r.to === m.code.id && !best.has(r.from)) best.set(r.from, m);
  }
  return [...best.entries()].map(([id, m], i) => makeHit(id, 0, [{ kind: 'code', rank: i + 1, code: m.label, match: m.match }]));
}

/** The task a diff stands for: what changed, where, and the words it adds. */
function diffTask(changes: DiffContextBundle['changes'], files: ChangedFile[]): string {
  const what = changes
    .map((c) => `${c.change} ${c.oldPath ? `${c.oldPath} → ` : ''}${c.path}${c.symbols.length > 0 ? ` (${c.symbols.join(', ')})` : ''}`)
    .join('; ');
  const added = files
    .flatMap((f) => f.added)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join('\n')
    .slice(0, ADDED_TEXT_CHARS);
  return `Change: ${what}.${added ? `\n${added}` : ''}`;
}

export async function contextForDiff(
  stores: Stores,
  embedder: Embedder,
  source: DiffSource,
  recipe: SearchRecipe,
  run: Omit<RecipeRun, 'codeHits'> = {},
): Promise<DiffContextBundle> {
  const { text, newSide, oldSide, leaves } = await readDiff(source);
  const { files, skipped } = parseDiff(text);
  if (files.length === 0) {
    throw invalidInput(
      skipped.length > 0
        ? `the diff changes nothing memcore can read (${skipped.map((s) => `${s.path}: ${s.reason}`).join('; ')})`
        : 'the diff is empty: nothing changed',
    );
  }
  const changes: DiffContextBundle['changes'] = [];
  const notes: string[] = [];
  for (const file of files) {
    const outside = file.change === 'deleted' ? null : await leaves(file.path);
    if (outside !== null) notes.push(`${file.path} is a symlink to ${outside}, outside the repository: its target was not read`);
    const content = file.change === 'deleted' ? await oldSide(file.path) : await newSide(file.path);
    changes.push({
      path: file.path,
      oldPath: file.oldPath,
      change: file.change,
      symbols: [...new Set(await touchedSymbols(file, content))],
    });
  }
  const codeHits = await entriesOnChangedCode(stores, changes, files);
  const { bundle } = await runRecipe(stores, embedder, diffTask(changes, files), recipe, { ...run, codeHits });
  if (!bundle) throw new Error('contextForDiff needs a context recipe');
  for (const s of skipped) bundle.notes.push(`skipped ${s.path}: ${s.reason}`);
  bundle.notes.push(...notes);
  return { ...bundle, changes };
}

/** contextForDiff's source checked: a diff's text, or `{ repo, range, staged }` with repo made absolute. */
export async function checkDiffSource(source: DiffSource): Promise<DiffSource> {
  if (typeof source === 'object' && source !== null) {
    checkOptionNames('contextForDiff', source, ['repo', 'range', 'staged']);
    if (typeof source.repo !== 'string' || source.repo === '')
      throw invalidInput('contextForDiff: repo must be the path of a git repository');
    if (source.range !== undefined && typeof source.range !== 'string')
      throw invalidInput('contextForDiff: range must be a string like main..HEAD');
    if (source.staged !== undefined && typeof source.staged !== 'boolean')
      throw invalidInput('contextForDiff: staged must be true or false');
    source = { ...source, repo: await requireFolder('contextForDiff', source.repo) };
  } else if (typeof source !== 'string') throw invalidInput('contextForDiff needs a diff (text) or { repo, range, staged }');
  return source;
}
