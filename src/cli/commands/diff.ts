/**
 * `memcore diff [<range>]`: the memory a range of commits added, changed, superseded and removed,
 * entry by entry, for a pull request's description or CI. Reads git and the files; no database.
 */
import { MemcoreError } from '../../model/errors.js';
import { resolveConfig } from '../../config/config.js';
import { findTeamPaths, type TeamPaths } from '../../team/teamPaths.js';
import { EXIT, type Command } from '../main.js';

/** The team memory folder of the database folder `dir` (config memory.dir, else memory/ at the git root), if there is one. */
export function teamPathsFor(dir: string, cwd: string): TeamPaths | undefined {
  return findTeamPaths(dir, (resolveConfig({ cwd }).values.memory as { dir?: string } | undefined)?.dir, cwd);
}

/** teamPathsFor, or a NOT_FOUND error saying how to start one. */
export function teamPathsOf(dir: string, cwd: string): TeamPaths {
  const paths = teamPathsFor(dir, cwd);
  if (!paths)
    throw new MemcoreError(
      `no team memory folder for ${dir}: create memory/ at the root of its git repository (or set memory.dir); see docs/team.md`,
      'NOT_FOUND',
    );
  return paths;
}

export const diffCommand: Command = {
  options: {},
  args: [0, 1],
  uses: 'nothing',
  async run({ dir, cwd }, [range], v, io) {
    const { memoryDiff, formatMemoryDiff } = await import('../../team/memoryDiff.js');
    const d = await memoryDiff(teamPathsOf(dir, cwd), range);
    io.out(v.json ? JSON.stringify(d, null, 2) : formatMemoryDiff(d));
    return d.problems.length > 0 ? EXIT.invalid : EXIT.ok;
  },
};
