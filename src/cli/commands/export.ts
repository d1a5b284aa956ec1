import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { EXIT, FILTERS, INCLUDE_SECRET, UsageError, sensitivityOf, type Command } from '../command.js';

const exportCommand: Command = {
  options: { format: { type: 'string' }, core: FILTERS.core, ...INCLUDE_SECRET, out: { type: 'string' } },
  args: [0, 0],
  uses: 'reads',
  async run({ engine, cwd }, _args, v, io) {
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

export default exportCommand;
