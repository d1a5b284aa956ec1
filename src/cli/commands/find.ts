import { describeReason } from '../../format/formatBundle.js';

import { CONTEXT_OPTIONS, EXIT, contextOptions, listLine, print, type Command } from '../command.js';

const findCommand: Command = {
  options: CONTEXT_OPTIONS,
  args: [1, 1],
  uses: 'reads',
  async run({ engine }, [query], v, io) {
    const entries = await (await engine()).findWithContext(query!, contextOptions(v));
    print(io, v.json === true, entries, () =>
      entries.length === 0
        ? 'no matching entries'
        : entries
            .map((e, i) => `${listLine(i, e.score, e.entry)}\n${e.why.map((r) => `      ${describeReason(r)}`).join('\n')}`)
            .join('\n'),
    );
    return EXIT.ok;
  },
};

export default findCommand;
