/**
 * npm run bench:embed [-- --texts 512 --entries 100,1000]
 * The offline model's rate, texts a second: short (~20 words) and typical (~150 words, two
 * chunks) texts, `--texts` a measurement; and entry-length texts (10 to 100 words, as a title and
 * a note: ~75 tokens on average), one call of each `--entries` count (a pull of 100 changed
 * entries, an import of 1,000). Each on the caller's thread and spread over worker threads
 * (localEmbedder's `workers`), with the process's CPU time a text and the load average.
 * Prints a table and writes bench/results/embed-rate.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localEmbedder } from '../src/index.js';
import { benchOptions } from './synthetic.js';

const USAGE = `usage: npm run bench:embed -- [--texts 512] [--entries 100,1000] [--out <name>]

  --texts <n>        short and typical texts a measurement, 0 (none) or 64 to 100000 (default 512)
  --entries <list>   entry-length calls, comma-separated counts of 1 to 100000, or 0 (default 100,1000)
  --out <name>       bench/results/<name>.json (default embed-rate)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;
const parseCounts = (v: string | undefined) => (v === '0' ? [] : (v ?? '').split(',').map(Number));
const values = benchOptions(
  USAGE,
  { texts: { type: 'string', default: '512' }, entries: { type: 'string', default: '100,1000' }, out: { type: 'string' } },
  (v) => {
    const texts = Number(v.texts);
    const entries = parseCounts(v.entries);
    return (
      Number.isInteger(texts) &&
      (texts === 0 || (texts >= 64 && texts <= 100_000)) &&
      entries.every((n) => Number.isInteger(n) && n >= 1 && n <= 100_000)
    );
  },
);
const count = Number(values.texts);
const WORDS =
  'token refresh rotation family revoke session cookie database migration column index lock retry payment idempotency key header version contract deprecation sunset error problem json logging trace'.split(
    ' ',
  );
const text = (i: number, words: number) =>
  Array.from({ length: words }, (_, j) => WORDS[(i * 7 + j * 13) % WORDS.length]).join(' ') + ` #${i}`;
/** An entry: a title line and a note, 10 to 100 words in all, lengths spread as in a real store. */
const entry = (i: number) => `Entry ${i}: ${text(i, 3)}\n${text(i * 3 + 1, 7 + ((i * 37) % 91))}`;

const runs: { label: string; texts: string[] }[] = [];
if (count > 0)
  runs.push(
    { label: 'short (~20 words)', texts: Array.from({ length: count }, (_, i) => text(i, 20)) },
    { label: 'typical (~150 words)', texts: Array.from({ length: count }, (_, i) => text(i, 150)) },
  );
for (const n of parseCounts(values.entries))
  runs.push({ label: `${n} entries (10-100 words)`, texts: Array.from({ length: n }, (_, i) => entry(i)) });

const rows: { texts: string; count: number; workers: number; seconds: number; perSecond: number; cpuMsPerText: number; load: number }[] =
  [];
for (const { label, texts } of runs) {
  for (const workers of [1, availableParallelism()]) {
    const embedder = localEmbedder({ workers });
    // Loads the model (and starts the workers) on other texts: a call of more than 64 uses the workers.
    await embedder.embed(Array.from({ length: 65 }, (_, i) => text(100_000 + i, 5)));
    const cpu = process.cpuUsage();
    const t = performance.now();
    await embedder.embed(texts);
    const seconds = (performance.now() - t) / 1000;
    const used = process.cpuUsage(cpu);
    rows.push({
      texts: label,
      count: texts.length,
      workers,
      seconds,
      perSecond: texts.length / seconds,
      cpuMsPerText: (used.user + used.system) / 1000 / texts.length,
      load: loadavg()[0]!,
    });
    const r = rows.at(-1)!;
    process.stderr.write(`${label}, ${workers} worker(s): ${r.perSecond.toFixed(1)} texts/s, ${r.seconds.toFixed(2)} s\n`);
  }
}
console.log(
  `\nthe offline model, ${availableParallelism()} cores\n\n| texts | count | workers | s | texts/s | CPU ms a text | load |\n|---|---|---|---|---|---|---|`,
);
for (const r of rows)
  console.log(
    `| ${r.texts} | ${r.count} | ${r.workers} | ${r.seconds.toFixed(2)} | ${r.perSecond.toFixed(1)} | ${r.cpuMsPerText.toFixed(1)} | ${r.load.toFixed(1)} |`,
  );
const dir = fileURLToPath(new URL('./results/', import.meta.url));
await mkdir(dir, { recursive: true });
await writeFile(
  join(dir, `${values.out ?? 'embed-rate'}.json`),
  JSON.stringify({ date: new Date().toISOString(), texts: count, cores: availableParallelism(), rows }, null, 2) + '\n',
);
process.exit(0);
