import { codeSpan } from '../../format/formatBundle.js';

import { EXIT, INCLUDE_SECRET, UsageError, print, sensitivityOf, type Command } from '../command.js';

const codeRefsCommand: Command = {
  options: { file: { type: 'string' }, symbol: { type: 'string' }, codebase: { type: 'string' }, ...INCLUDE_SECRET },
  args: [0, 0],
  uses: 'reads',
  async run({ engine }, _args, v, io) {
    if (v.file === undefined && v.symbol === undefined && v.codebase === undefined)
      throw new UsageError('code-refs needs --file, --symbol or --codebase');
    const hits = await (
      await engine()
    ).findByCodeReference(
      {
        ...(typeof v.file === 'string' ? { filePath: v.file } : {}),
        ...(typeof v.symbol === 'string' ? { symbol: v.symbol } : {}),
        ...(typeof v.codebase === 'string' ? { codebaseId: v.codebase } : {}),
      },
      sensitivityOf(v),
    );
    print(io, v.json === true, hits, () =>
      hits.length === 0
        ? 'no entries reference that code'
        : hits
            .map(
              (h) => `${codeSpan(h.code)}  relevance ${h.relevance.toFixed(2)}  ← [${h.entry.entryType}] ${h.entry.title} (${h.entry.id})`,
            )
            .join('\n'),
    );
    return EXIT.ok;
  },
};

export default codeRefsCommand;
