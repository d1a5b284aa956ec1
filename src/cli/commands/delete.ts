import { EXIT, print, type Command } from '../command.js';

const deleteCommand: Command = {
  options: {},
  args: [1, Infinity],
  uses: 'reads',
  async run({ engine }, ids, v, io) {
    const result = await (await engine()).delete(ids);
    print(io, v.json === true, result, () => `deleted ${result.deleted} of ${ids.length} entr${ids.length === 1 ? 'y' : 'ies'}`);
    return result.deleted === 0 ? EXIT.notFound : EXIT.ok;
  },
};

export default deleteCommand;
