import { EXIT, type Command } from '../command.js';
import { VERSION, openMemory, startOwner } from '../serverProcess.js';

const mcpCommand: Command = {
  options: {},
  args: [0, 0],
  uses: 'nothing',
  async run({ dir, cwd, runCli }, _args, _v, io) {
    const { runStdioRelay } = await import('../../server/stdioRelay.js');
    await runStdioRelay(
      dir,
      async () => {
        const engine = await openMemory({ path: dir, cwd });
        try {
          return {
            engine,
            owner: await startOwner(engine, {
              runCli,
              version: VERSION,
              log: (m) => io.err(m),
            }),
          };
        } catch (e) {
          await engine.close();
          throw e;
        }
      },
      { stdin: process.stdin, stdout: process.stdout, log: (m) => io.err(m) },
    );
    return EXIT.ok;
  },
};

export default mcpCommand;
