/**
 * The files an import reads: files named on the command line as they are, folders walked for the
 * files an importer takes (markdown and rules files, or source code) with every .gitignore on the
 * way respected (those above the folder, up to the repository's root, too), never into .git,
 * node_modules or the database folder.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { invalidInput } from '../model/errors.js';
import { RULES_FILES } from './conventions.js';

/** Extensions read as markdown when a folder is walked. */
export const MARKDOWN_EXTENSIONS = ['.md', '.markdown', '.mdx', '.mdc'];

const NEVER = new Set(['.git', 'node_modules', '.hg', '.svn']);
/** Hidden folders that hold agents' rules; other hidden folders are skipped. */
const HIDDEN_KEPT = new Set(['.cursor', '.github', '.windsurf', '.clinerules']);

const isDocument = (name: string) => RULES_FILES.includes(name) || MARKDOWN_EXTENSIONS.some((e) => name.toLowerCase().endsWith(e));

interface IgnoreRule {
  /** The folder the .gitignore sits in. */
  base: string;
  rules: Ignore;
}

/*
 * A walk reads folders and their .gitignore synchronously: a 5,000-file repository has ~1,300
 * folders, and async calls (a failed read of a missing .gitignore each) cost ~0.3 s of CPU in
 * promises, thread hops and errors where sync ones cost a fifth of that.
 */
async function ignoreIn(dir: string): Promise<IgnoreRule | null> {
  const path = join(dir, '.gitignore');
  if (!existsSync(path)) return null;
  try {
    return { base: dir, rules: ignore().add(readFileSync(path, 'utf8')) };
  } catch {
    return null;
  }
}

function ignored(rules: IgnoreRule[], path: string, isDir: boolean): boolean {
  return rules.some((r) => {
    const rel = relative(r.base, path).split(sep).join('/');
    return rel !== '' && !rel.startsWith('..') && r.rules.ignores(isDir ? `${rel}/` : rel);
  });
}

/** The .gitignore files above `dir`, up to the folder holding .git (none outside a repository). */
async function ancestorsRules(dir: string): Promise<IgnoreRule[]> {
  const chain: string[] = [];
  for (let at = dirname(dir); ; at = dirname(at)) {
    chain.push(at);
    if (existsSync(join(at, '.git'))) break;
    if (dirname(at) === at) return [];
  }
  return (await Promise.all(chain.map(ignoreIn))).filter((r): r is IgnoreRule => r !== null);
}

/**
 * Says why a file or folder met in a walk is left out, or null to take it; `rel` is its path from
 * the folder walked (posix). Files and folders named directly are not asked about.
 */
export type SkipRule = (rel: string, isDir: boolean) => string | null;

/** What a walk left out by its SkipRule, each file with the reason (of its folder, for a folder's files). */
export interface Leaving {
  rule: SkipRule;
  left: { file: string; reason: string }[];
}

/**
 * Absolute paths of the documents under `paths` (sorted, each once). `skip` are folders never
 * entered (the database's). A named path that does not exist is an error.
 */
export function walkDocuments(paths: string[], skip: string[] = [], reports: WalkReports = {}): Promise<string[]> {
  return walkFiles(paths, isDocument, skip, reports);
}

/** A symlink whose target is outside the repository it sits in: reported, never read. */
export interface LeavingLink {
  path: string;
  target: string;
}

/** What an import report says about such a link. */
export const leavingLinkReason = (link: LeavingLink): string =>
  `a symlink to ${link.target}, outside the repository: links are not followed, and its target was not read`;

/** The repository `path` is in (the folder holding .git), resolved; else the folder itself (or a file's folder). */
async function repositoryOf(path: string, isDir: boolean): Promise<string> {
  const start = isDir ? path : dirname(path);
  for (let at = start; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return realpath(at);
    if (dirname(at) === at) return realpath(start);
  }
}

/** Where a symlink leads when that is outside `top` (resolved), else null (inside, or dangling). */
async function leavesRepository(link: string, top: string): Promise<string | null> {
  const target = await realpath(link).catch(() => null);
  return target === null || target === top || target.startsWith(top + sep) ? null : target;
}

/** What a walk reports besides the files it takes: those its rule left out, and links out of the repository. */
export interface WalkReports {
  leaving?: Leaving;
  links?: LeavingLink[];
}

/**
 * Absolute paths of the files under `paths` whose name `accept`s (files named directly are always
 * taken). Symlinks met in a walk are not followed; those that lead outside the repository, and
 * named files that do, are listed in `reports.links` (when given) rather than read.
 */
export async function walkFiles(
  paths: string[],
  accept: (name: string) => boolean,
  skip: string[] = [],
  { leaving, links }: WalkReports = {},
): Promise<string[]> {
  const skipped = new Set(skip.map((s) => resolve(s)));
  const found = new Set<string>();
  for (const given of paths) {
    const path = resolve(given);
    const stat = await lstat(path).catch(() => null);
    if (!stat) throw invalidInput(`${given}: no such file or folder`);
    if (!stat.isDirectory()) {
      const target = stat.isSymbolicLink() ? await leavesRepository(path, await repositoryOf(path, false)) : null;
      if (target === null) found.add(path);
      else links?.push({ path, target });
      continue;
    }
    const rules = await ancestorsRules(path);
    const why = leaving && ((p: string, isDir: boolean) => leaving.rule(relative(path, p).split(sep).join('/'), isDir));
    const linksOut = links && { list: links, top: await repositoryOf(path, true) };
    await walk(path, rules, skipped, found, accept, why && { why, left: leaving.left }, linksOut);
  }
  return [...found].sort();
}

async function walk(
  dir: string,
  inherited: IgnoreRule[],
  skipped: Set<string>,
  found: Set<string>,
  accept: (name: string) => boolean,
  leaving?: { why: (path: string, isDir: boolean) => string | null; left: Leaving['left']; reason?: string },
  links?: { list: LeavingLink[]; top: string },
): Promise<void> {
  const own = await ignoreIn(dir);
  const rules = own ? [...inherited, own] : inherited;
  const items = readdirSync(dir, { withFileTypes: true });
  for (const item of items.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, item.name);
    // Symbolic links are not followed: a link to a parent would walk forever, and one out of the
    // repository would read what the repository does not hold.
    if (item.isSymbolicLink()) {
      if (!links || ignored(rules, path, false)) continue;
      const target = await leavesRepository(path, links.top);
      if (target !== null && (accept(item.name) || (await lstat(target)).isDirectory())) links.list.push({ path, target });
    } else if (item.isDirectory()) {
      if (NEVER.has(item.name) || skipped.has(path) || (item.name.startsWith('.') && !HIDDEN_KEPT.has(item.name))) continue;
      if (ignored(rules, path, true)) continue;
      // A folder left out is still walked, so that the report names the documents it held.
      const reason = leaving && (leaving.reason ?? leaving.why(path, true) ?? undefined);
      await walk(path, rules, skipped, found, accept, leaving && { ...leaving, ...(reason ? { reason } : {}) }, links);
    } else if (item.isFile() && accept(item.name) && !ignored(rules, path, false)) {
      const reason = leaving && (leaving.reason ?? leaving.why(path, false));
      if (reason) leaving.left.push({ file: path, reason });
      else found.add(path);
    }
  }
}
