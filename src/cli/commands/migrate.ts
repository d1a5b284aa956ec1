/**
 * `memcore migrate --graph ladybug|kuzu`: moves the folder's graph to the other graph database
 * (ops/migrateGraph.ts). Runs in this process, never through a server: the migration holds the
 * folder, so a served folder is refused until its server stops.
 */
import { MemcoreError } from '../../model/errors.js';
import { connectToOwner, PROTOCOL } from '../../server/controlSocket.js';
import { GRAPH_DRIVERS, isGraphDriver } from '../../store/graph/drivers.js';

/** A bad --graph value is a bad command line (exit 2), as Node's argument parser reports one. */
class GraphOptionError extends Error {
  readonly code = 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE';
}

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
}

const migrateCommand = {
  options: { graph: { type: 'string' as const } },
  args: [0, 0] as [number, number],
  uses: 'nothing' as const,
  async run({ dir }: { dir: string }, _args: string[], v: Record<string, unknown>, io: Io): Promise<number> {
    if (!isGraphDriver(v.graph))
      throw new GraphOptionError(
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
    return 0;
  },
};

export default migrateCommand;
