import { MemcoreError } from '../../model/errors.js';

import { EXIT, int, print, type Command } from '../command.js';

const coreMemoryCommand: Command = {
  options: { 'max-tokens': { type: 'string' } },
  args: [1, 1],
  uses: 'reads',
  async run({ engine }, [core], v, io) {
    const memory = await (
      await engine()
    ).coreMemory(core!, v['max-tokens'] !== undefined ? { maxTokens: int('max-tokens', v['max-tokens'] as string)! } : {});
    if (memory.entries.length === 0) throw new MemcoreError(`core "${core}" holds no entries in effect`, 'NOT_FOUND');
    print(io, v.json === true, memory, () => memory.text);
    return EXIT.ok;
  },
};

export default coreMemoryCommand;
