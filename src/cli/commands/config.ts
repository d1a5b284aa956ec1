import { describeConfig, resolveConfig } from '../../config/config.js';

import { EXIT, print, type Command } from '../command.js';

const configCommand: Command = {
  options: {},
  args: [0, 0],
  uses: 'nothing',
  async run(_context, _args, v, io) {
    const resolved = resolveConfig({ options: typeof v.db === 'string' ? { db: v.db } : {} });
    const rows = describeConfig(resolved);
    print(io, v.json === true, { file: resolved.file, settings: rows }, () =>
      [
        `config file: ${resolved.file ?? '(none)'}`,
        ...rows.map(
          (r) =>
            `${r.key.padEnd(30)} ${r.value === null ? '-' : JSON.stringify(r.value)}  (${r.source === 'unset' ? `unset; ${r.env}` : r.source === 'env' ? `env ${r.env}` : r.source})`,
        ),
      ].join('\n'),
    );
    return EXIT.ok;
  },
};

export default configCommand;
