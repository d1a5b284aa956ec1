import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MemcoreError } from '../../model/errors.js';

import { EXIT, UsageError, int, print, type Command } from '../command.js';
import { askPageLogin, startServerInBackground, waitForPageLogin } from '../serverProcess.js';

const uiCommand: Command = {
  options: { port: { type: 'string' } },
  args: [0, 0],
  uses: 'nothing',
  async run({ dir, cwd }, _args, v, io) {
    const port = v.port !== undefined ? int('port', v.port as string)! : 0;
    if (port < 0 || port > 65_535) throw new UsageError(`--port must be 0 to 65535, got ${port}`);
    let login = await askPageLogin(dir);
    let started: number | undefined;
    if (!login) {
      if (!existsSync(join(dir, 'meta.json')))
        throw new MemcoreError(`no memory at ${dir}; create it with \`memcore ingest <file>\` (or pass --db)`, 'NOT_FOUND');
      started = startServerInBackground(dir, cwd, port);
      login = await waitForPageLogin(dir, started);
    } else if (v.port !== undefined) {
      io.err(`memcore: ${dir} is served already; --port is not used`);
    }
    if ('error' in login) throw new MemcoreError(login.error, 'STORE');
    const answer = { url: login.url, startedServer: started ?? null, log: started ? join(dir, 'server.log') : null };
    print(io, v.json === true, answer, () =>
      [
        login.url,
        started ? `(started a server for ${dir}, pid ${started}; stop it with kill ${started}; log in ${answer.log})` : '',
        'The address signs in one browser, once, within 10 minutes.',
      ]
        .filter(Boolean)
        .join('\n'),
    );
    return EXIT.ok;
  },
};

export default uiCommand;
