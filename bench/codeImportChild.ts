/**
 * One import-code in its own process, for codeImportSpeed.ts: `<repo> <db>`. Prints the timing
 * of importCode (wall and the process's CPU) and what it read, as JSON.
 */
import { openMemory } from '../src/index.js';
import { wordHashEmbedder } from './synthetic.js';

const [repo, db] = process.argv.slice(2) as [string, string];
const memory = await openMemory({ path: db, embedder: wordHashEmbedder(), env: {} });
try {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const r = await memory.importCode(repo, { codebase: 'speed', autoLink: false });
  const ms = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const note = `${r.files.read} read, ${r.files.unchanged} unchanged, ${r.files.removed} gone, ${r.codeLocations} locations, ${r.imports} imports`;
  process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, files: r.files, note }));
} finally {
  await memory.close();
}
