import { resolve } from 'node:path';

import { EXIT, print, type Command } from '../command.js';

const backupCommand: Command = {
  options: {},
  args: [1, 1],
  uses: 'reads',
  async run({ engine, cwd }, [dest], v, io) {
    const progress = io.isTTY && !v.json ? (done: number, total: number) => io.err(`copied ${done}/${total} files`) : undefined;
    const manifest = await (await engine()).backup(resolve(cwd, dest!), progress ? { onProgress: progress } : {});
    const bytes = manifest.files.reduce((a, f) => a + f.bytes, 0);
    print(
      io,
      v.json === true,
      manifest,
      () =>
        `backed up ${manifest.counts.entries} entries, ${manifest.counts.relations} relations (generation ${manifest.generation}, ${manifest.files.length} files, ${(bytes / 1e6).toFixed(1)} MB) to ${dest}`,
    );
    return EXIT.ok;
  },
};

export default backupCommand;
