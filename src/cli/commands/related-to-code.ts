import { codeSpan } from '../../format/formatBundle.js';

import { EXIT, INCLUDE_SECRET, int, listLine, print, sensitivityOf, type Command } from '../command.js';

const relatedToCodeCommand: Command = {
  options: { limit: { type: 'string' }, ...INCLUDE_SECRET },
  args: [2, 2],
  uses: 'reads',
  async run({ engine }, [file, query], v, io) {
    const hits = await (
      await engine()
    ).findRelatedToCode(file!, query!, {
      ...(v.limit !== undefined ? { limit: int('limit', v.limit as string) } : {}),
      ...sensitivityOf(v),
    });
    print(io, v.json === true, hits, () =>
      hits.length === 0
        ? `no entries reference ${file}`
        : hits
            .map((h, i) => `${listLine(i, h.similarity, h.entry)}\n      ${h.references.map((r) => codeSpan(r.code)).join(', ')}`)
            .join('\n'),
    );
    return EXIT.ok;
  },
};

export default relatedToCodeCommand;
