import { resolve } from 'node:path';
import { resolveConfig } from '../../config/config.js';

import { EXIT, syncLine, type Command } from '../command.js';

const ingestCommand: Command = {
  options: { 'auto-link': { type: 'boolean', default: false }, sync: { type: 'boolean', default: false }, repo: { type: 'string' } },
  args: [1, Infinity],
  uses: 'writes',
  async run({ engine, cwd }, files, values, io) {
    const memory = await engine();
    const reports = [];
    const configured = (values.repo as string | undefined) ?? (resolveConfig({ cwd }).values.repo as string | undefined);
    const repo = configured === undefined ? undefined : resolve(cwd, configured);
    for (const [i, file] of files.entries()) {
      if (io.isTTY && !values.json) io.err(`[${i + 1}/${files.length}] ingesting ${file} …`);
      const progress = io.isTTY && !values.json ? (m: string) => io.err(`  ${file}: ${m}`) : undefined;
      const r = await memory.ingest(cwd === process.cwd() ? file : resolve(cwd, file), {
        autoLink: values['auto-link'] === true,
        sync: values.sync === true,
        ...(progress ? { onProgress: progress } : {}),
        ...(repo ? { repo } : {}),
      });
      reports.push(r);
      if (!values.json) {
        io.out(
          `${file}: ${r.entries.added} added, ${r.entries.updated} updated, ${r.entries.unchanged} unchanged; ` +
            `${r.embedded} embedded; ${r.codeLocations} code locations, ${r.goldenPaths} golden paths, ${r.relations} relations` +
            (r.autoLinks > 0 ? ` (${r.autoLinks} found by auto-linking)` : '') +
            (r.sync ? `; ${syncLine(r.sync)}` : '') +
            (r.changed ? '' : ' (nothing changed)'),
        );
      }
    }
    if (values.json) io.out(JSON.stringify(reports, null, 2));
    return EXIT.ok;
  },
};

export default ingestCommand;
