import { MemcoreError } from '../../model/errors.js';
import type { DoctorReport } from '../../ops/doctor.js';

import { EXIT, print, type Command } from '../command.js';
import { teamPathsFor } from './diff.js';

const doctorCommand: Command = {
  options: { repair: { type: 'boolean', default: false } },
  args: [0, 0],
  uses: 'reads',
  async run({ engine, dir, served, cwd }, _args, v, io) {
    let report: DoctorReport;
    if (served) {
      // The server holds the folder: its open stores are checked, with what it holds in memory.
      if (v.repair) throw new MemcoreError(`${dir} is served by this server (pid ${process.pid}); stop it to repair the folder`, 'STORE');
      report = await (await engine()).checkHealth();
    } else {
      const { doctor } = await import('../../ops/doctor.js');
      const { configuredEmbedder } = await import('../../engine/openStores.js');
      report = await doctor(dir, { repair: v.repair === true, ...(v.repair === true ? { embedder: configuredEmbedder(cwd) } : {}) });
      const { folderFindings } = await import('../../team/teamFolder.js');
      const paths = teamPathsFor(dir, cwd);
      if (paths) report = await folderFindings(report, paths, dir);
    }
    print(io, v.json === true, report, () =>
      [
        ...report.findings.map(
          (f) =>
            `${(f.ok ? 'ok' : f.repaired ? 'fixed' : 'BAD').padEnd(5)} ${f.check}: ${f.message}${!f.ok && f.repair ? (f.repaired ? '' : `\n      --repair would ${f.repair}`) : ''}`,
        ),
        report.healthy
          ? 'healthy'
          : `needs attention${report.findings.some((f) => !f.ok && f.repair && !f.repaired) ? ' (run with --repair)' : ''}`,
      ].join('\n'),
    );
    return report.healthy ? EXIT.ok : EXIT.store;
  },
};

export default doctorCommand;
