/**
 * `memcore init --team`: starts team memory in the git repository of the database folder
 * (docs/team.md): the memory folder with a README, `.gitignore` lines for the index and the local
 * folder of secrets, and what to commit. Idempotent. Needs no database.
 */
import { existsSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { resolveConfig } from '../../config/config.js';
import { EXIT, UsageError, print, type Command } from '../command.js';

const initCommand: Command = {
  options: { team: { type: 'boolean', default: false } },
  args: [0, 0],
  uses: 'nothing',
  async run({ cwd, dir }, _args, v, io) {
    if (!v.team) throw new UsageError('init sets up team memory in git: memcore init --team (a database folder needs no init)');
    const { initTeamFolder } = await import('../../team/initTeam.js');
    const configured = (resolveConfig({ cwd }).values.memory as { dir?: string } | undefined)?.dir;
    const r = await initTeamFolder(dir, configured !== undefined ? resolve(cwd, configured) : undefined);
    const rel = (p: string) => relative(r.root, p).split(sep).join('/');
    const hasIndex = existsSync(join(dir, 'meta.json'));
    const index = dir.startsWith(r.root + sep) ? rel(dir) : dir;
    print(io, v.json === true, { ...r, memoryDir: rel(r.dir), localMemoryDir: rel(r.localDir) }, () =>
      [
        r.created.length + r.ignored.length === 0
          ? `team memory is set up already in ${rel(r.dir)}/ (nothing changed)`
          : `team memory in ${rel(r.dir)}/` +
            (r.created.length ? `; created ${r.created.join(', ')}` : '') +
            (r.ignored.length ? `; .gitignore now ignores ${r.ignored.join(', ')}` : ''),
        `  committed: ${rel(r.dir)}/<core>/<id>.md, one file per entry (memcore remember writes them)`,
        `  local: ${rel(r.localDir)}/ (secret entries) and the index ${index}/, never committed`,
        ...(hasIndex ? [`  this folder has memory already: memcore export --to-files writes it as files`] : []),
        ...(r.toCommit.length ? [`commit: git add ${r.toCommit.join(' ')} && git commit -m "memory: start team memory"`] : []),
      ].join('\n'),
    );
    return EXIT.ok;
  },
};

export default initCommand;
