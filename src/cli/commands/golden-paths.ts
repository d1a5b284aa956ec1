import { formatGoldenPath } from '../../format/formatBundle.js';

import { EXIT, print, type Command } from '../command.js';

const goldenPathsCommand: Command = {
  options: {},
  args: [1, Infinity],
  uses: 'reads',
  async run({ engine }, concepts, v, io) {
    const paths = await (await engine()).findGoldenPaths(concepts);
    print(io, v.json === true, paths, () => (paths.length === 0 ? 'no golden paths match' : paths.map(formatGoldenPath).join('\n\n')));
    return EXIT.ok;
  },
};

export default goldenPathsCommand;
