import { resolve } from 'node:path';
import { MemcoreError } from '../../model/errors.js';
import { PROTOCOL, connectToOwner } from '../../server/controlSocket.js';

import { EXIT, print, type Command } from '../command.js';

const restoreCommand: Command = {
  options: { force: { type: 'boolean', default: false } },
  args: [1, 1],
  uses: 'nothing',
  async run({ dir, cwd }, [src], v, io) {
    const running = await connectToOwner(dir, { memcore: PROTOCOL, kind: 'status' });
    if (running) {
      running.socket.destroy();
      throw new MemcoreError(`${dir} is served by pid ${running.welcome.pid}; stop that server before restoring over its folder`, 'STORE');
    }
    const { restoreMemory } = await import('../../ops/restore.js');
    const manifest = await restoreMemory(resolve(cwd, src!), { path: dir, force: v.force === true });
    print(
      io,
      v.json === true,
      manifest,
      () =>
        `restored ${manifest.counts.entries} entries, ${manifest.counts.relations} relations (generation ${manifest.generation}, taken ${manifest.createdAt}) into ${dir}`,
    );
    return EXIT.ok;
  },
};

export default restoreCommand;
