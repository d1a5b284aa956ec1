/**
 * Where a team's memory lives, and whether a database folder is in team mode: cheap (no store,
 * no parser), so that the CLI can tell before it loads anything.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createHash } from 'node:crypto';

/** Where a team's memory lives. */
export interface TeamPaths {
  /** The repository's work tree. */
  root: string;
  /** The tracked folder (`memory/`, config `memory.dir`). */
  dir: string;
  /** The git-ignored folder of secret entries, beside it (`memory.local/`). */
  localDir: string;
}

/** The folder a git work tree starts at, from `from` upwards; undefined outside git. */
export function gitRoot(from: string): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The files git rewrites whenever it writes the work tree (a checkout, merge, pull or reset): the
 * index and HEAD of the repository at `root`, found through a worktree's `.git` file too.
 */
export function gitMarkers(root: string): string[] {
  const dotGit = join(root, '.git');
  let gitDir = dotGit;
  try {
    if (statSync(dotGit).isFile()) {
      const pointer = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
      if (!pointer) return [];
      gitDir = resolve(root, pointer.trim());
    }
  } catch {
    return [];
  }
  return [join(gitDir, 'index'), join(gitDir, 'HEAD')];
}

/**
 * Team mode is on when the memory folder exists: `configured` (config `memory.dir`, relative to
 * `cwd`), else `memory/` at the root of the git work tree that holds the database folder.
 */
export function findTeamPaths(dbDir: string, configured: string | undefined, cwd: string): TeamPaths | undefined {
  const root = gitRoot(dirname(resolve(dbDir)));
  const dir = configured !== undefined ? resolve(cwd, configured) : root && join(root, 'memory');
  if (dir === undefined || !existsSync(dir) || !statSync(dir).isDirectory()) return undefined;
  return { root: root ?? dirname(dir), dir, localDir: `${dir}.local` };
}

/** The file an entry of `core` is written to: the local folder for a secret, else the tracked one. */
export function entryFilePath(paths: TeamPaths, core: string, id: string, secret: boolean): string {
  return join(secret ? paths.localDir : paths.dir, core, `${fileNameOf(id)}.md`);
}

/** Characters a file name cannot hold on some system, written %XX; a leading dot too (hidden files). */
const UNSAFE_IN_NAME = /[/\\:*?"<>|%\u0000-\u001f\u007f]|^\./gu;
/** File names stay under common limits (255 bytes), with room for `.md` and a temp suffix. */
const MAX_NAME_BYTES = 200;

/**
 * The file name of an id (without `.md`): the id itself, with unsafe characters as %XX; an id
 * too long for a file name keeps a prefix and a hash. The id in the front matter is the truth: the
 * file name must be the one this function gives for it (check says so otherwise).
 */
export function fileNameOf(id: string): string {
  const name = id.replace(UNSAFE_IN_NAME, (c) =>
    [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
  if (Buffer.byteLength(name, 'utf8') <= MAX_NAME_BYTES) return name;
  let prefix = '';
  for (const ch of name) {
    if (Buffer.byteLength(prefix + ch, 'utf8') > MAX_NAME_BYTES - 18) break;
    prefix += ch;
  }
  return `${prefix}~${createHash('sha256').update(id).digest('hex').slice(0, 16)}`;
}
