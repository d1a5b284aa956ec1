import { join } from 'node:path';
import { MemcoreError } from '../../model/errors.js';
import { PROTOCOL, connectToOwner } from '../../server/controlSocket.js';
import type { Owner } from '../../server/owner.js';

import { EXIT, UsageError, int, print, type Command } from '../command.js';
import { VERSION, openMemory, startOwner } from '../serverProcess.js';

const serveCommand: Command = {
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'allow-remote': { type: 'boolean', default: false },
    'no-http': { type: 'boolean', default: false },
  },
  args: [0, 0],
  uses: 'nothing',
  async run({ dir, cwd, runCli }, _args, v, io) {
    const running = await connectToOwner(dir, { memcore: PROTOCOL, kind: 'status' });
    if (running) {
      running.socket.destroy();
      throw new MemcoreError(
        `${dir} is already served by pid ${running.welcome.pid}${running.welcome.http ? ` at ${running.welcome.http}` : ''}`,
        'STORE',
      );
    }
    const port = v.port !== undefined ? int('port', v.port as string)! : undefined;
    if (port !== undefined && (port < 0 || port > 65_535)) throw new UsageError(`--port must be 0 to 65535, got ${port}`);
    const engine = await openMemory({ path: dir, cwd });
    let owner: Owner;
    try {
      owner = await startOwner(engine, {
        runCli,
        version: VERSION,
        log: (m) => io.err(m),
        ...(v['no-http']
          ? {}
          : {
              http: {
                ...(port !== undefined ? { port } : {}),
                ...(typeof v.host === 'string' ? { host: v.host } : {}),
                allowRemote: v['allow-remote'] === true,
              },
            }),
      });
    } catch (e) {
      await engine.close();
      throw e;
    }
    const page = owner.pageLogin?.();
    const ready = {
      pid: process.pid,
      db: dir,
      socket: owner.socket,
      ...(owner.url ? { url: owner.url, tokenFile: join(dir, 'server.token'), page } : {}),
    };
    print(io, v.json === true, ready, () =>
      [
        `memcore serving ${dir} (pid ${process.pid})`,
        `  control socket ${owner.socket}`,
        ...(owner.url
          ? [
              `  MCP over HTTP ${owner.url} (bearer token in ${ready.tokenFile})`,
              `  memory page ${page} (signs in once; memcore ui prints another)`,
            ]
          : []),
      ].join('\n'),
    );
    await new Promise<void>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
    io.err('memcore: stopping');
    await owner.close();
    await engine.close();
    return EXIT.ok;
  },
};

export default serveCommand;
