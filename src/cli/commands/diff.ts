/**
 * `memcore diff [<range>]`: the memory a range of commits added, changed, superseded and removed,
 * entry by entry, for a pull request's description or CI. Reads git and the files; no database.
 */
import { MemcoreError } from '../../model/errors.js';
import { resolveConfig } from '../../config/config.js';
import { dirname, join } from 'node:path';
import { findTeamPaths, gitRoot, type TeamPaths } from '../../team/teamPaths.js';
import { EXIT, type Command } from '../command.js';

/** The team memory folder of the database folder `dir` (config memory.dir, else memory/ at the git root), if there is one. */
export function teamPathsFor(dir: string, cwd: string): TeamPaths | undefined {
  return findTeamPaths(dir, (resolveConfig({ cwd }).values.memory as { dir?: string } | undefined)?.dir, cwd);
}

export const diffCommand: Command = {
  options: {},
  args: [0, 1],
  uses: 'nothing',
  async run({ dir, cwd }, [range], v, io) {
    const { memoryDiff, formatMemoryDiff } = await import('../../team/memoryDiff.js');
    // The folder may be in one side of the range only (added or removed there): the default place is diffed all the same.
    const root = gitRoot(dirname(dir));
    const paths = teamPathsFor(dir, cwd) ?? (root ? { root, dir: join(root, 'memory'), localDir: join(root, 'memory.local') } : undefined);
    if (!paths) throw new MemcoreError(`${dir} is not in a git repository: memcore diff compares commits (docs/team.md)`, 'NOT_FOUND');
    const d = await memoryDiff(paths, range);
    io.out(v.json ? JSON.stringify(d, null, 2) : formatMemoryDiff(d));
    return d.problems.length > 0 ? EXIT.invalid : EXIT.ok;
  },
};
