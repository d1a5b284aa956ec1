import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS } from '../../config/defaults.js';
import { MemcoreError } from '../../model/errors.js';

import { EXIT, UsageError, int, print, type Command } from '../command.js';
import { askPageLogin, startServerInBackground, waitForPageLogin } from '../serverProcess.js';

const uiCommand: Command = {
  options: { port: { type: 'string' } },
  args: [0, 0],
  uses: 'nothing',
  async run({ dir, cwd }, _args, v, io) {
    const asked = v.port !== undefined ? int('port', v.port as string)! : undefined;
    if (asked !== undefined && (asked < 0 || asked > 65_535)) throw new UsageError(`--port must be 0 to 65535, got ${asked}`);
    let login = await askPageLogin(dir);
    let started: number | undefined;
    let note = '';
    if (!login) {
      if (!existsSync(join(dir, 'meta.json')))
        throw new MemcoreError(`no memory at ${dir}; create it with \`memcore ingest <file>\` (or pass --db)`, 'NOT_FOUND');
      // The port `serve` takes, so that the README's `claude mcp add … :7077` reaches this server;
      // a free one when another server holds it (and --port was not asked for).
      started = startServerInBackground(dir, cwd, asked ?? DEFAULTS.httpPort);
      login = await waitForPageLogin(dir, started).catch((e: Error) => {
        if (asked !== undefined || !e.message.includes('EADDRINUSE')) throw e;
        note = `port ${DEFAULTS.httpPort} is taken (another memcore serve?), so this server took a free one`;
        started = startServerInBackground(dir, cwd, 0);
        return waitForPageLogin(dir, started);
      });
    } else if (v.port !== undefined) {
      io.err(`memcore: ${dir} is served already; --port is not used`);
    }
    if ('error' in login) throw new MemcoreError(login.error, 'STORE');
    const answer = {
      url: login.url,
      mcp: login.mcp ?? null,
      startedServer: started ?? null,
      log: started ? join(dir, 'server.log') : null,
    };
    print(io, v.json === true, answer, () =>
      [
        login.url,
        started ? `(started a server for ${dir}, pid ${started}; stop it with kill ${started}; log in ${answer.log})` : '',
        note,
        login.mcp ? `MCP over HTTP at ${login.mcp} (bearer token in ${join(dir, 'server.token')})` : '',
        'The address signs in one browser, once, within 10 minutes.',
      ]
        .filter(Boolean)
        .join('\n'),
    );
    return EXIT.ok;
  },
};

export default uiCommand;
