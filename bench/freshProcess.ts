/**
 * One fresh process on a kept bench database: opens it and answers one buildTaskContext, as a
 * one-shot CLI call or a restarted agent server would. Prints JSON: the time to open, the time to
 * open and answer the first query, the process's CPU time to then, and its RSS after it (the engine's own memory,
 * without the bench's synthetic data). Run by bench/run.ts.
 *
 *   tsx bench/freshProcess.ts <db folder> <query vector file (float32)> <cores, comma-separated> [embedder id]
 */
import { readFile } from 'node:fs/promises';
import { openMemory } from '../src/index.js';
import { lookupEmbedder } from './synthetic.js';

const [dir, vectorFile, cores, embedderId] = process.argv.slice(2);
if (!dir || !vectorFile || !cores) {
  console.error('usage: tsx bench/freshProcess.ts <db folder> <query vector file> <cores>');
  process.exit(2);
}
const bytes = await readFile(vectorFile);
const vector = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
const started = performance.now();
const m = await openMemory({
  path: dir,
  embedder: {
    ...lookupEmbedder(new Map([['first query in a fresh process', vector]]), vector.length),
    ...(embedderId ? { id: embedderId } : {}),
  },
  env: {},
});
const openMs = performance.now() - started;
await m.buildTaskContext('first query in a fresh process', { cores: cores.split(','), maxEntries: 12 });
const firstQueryMs = performance.now() - started;
// CPU time of the whole process to the first answer (all threads): moves less with the machine's load than wall time.
const { user, system } = process.cpuUsage();
const cpuMs = (user + system) / 1000;
const rssMb = process.memoryUsage().rss / 1024 ** 2;
// How each structure held in memory was loaded: from its snapshot, caught up from the change log, or built.
const resident = Object.fromEntries(
  Object.entries((await m.stats()).resident).map(([key, load]) => [key, `${load.loadedFrom} ${Math.round(load.ms)} ms`]),
);
await m.close();
console.log(JSON.stringify({ openMs, firstQueryMs, cpuMs, rssMb, resident }));
