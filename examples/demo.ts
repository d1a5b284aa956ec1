/**
 * npm run demo — ingests the example memory of "orders-api" into a fresh database in a temp
 * folder, on the offline embedder, and prints the context an agent would get for three tasks.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBundle, openMemory } from '../src/index.js';

const memoryFile = fileURLToPath(new URL('./memory/orders-api.yaml', import.meta.url));
const tasks = [
  'Add a refresh-token endpoint that rotates tokens for the mobile app',
  'Add a NOT NULL currency column to the orders table without downtime',
  'Return a proper error when an order is not found in the v2 API',
];

const dir = await mkdtemp(join(tmpdir(), 'memcore-demo-'));
const memory = await openMemory({ path: dir });
try {
  const started = performance.now();
  const report = await memory.ingest(memoryFile);
  const stats = await memory.stats();
  console.log(
    `Ingested ${memoryFile}\n  ${report.entries.added} entries in ${Object.keys(stats.cores).length} cores ` +
      `(${Object.keys(stats.cores).join(', ')}), ${stats.codeLocations} code locations, ${stats.goldenPaths} golden paths, ` +
      `${Object.values(stats.relations).reduce((a, b) => a + b, 0)} relations, in ${Math.round(performance.now() - started)} ms ` +
      `(embedder ${stats.embedder.id}, offline)\n`,
  );
  for (const task of tasks) {
    const bundle = await memory.buildTaskContext(task, { maxEntries: 6 });
    console.log('═'.repeat(100));
    console.log(formatBundle(bundle));
    console.log();
  }
} finally {
  await memory.close();
  await rm(dir, { recursive: true, force: true });
}
