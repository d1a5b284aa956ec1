/**
 * npm run bench:embed [-- --texts 512]
 * The offline model's rate, texts a second, for short (~20 words) and typical (~150 words)
 * texts, on the caller's thread and spread over worker threads (localEmbedder's `workers`).
 * Prints a table and writes bench/results/embed-rate.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localEmbedder } from '../src/index.js';
import { benchOptions } from './synthetic.js';

const USAGE = `usage: npm run bench:embed -- [--texts 512] [--out <name>]

  --texts <n>   texts per measurement, 64 to 100000 (default 512)
  --out <name>  bench/results/<name>.json (default embed-rate)

Exit codes: 0 done, 1 a run failed, 2 bad arguments.`;
const values = benchOptions(
  USAGE,
  { texts: { type: 'string', default: '512' }, out: { type: 'string' } },
  (v) => Number.isInteger(Number(v.texts)) && Number(v.texts) >= 64 && Number(v.texts) <= 100_000,
);
const count = Number(values.texts);
const WORDS =
  'token refresh rotation family revoke session cookie database migration column index lock retry payment idempotency key header version contract deprecation sunset error problem json logging trace'.split(
    ' ',
  );
const text = (i: number, words: number) =>
  Array.from({ length: words }, (_, j) => WORDS[(i * 7 + j * 13) % WORDS.length]).join(' ') + ` #${i}`;

const rows: { texts: string; workers: number; perSecond: number }[] = [];
for (const [label, words] of [
  ['short (~20 words)', 20],
  ['typical (~150 words)', 150],
] as const) {
  const texts = Array.from({ length: count }, (_, i) => text(i, words));
  for (const workers of [1, availableParallelism()]) {
    const embedder = localEmbedder({ workers });
    await embedder.embed(texts.slice(0, 128)); // loads the model (and starts the workers)
    const t = performance.now();
    await embedder.embed(texts);
    rows.push({ texts: label, workers, perSecond: count / ((performance.now() - t) / 1000) });
    process.stderr.write(`${label}, ${workers} worker(s): ${rows.at(-1)!.perSecond.toFixed(1)} texts/s\n`);
  }
}
console.log(
  `\nthe offline model, ${count} texts a measurement, ${availableParallelism()} cores\n\n| texts | workers | texts/s |\n|---|---|---|`,
);
for (const r of rows) console.log(`| ${r.texts} | ${r.workers} | ${r.perSecond.toFixed(1)} |`);
const dir = fileURLToPath(new URL('./results/', import.meta.url));
await mkdir(dir, { recursive: true });
await writeFile(
  join(dir, `${values.out ?? 'embed-rate'}.json`),
  JSON.stringify({ date: new Date().toISOString(), texts: count, cores: availableParallelism(), rows }, null, 2) + '\n',
);
process.exit(0);
