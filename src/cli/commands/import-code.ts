import { resolve } from 'node:path';

import { EXIT, UsageError, syncLine, type Command } from '../command.js';

const importCodeCommand: Command = {
  options: { codebase: { type: 'string' }, 'no-auto-link': { type: 'boolean', default: false } },
  args: [1, 1],
  uses: 'writes',
  async run({ engine, cwd }, [repo], values, io) {
    if (values.codebase === undefined) throw new UsageError('import-code needs --codebase <id> (the first part of the code location ids)');
    const memory = await engine();
    const progress = io.isTTY && !values.json ? (m: string) => io.err(`  ${m}`) : undefined;
    const r = await memory.importCode(resolve(cwd, repo!), {
      codebase: values.codebase as string,
      autoLink: values['no-auto-link'] !== true,
      ...(progress ? { onProgress: progress } : {}),
    });
    if (values.json) io.out(JSON.stringify(r, null, 2));
    else {
      io.out(
        `${r.files.read} files read, ${r.files.unchanged} unchanged, ${r.files.removed} gone: ${r.codeLocations} code locations written, ` +
          `${r.relations} links from entries that name them` +
          (r.sync && Object.values(r.sync.removed).some((n) => n > 0) ? `; ${syncLine(r.sync)}` : ''),
      );
      for (const f of r.skipped) io.err(`skipped ${f.file}: ${f.reason}`);
      for (const f of r.partial) io.err(`partly read ${f.file}: ${f.reason}`);
      for (const [language, n] of Object.entries(r.fileOnly)) io.err(`${n} ${language} file(s): file locations only (no extractor)`);
    }
    return EXIT.ok;
  },
};

export default importCodeCommand;
