/**
 * `memcore migrate --graph ladybug|kuzu`: moves the folder's graph to the other graph database
 * (ops/migrateGraph.ts). Runs in this process, never through a server: the migration holds the
 * folder, so a served folder is refused until its server stops.
 */
import { MemcoreError } from '../../model/errors.js';
import { connectToOwner, PROTOCOL } from '../../server/controlSocket.js';
import { GRAPH_DRIVERS, isGraphDriver } from '../../store/graph/drivers.js';
import { EXIT, UsageError, type Command } from '../command.js';

const migrateCommand: Command = {
  options: { graph: { type: 'string' } },
  args: [0, 0],
  uses: 'nothing',
  async run({ dir }, _args, v, io) {
    if (!isGraphDriver(v.graph))
      throw new UsageError(
        `migrate needs --graph ${GRAPH_DRIVERS.join('|')}${v.graph === undefined ? '' : `, got "${String(v.graph)}"`}; see memcore migrate --help`,
      );
    const running = await connectToOwner(dir, { memcore: PROTOCOL, kind: 'status' });
    if (running) {
      running.socket.destroy();
      throw new MemcoreError(`${dir} is served by pid ${running.welcome.pid}; stop that server before migrating its folder`, 'STORE');
    }
    const { migrateGraph } = await import('../../ops/migrateGraph.js');
    const report = await migrateGraph(dir, v.graph, { onProgress: v.json ? undefined : (m) => io.err(m) });
    const relations = Object.values(report.counts.relations).reduce((a, b) => a + b, 0);
    io.out(
      v.json
        ? JSON.stringify(report, null, 2)
        : report.migrated
          ? `moved ${dir} from ${report.from} to ${report.to}: ${report.counts.entries} entries, ${relations} relations, ${report.counts.codeLocations} code locations, ${report.counts.goldenPaths} golden paths, all read back equal`
          : `${dir} is kept in ${report.to} already; nothing to do`,
    );
    return EXIT.ok;
  },
};

export default migrateCommand;
