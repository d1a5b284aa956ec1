import { formatGoldenPath } from '../../format/formatBundle.js';

import { EXIT, print, type Command } from '../command.js';

const goldenPathCommand: Command = {
  options: {},
  args: [1, 1],
  uses: 'reads',
  async run({ engine }, [id], v, io) {
    const path = await (await engine()).getGoldenPath(id!);
    if (!path) {
      io.err(`memcore: no golden path with id "${id}"`);
      if (v.json) io.out(JSON.stringify({ error: { code: 'NOT_FOUND', message: `no golden path with id "${id}"` } }));
      return EXIT.notFound;
    }
    print(io, v.json === true, path, () => formatGoldenPath(path));
    return EXIT.ok;
  },
};

export default goldenPathCommand;
