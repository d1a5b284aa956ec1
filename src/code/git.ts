/**
 * Git, as the real binary with arguments (never a shell string), in one repository. Errors say
 * what the user can do: not a repository, a revision that does not exist, git not installed.
 */
import { execFile } from 'node:child_process';
import { join, relative, sep } from 'node:path';
import { invalidInput, MemcoreError } from '../model/errors.js';

/** Output git may print for one call (a diff of a large change). */
const MAX_OUTPUT = 256 * 2 ** 20;

/** Runs `git <args>` in `repo` and returns its stdout; `input` is what a failure message calls the call. */
export function runGit(repo: string, args: readonly string[], what = `git ${args[0]}`): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-c', 'core.quotePath=false', ...args],
      { cwd: repo, maxBuffer: MAX_OUTPUT, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' } },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return reject(new MemcoreError(`${what}: git is not installed or not on PATH`, 'INVALID_INPUT'));
        if (code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
          return reject(invalidInput(`${what}: git printed more than ${MAX_OUTPUT / 2 ** 20} MiB; narrow the range`));
        const message = stderr.trim().split('\n')[0] ?? error.message;
        if (/not a git repository/i.test(message)) return reject(invalidInput(`${repo} is not a git repository (${what})`));
        if (/unknown revision|bad revision|ambiguous argument|invalid object name|bad object/i.test(message))
          return reject(invalidInput(`${what}: ${message.replace(/^fatal: /, '')}`));
        reject(invalidInput(`${what} failed: ${message.replace(/^fatal: /, '')}`));
      },
    );
  });
}

/** The repository's top folder, or an error when `dir` is not inside one. */
export async function repoRoot(dir: string): Promise<string> {
  return (await runGit(dir, ['rev-parse', '--show-toplevel'], 'finding the repository')).trim();
}

/** The commit HEAD points at, or null in a repository with no commit yet. */
export async function headRevision(repo: string): Promise<string | null> {
  try {
    return (await runGit(repo, ['rev-parse', '--verify', '--quiet', 'HEAD'])).trim() || null;
  } catch {
    return null;
  }
}

/**
 * The commit HEAD is at, and the files under `root` that differ from it (changed, staged or
 * untracked; paths relative to `root`): a fingerprint taken from a file not among them was taken
 * at that commit. Null outside a repository or before its first commit.
 */
export async function revisionOf(root: string, paths?: readonly string[]): Promise<{ revision: string; changed: Set<string> } | null> {
  let top: string;
  let revision: string | null;
  try {
    // One process for both where HEAD exists (each git process costs tens of milliseconds).
    [top, revision] = (await runGit(root, ['rev-parse', '--show-toplevel', '--verify', 'HEAD'])).trim().split('\n') as [string, string];
  } catch {
    try {
      top = await repoRoot(root);
    } catch {
      return null;
    }
    revision = await headRevision(top);
  }
  if (!revision) return null;
  // `paths` (relative to `root`): only they are asked about, and only they can be in `changed`.
  const pathspec = paths ? paths : ['.'];
  const status = await runGit(root, ['--literal-pathspecs', 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--', ...pathspec]);
  const fields = status.split('\0');
  // Porcelain paths are relative to the repository's top; -z keeps odd names whole.
  const changed = new Set<string>();
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    changed.add(
      relative(root, join(top, field.slice(3)))
        .split(sep)
        .join('/'),
    );
    if (field[0] === 'R' || field[0] === 'C') i++; // the rename's source follows
  }
  return { revision, changed };
}
