/**
 * The graph databases a folder's graph can be kept in, and how each is opened. Both are embedded
 * Cypher databases with the same Node API: Kuzu (archived in October 2025, npm `kuzu` frozen at
 * 0.11.3) and its maintained fork LadybugDB (`@ladybugdb/core`). Their files are not
 * interchangeable (each refuses the other's storage version), so a folder records the one it was
 * made with (meta.json `graph`) and `memcore migrate --graph` moves it to the other.
 */
import { MemcoreError } from '../../model/errors.js';
import { CypherGraphDriver, type NativeBinding } from './cypherGraphDriver.js';
import { ResidentGraph } from './residentGraph.js';

export const GRAPH_DRIVERS = ['ladybug', 'kuzu'] as const;
export type GraphDriverName = (typeof GRAPH_DRIVERS)[number];

interface DriverInfo {
  /** The graph file in the database folder. */
  file: string;
  /** The npm package of the binding. */
  pkg: string;
  label: string;
}

const DRIVERS: Record<GraphDriverName, DriverInfo> = {
  ladybug: { file: 'graph.lbug', pkg: '@ladybugdb/core', label: 'LadybugDB' },
  kuzu: { file: 'graph.kuzu', pkg: 'kuzu', label: 'Kuzu' },
};

export const isGraphDriver = (v: unknown): v is GraphDriverName =>
  typeof v === 'string' && (GRAPH_DRIVERS as readonly string[]).includes(v);

/** The graph file of a folder kept with `driver` (`graph.lbug`, `graph.kuzu`). */
export const graphFileName = (driver: GraphDriverName): string => DRIVERS[driver].file;
export const graphDriverLabel = (driver: GraphDriverName): string => DRIVERS[driver].label;

/** The driver a folder's meta records; folders made before it was recorded are Kuzu's. */
export const graphDriverOf = (meta: { graph?: GraphDriverName } | null | undefined): GraphDriverName => meta?.graph ?? 'kuzu';

const bindings = new Map<GraphDriverName, Promise<NativeBinding>>();

/**
 * The driver's native binding, imported on first use: Kuzu is an optional peer dependency that
 * only folders made with it need, so its absence is an error naming the package to install.
 */
export function graphBinding(driver: GraphDriverName): Promise<NativeBinding> {
  let binding = bindings.get(driver);
  if (!binding) {
    const { pkg, label } = DRIVERS[driver];
    binding = (driver === 'kuzu' ? import('kuzu') : import('@ladybugdb/core')).then(
      (mod) => (mod.default ?? mod) as unknown as NativeBinding,
      (e: unknown) => {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
          throw new MemcoreError(
            `this database folder's graph is a ${label} database, and the package ${pkg} that opens it is not installed: run \`npm install ${pkg}\`` +
              (driver === 'kuzu' ? ' (or, where it is installed, `memcore migrate --graph ladybug` to move the folder to LadybugDB)' : ''),
            'STORE',
          );
        throw new MemcoreError(`${pkg} (the ${label} graph database) failed to load: ${(e as Error).message}`, 'STORE');
      },
    );
    binding.catch(() => bindings.delete(driver)); // a later `npm install` is picked up by a retry
    bindings.set(driver, binding);
  }
  return binding;
}

/** The driver alone over a graph file (migrate, doctor). */
export async function openGraphDriver(driver: GraphDriverName, file: string): Promise<CypherGraphDriver> {
  return CypherGraphDriver.open(await graphBinding(driver), file, DRIVERS[driver].label);
}

/** The graph with the structures the query path holds in memory: what the stores open. */
export async function openGraphStore(driver: GraphDriverName, file: string): Promise<ResidentGraph> {
  return new ResidentGraph(await openGraphDriver(driver, file));
}
