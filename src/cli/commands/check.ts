import { resolve } from 'node:path';
import { resolveConfig } from '../../config/config.js';

import { EXIT, UsageError, type Command } from '../command.js';

const checkCommand: Command = {
  options: {
    repo: { type: 'string' },
    codebase: { type: 'string' },
    fix: { type: 'boolean', default: false },
    'fail-on': { type: 'string' },
  },
  args: [0, 0],
  uses: 'writes',
  async run({ engine, cwd }, _, values, io) {
    const failOn = values['fail-on'] as string | undefined;
    const worst: Record<string, string[]> = {
      moved: ['moved', 'drifted', 'orphaned'],
      drifted: ['drifted', 'orphaned'],
      orphaned: ['orphaned'],
    };
    if (failOn !== undefined && !worst[failOn]) throw new UsageError(`--fail-on must be moved, drifted or orphaned, got "${failOn}"`);
    const repo = resolve(cwd, (values.repo as string | undefined) ?? (resolveConfig({ cwd }).values.repo as string | undefined) ?? '.');
    const memory = await engine();
    const folder = await memory.checkMemoryFolder();
    const r = await memory.checkCode({
      repo,
      fix: values.fix === true,
      ...(values.codebase !== undefined ? { codebase: values.codebase as string } : {}),
    });
    if (values.json) io.out(JSON.stringify(folder ? { ...r, memoryFolder: folder } : r, null, 2));
    else {
      if (folder) {
        io.out(
          `${folder.files} memory files: ${folder.entries} entries, ${folder.goldenPaths} golden paths, ${folder.problems.length} skipped`,
        );
        for (const p of folder.problems) io.out(`${p.file}${p.line !== null ? `:${p.line}` : ''}: ${p.message}`);
      }
      io.out(
        `${r.locations} code locations against ${r.repo}: ${r.counts.fresh} fresh, ${r.counts.moved} moved, ${r.counts.drifted} drifted, ${r.counts.orphaned} orphaned` +
          (values.fix ? `; ${r.fixed} re-anchored` : ''),
      );
      for (const p of r.problems) {
        const at = `${p.code.filePath}${p.code.symbol ? `#${p.code.symbol}` : ''}${p.code.startLine !== null ? `:${p.code.startLine}-${p.code.endLine ?? p.code.startLine}` : ''}`;
        io.out(`${p.status.padEnd(8)} ${at}  ${p.detail}`);
        for (const e of p.entries) io.out(`         ← ${e.title} (${e.id})`);
        if (p.hiddenEntries > 0) io.out(`         ← ${p.hiddenEntries} secret ${p.hiddenEntries === 1 ? 'entry' : 'entries'}`);
        for (const g of p.goldenPaths) io.out(`         ← golden path ${g.name} (${g.id})`);
      }
    }
    const failing =
      failOn === undefined
        ? 0
        : r.problems.filter((p) => worst[failOn]!.includes(p.status) && !(values.fix && p.status === 'moved')).length;
    return failing > 0 || (folder?.problems.length ?? 0) > 0 ? EXIT.stale : EXIT.ok;
  },
};

export default checkCommand;
