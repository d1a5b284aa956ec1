import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { gitRoot } from '../../team/teamPaths.js';
import { teamPathsFor } from './diff.js';

import { EXIT, FILTERS, INCLUDE_SECRET, print, sensitivityOf, UsageError, type Command } from '../command.js';

const exportCommand: Command = {
  options: {
    format: { type: 'string' },
    core: FILTERS.core,
    ...INCLUDE_SECRET,
    out: { type: 'string' },
    'to-files': { type: 'boolean' },
  },
  args: [0, 1],
  uses: 'reads',
  async run({ engine, cwd, dir }, args, v, io) {
    if (v['to-files']) {
      const { exportToFiles } = await import('../../team/exportFiles.js');
      const target = args[0] !== undefined ? resolve(cwd, args[0]) : teamDirFor(dir, cwd);
      const r = await exportToFiles(await engine(), target, v.core ? { cores: v.core as string[] } : {});
      print(
        io,
        v.json === true,
        r,
        () => `${r.entries} entries, ${r.goldenPaths} golden paths → ${r.dir}${r.secret ? ` (${r.secret} secret → ${r.dir}.local)` : ''}`,
      );
      return EXIT.ok;
    }
    if (args.length > 0) throw new UsageError('export takes a folder only with --to-files');
    const format = (v.format as string | undefined) ?? (v.json ? 'json' : 'yaml');
    if (format !== 'yaml' && format !== 'jsonl' && format !== 'json')
      throw new UsageError(`--format must be yaml, jsonl or json, got "${format}"`);
    const memory = await engine();
    const doc = await memory.exportMemory({ ...(v.core ? { cores: v.core as string[] } : {}), ...sensitivityOf(v) });
    const { serializeMemoryDocument } = await import('../../ops/export.js');
    const text = serializeMemoryDocument(doc, format);
    if (typeof v.out === 'string') {
      await writeFile(resolve(cwd, v.out), text);
      io.err(
        `${doc.entries!.length} entries, ${doc.code_locations!.length} code locations, ${doc.golden_paths!.length} golden paths, ${doc.relations!.length} relations → ${v.out}`,
      );
    } else io.out(text.trimEnd());
    return EXIT.ok;
  },
};

/** Where `export --to-files` writes by default: the team folder, else memory/ at the git root (or the working directory). */
function teamDirFor(dir: string, cwd: string): string {
  return teamPathsFor(dir, cwd)?.dir ?? join(gitRoot(resolve(dir, '..')) ?? cwd, 'memory');
}

export default exportCommand;
