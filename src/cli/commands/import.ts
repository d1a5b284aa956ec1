import { resolve } from 'node:path';

import { EXIT, syncLine, type Command } from '../command.js';
import { LEAVING_OUT_FLAGS, leavingOutOptions, skippedLine } from '../importOptions.js';

const importCommand: Command = {
  options: {
    core: { type: 'string' },
    type: { type: 'string' },
    'no-conventions': { type: 'boolean', default: false },
    'no-auto-link': { type: 'boolean', default: false },
    ...LEAVING_OUT_FLAGS,
  },
  args: [1, Infinity],
  uses: 'writes',
  async run({ engine, cwd }, paths, values, io) {
    const memory = await engine();
    const progress = io.isTTY && !values.json ? (m: string) => io.err(`  ${m}`) : undefined;
    const r = await memory.importMarkdown(
      paths.map((p) => resolve(cwd, p)),
      {
        ...(values.core !== undefined ? { core: values.core as string } : {}),
        ...(values.type !== undefined ? { type: values.type as string } : {}),
        conventions: values['no-conventions'] !== true,
        autoLink: values['no-auto-link'] !== true,
        ...leavingOutOptions(values, cwd),
        ...(progress ? { onProgress: progress } : {}),
      },
    );
    if (values.json) io.out(JSON.stringify(r, null, 2));
    else {
      io.out(
        `${r.files.imported} documents: ${r.entries.added} entries added, ${r.entries.updated} updated, ${r.entries.unchanged} unchanged; ` +
          `${r.embedded} embedded; ${r.relations} relations (${r.autoLinks} found by auto-linking)` +
          (r.files.removed > 0 ? `; ${r.files.removed} documents gone` : '') +
          (r.sync && Object.values(r.sync.removed).some((n) => n > 0) ? `; ${syncLine(r.sync)}` : ''),
      );
      if (r.skipped.length > 0) io.out(skippedLine(r.skipped, cwd));
      for (const f of r.failed) io.err(`skipped ${f.error}`);
    }
    return r.failed.length > 0 ? EXIT.invalid : EXIT.ok;
  },
};

export default importCommand;
