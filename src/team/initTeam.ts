/**
 * `memcore init --team`: starts team memory in a git repository. Creates the tracked memory folder
 * (with a README, so that git has a file to track and a reader knows what the folder is), lists the
 * index (`.memcore/`) and the local folder of secrets in the repository's `.gitignore`, and says
 * what to commit. Running it again changes nothing.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { MemcoreError } from '../model/errors.js';
import { writeFileAtomic } from './teamFolder.js';
import { gitRoot, type TeamPaths } from './teamPaths.js';

/** What `initTeamFolder` found and did; paths are from the repository root, with forward slashes. */
export interface TeamInit extends TeamPaths {
  /** Files and folders it created (empty when everything was there). */
  created: string[];
  /** Lines it added to the repository's `.gitignore`. */
  ignored: string[];
  /** What to commit: the files it created or changed that git tracks. */
  toCommit: string[];
}

const README = `# Team memory

What agents and people learned about this code, one file per entry (\`<core>/<id>.md\`: YAML front
matter, then the content), written by \`memcore remember\` or the MCP \`remember\` tool, or by hand.
Commit entry files with the change they are about; they are reviewed in pull requests like code.
\`memcore diff\` lists the entries a branch added, changed or removed; \`memcore check\` validates
every file (for CI).

Secret entries go to \`memory.local/\`, which git ignores; the index (\`.memcore/\`) is rebuilt from
these files on every clone and never committed. See memcore's docs/team.md.
`;

/** A path from the repository root, with forward slashes; undefined when it is outside the repository. */
function inRepo(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? undefined : rel.split(sep).join('/');
}

/** Whether a `.gitignore` line already ignores the folder `rel` (as `rel`, `rel/`, `/rel` or `/rel/`). */
const ignoresFolder = (lines: string[], rel: string) => lines.some((l) => [rel, `${rel}/`, `/${rel}`, `/${rel}/`].includes(l.trim()));

/**
 * Sets up team memory for the database folder `dbDir`: the memory folder `memoryDir` (config
 * `memory.dir`; default `memory/` at the git root of `dbDir`), and the repository's `.gitignore`.
 */
export async function initTeamFolder(dbDir: string, memoryDir?: string): Promise<TeamInit> {
  const db = resolve(dbDir);
  const root = gitRoot(dirname(db)) ?? (memoryDir !== undefined ? gitRoot(memoryDir) : undefined);
  if (!root)
    throw new MemcoreError(`${dirname(db)} is not in a git repository: team memory lives in one (run git init, or clone it)`, 'NOT_FOUND');
  const dir = memoryDir !== undefined ? resolve(memoryDir) : join(root, 'memory');
  const localDir = `${dir}.local`;
  const dirRel = inRepo(root, dir);
  if (dirRel === undefined) throw new MemcoreError(`the memory folder ${dir} is not inside the repository ${root}`, 'INVALID_INPUT');
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new MemcoreError(`${dirRel} is a file: the memory folder must be a folder (move the file, or set memory.dir)`, 'INVALID_INPUT');

  const created: string[] = [];
  const toCommit: string[] = [];
  if (!existsSync(dir)) {
    await mkdir(dir, { recursive: true });
    created.push(`${dirRel}/`);
  }
  // Any file directly in the folder is left alone by memcore; a README gives git a file to track.
  const readme = join(dir, 'README.md');
  if (!existsSync(readme)) {
    await writeFileAtomic(readme, README);
    created.push(`${dirRel}/README.md`);
    toCommit.push(`${dirRel}/README.md`);
  }

  const gitignore = join(root, '.gitignore');
  const before = existsSync(gitignore) ? await readFile(gitignore, 'utf8') : '';
  const lines = before.split(/\r?\n/);
  const ignored = [inRepo(root, db), inRepo(root, localDir)]
    .filter((rel): rel is string => rel !== undefined && !ignoresFolder(lines, rel))
    .map((rel) => `${rel}/`);
  if (ignored.length > 0) {
    const head = before === '' || before.endsWith('\n') ? before : `${before}\n`;
    await writeFileAtomic(
      gitignore,
      `${head}# memcore: the index is rebuilt from ${dirRel}/; secret entries stay local\n${ignored.join('\n')}\n`,
    );
    if (before === '') created.push('.gitignore');
    toCommit.push('.gitignore');
  }
  return { root, dir, localDir, created, ignored, toCommit };
}
